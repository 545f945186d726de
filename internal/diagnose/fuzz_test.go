package diagnose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// seedLines adds every example and near-miss line of the catalogue testdata to a fuzz corpus.
func seedLines(f *testing.F) {
	for _, dir := range []string{"signatures", "nearmiss"} {
		files, _ := filepath.Glob(filepath.Join(logsDir, dir, "*.log"))
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			for _, l := range bytes.Split(b, []byte("\n")) {
				f.Add(l)
			}
		}
	}
	f.Add([]byte("I0101 00:00:00.0 1 a:1]"))
	f.Add([]byte("E1399 25:61:61.1234567890 x y]"))
	f.Add([]byte(`time="bad" level=`))
	f.Add([]byte("  Warning  R  1m (x"))
}

func FuzzParseLine(f *testing.F) {
	seedLines(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		l := ParseLine(b)
		if l.Repeat < 1 {
			t.Fatalf("Repeat %d < 1", l.Repeat)
		}
		if k, ok := ParseKlog(b); ok {
			if bytes.IndexByte([]byte("IWEF"), k.Severity) < 0 || !k.Time.NoYear {
				t.Fatalf("klog parse %+v", k)
			}
			if len(k.Msg) > len(b) {
				t.Fatalf("message longer than line")
			}
		}
		if n := klogHeaderLen(b); n < 0 || n > len(b) {
			t.Fatalf("klogHeaderLen %d out of range", n)
		}
		_ = normalizeKey(l.Msg)
	})
}

func FuzzDecodeQuotedStrings(f *testing.F) {
	seedLines(f)
	f.Add([]byte(`"\xce\u07b7\xa8\xbd"`))
	f.Add([]byte(`x "\`))
	f.Add([]byte(`"\U0010ffff\377\x"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s := DecodeQuotedStrings(b); !utf8.ValidString(s) {
			t.Fatalf("DecodeQuotedStrings(%q) = %q: invalid UTF-8", b, s)
		}
		if s := DecodeText(b); !utf8.ValidString(s) {
			t.Fatalf("DecodeText(%q) invalid UTF-8", b)
		}
		// %q followed by UnquoteGoBytes gives the bytes back, whatever they are.
		q := fmt.Sprintf("%q", b)
		got, complete := UnquoteGoBytes(q[1 : len(q)-1])
		if !complete || !bytes.Equal(got, b) {
			t.Fatalf("round trip of %q: %q (complete %v)", b, got, complete)
		}
		_, _ = UnquoteGoBytes(string(b))
	})
}

// FuzzScan feeds arbitrary bytes (any encoding, archives, garbage) through the whole pipeline.
func FuzzScan(f *testing.F) {
	seedLines(f)
	f.Add([]byte{0xFF, 0xFE, 'E', 0, '0', 0})
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0})
	f.Add([]byte("PK\x03\x04garbage"))
	f.Add([]byte("Event[0]:\n  Log Name: x\n  Date: 2024-01-01T00:00:00Z\n  Level: Error\n  Description:\nboom\n"))
	cat, err := Compile(DefaultSignatures())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = SniffEncoding(b)
		r := Scan(context.Background(), cat, []string{"-"}, bytes.NewReader(b), Options{Workers: 2, ChunkSize: 4096})
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(out) {
			t.Fatalf("report is not valid UTF-8")
		}
		for _, fd := range r.Findings {
			if !utf8.ValidString(fd.Sample) {
				t.Fatalf("sample %q", fd.Sample)
			}
		}
	})
}
