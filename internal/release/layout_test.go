package release

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseSums(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("B", 64)
	for _, tc := range []struct {
		name, in string
		want     map[string]string
		err      string
	}{
		{"text and binary mode", a + "  kubewin-linux-amd64\n" + b + " *kubewin-windows-amd64.exe\n", map[string]string{"kubewin-linux-amd64": a, "kubewin-windows-amd64.exe": strings.ToLower(b)}, ""},
		{"CRLF and blank lines", "\r\n" + a + "  x y\r\n\n", map[string]string{"x y": a}, ""},
		{"empty", "", map[string]string{}, ""},
		{"short digest", "abc  x\n", nil, "line 1"},
		{"not hex", strings.Repeat("g", 64) + "  x\n", nil, "not a hex SHA-256"},
		{"one space", a + " x\n", nil, "want \"<sha256 hex>  <name>\""},
		{"no name", a + "  \n", nil, "line 1"},
		{"duplicate", a + "  x\n" + b + "  x\n", nil, "listed twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSums([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseSums = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func FuzzParseSums(f *testing.F) {
	f.Add([]byte(strings.Repeat("0", 64) + "  kubewin-linux-amd64\n"))
	f.Add([]byte(strings.Repeat("f", 64) + " *a\r\n\n" + strings.Repeat("1", 64) + "  b c\n"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sums, err := ParseSums(data)
		if err != nil {
			return
		}
		// What parses formats back to lines that parse to the same map (names without line
		// breaks, which a line-based format cannot hold, are all ParseSums yields).
		again, err := ParseSums(FormatSums(sums))
		if err != nil || !reflect.DeepEqual(again, sums) {
			t.Fatalf("round trip: %v, %v != %v", err, again, sums)
		}
	})
}

func TestWriteSums(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"b.zip": "b", "a.tar.gz": "a", SumsFile: "old"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteSums(dir); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, SumsFile))
	// sha256sum(1) of "a" and "b"
	want := "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb  a.tar.gz\n" +
		"3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d  b.zip\n"
	if string(got) != want {
		t.Errorf("SHA256SUMS =\n%s\nwant\n%s", got, want)
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		t                 Target
		bin, archive, exe string
	}{
		{Target{"linux", "amd64"}, "kubewin-linux-amd64", "kubewin-v1.0.0-linux-amd64.tar.gz", "kubewin"},
		{Target{"windows", "arm64"}, "kubewin-windows-arm64.exe", "kubewin-v1.0.0-windows-arm64.zip", "kubewin.exe"},
	} {
		if BinaryName(tc.t) != tc.bin || ArchiveName("v1.0.0", tc.t) != tc.archive || ExeName(tc.t) != tc.exe {
			t.Errorf("%s: %s %s %s", tc.t, BinaryName(tc.t), ArchiveName("v1.0.0", tc.t), ExeName(tc.t))
		}
	}
	for v, ok := range map[string]bool{"v0.1.0": true, "v1.2.3-rc.1+meta": true, "1.2.3": false, "v1.2": false, "v01.2.3": false} {
		if err := ValidVersion(v); (err == nil) != ok {
			t.Errorf("ValidVersion(%q) = %v", v, err)
		}
	}
}
