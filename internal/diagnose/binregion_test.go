package diagnose

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanTextWithBinaryRegions (issue 11, item 20): a log whose first 4 KiB are NULs (a
// preallocated file) or that has a NUL run in the middle (a crash) is scanned around the runs;
// the skipped bytes are counted; lines on either side of a run are not glued together.
func TestScanTextWithBinaryRegions(t *testing.T) {
	dir := t.TempDir()
	pre := append(bytes.Repeat([]byte{0}, 4096), lines(lineNet)...)
	mustWrite(t, filepath.Join(dir, "prealloc.log"), pre)
	// Text cut mid-line by the crash, NULs, then the restarted process's lines.
	crash := append([]byte("I1124 10:00:00.000000 1 server.go:1] half a li"), bytes.Repeat([]byte{0}, 9000)...)
	crash = append(crash, lines(lineLB)...)
	mustWrite(t, filepath.Join(dir, "crash.log"), crash)
	// Binary by format: still refused, with the reason.
	mustWrite(t, filepath.Join(dir, "kubelet.exe"), append([]byte("MZ\x90\x00\x03\x00\x00\x00"), bytes.Repeat([]byte{0}, 100)...))

	r := scanDir(t, Options{}, filepath.Join(dir, "prealloc.log"), filepath.Join(dir, "crash.log"), filepath.Join(dir, "kubelet.exe"))
	ids := findingIDs(r)
	for _, id := range []string{"KUBEPROXY-KUBE-NETWORK-UNSET", "KUBEPROXY-LB-PORT-EXISTS"} {
		if _, ok := ids[id]; !ok {
			t.Errorf("%s not found around the binary runs; findings %v", id, ids)
		}
	}
	skipped := map[string]int64{}
	for _, in := range r.Inputs {
		skipped[filepath.Base(in.Name)] = in.BinarySkipped
	}
	if skipped["prealloc.log"] != 4096 || skipped["crash.log"] != 9000 {
		t.Errorf("binary bytes skipped = %v, want prealloc.log 4096, crash.log 9000", skipped)
	}
	if len(r.Errors) != 1 || !strings.HasSuffix(r.Errors[0].Input, "kubelet.exe") || !strings.Contains(r.Errors[0].Err, "binary") {
		t.Errorf("errors = %+v, want only kubelet.exe refused as binary", r.Errors)
	}
	var out bytes.Buffer
	if err := WriteText(&out, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "crash.log: skipped 9000 bytes of binary data") {
		t.Errorf("text output does not say what was skipped:\n%s", out.String())
	}
}

func TestBinaryRegionFilterKeepsLinesApart(t *testing.T) {
	f := newBinaryRegionFilter(strings.NewReader("abc\x00\x00\x00def\n\x00ghi\n"))
	var out bytes.Buffer
	if _, err := out.ReadFrom(f); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "abc\ndef\nghi\n" || f.Skipped != 4 {
		t.Errorf("got %q skipped %d, want %q skipped 4", got, f.Skipped, "abc\ndef\nghi\n")
	}
}

func FuzzBinaryRegionFilter(f *testing.F) {
	f.Add([]byte("abc\x00def"), 3)
	f.Add([]byte("\x00\x00\x00"), 1)
	f.Fuzz(func(t *testing.T, in []byte, chunk int) {
		chunk = 1 + abs(chunk)%64
		fl := newBinaryRegionFilter(bytes.NewReader(in))
		var out bytes.Buffer
		buf := make([]byte, chunk)
		for {
			n, err := fl.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				break
			}
		}
		for _, c := range out.Bytes() {
			if droppable(c) {
				t.Fatalf("droppable byte %#x in output %q", c, out.Bytes())
			}
		}
		kept := 0
		for _, c := range in {
			if !droppable(c) {
				kept++
			}
		}
		if int64(len(in)-kept) != fl.Skipped || out.Len() < kept {
			t.Fatalf("in %d bytes, kept %d, skipped %d, out %d", len(in), kept, fl.Skipped, out.Len())
		}
	})
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}
