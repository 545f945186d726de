package binaries

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseOfficial(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"official:kubernetes=v1.33.1,containerd=2.1.4,cni=1.7.1", "official:kubernetes=v1.33.1,containerd=v2.1.4,cni=v1.7.1", ""},
		{"official:cni=v1.7.1,kubernetes=1.34.0-rc.1,containerd=v2.1.4,containerd-release-url=https://mirror.example/containerd/",
			"official:kubernetes=v1.34.0-rc.1,containerd=v2.1.4,cni=v1.7.1,containerd-release-url=https://mirror.example/containerd", ""},
		// The default host written out is the same value as left out.
		{"official:kubernetes=v1.33.1,containerd=2.1.4,cni=1.7.1,kubernetes-release-url=https://dl.k8s.io/release", "official:kubernetes=v1.33.1,containerd=v2.1.4,cni=v1.7.1", ""},
		{"official:kubernetes=v1.33.1,containerd=2.1.4", "", "cni=VERSION is required"},
		{"official:kubernetes=v1.33.1,containerd=2.1.4,cni=1.7.1,cni=1.7.2", "", "cni given twice"},
		{"official:kubernetes=v1.33,containerd=2.1.4,cni=1.7.1", "", `kubernetes version "1.33"`},
		{"official:kubernetes=latest,containerd=2.1.4,cni=1.7.1", "", `kubernetes version "latest"`},
		{"official:kubelet=v1.33.1,containerd=2.1.4,cni=1.7.1", "", `"kubelet=v1.33.1": expected key=value`},
		{"official:kubernetes=v1.33.1,containerd=2.1.4,cni=1.7.1,cni-release-url=http://mirror/cni", "", "expected an https:// base URL"},
		{"official:", "", "expected key=value"},
		{"https://mirror/x", "", "expected official:"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			o, err := ParseOfficial(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.String() != tc.want {
				t.Errorf("String() = %s, want %s", o, tc.want)
			}
			if again, err := ParseOfficial(o.String()); err != nil || again != o {
				t.Errorf("round trip: %+v %v", again, err)
			}
		})
	}
}

func TestParseDigestFile(t *testing.T) {
	h64, h128 := strings.Repeat("ab", 32), strings.Repeat("cd", 64)
	for _, tc := range []struct {
		name, data string
		hexLen     int
		want, err  string
	}{
		{"kubernetes bare digest", h64, 64, h64, ""},
		{"kubernetes sha512", h128, 128, h128, ""},
		{"sha256sum line", h64 + "  containerd-2.1.4-linux-amd64.tar.gz\n", 64, h64, ""},
		{"binary mode and a path", strings.ToUpper(h64) + " *dist/containerd-2.1.4-linux-amd64.tar.gz", 64, h64, ""},
		{"another file", h64 + "  containerd-2.1.3-linux-amd64.tar.gz\n", 64, "", `is the checksum of "containerd-2.1.3-linux-amd64.tar.gz"`},
		{"sha256 where sha512 is expected", h64, 128, "", "expected 128 hexadecimal digits"},
		{"two lines", h64 + "  a\n" + h64 + "  b\n", 64, "", "expected one checksum line, found 2"},
		{"empty", "\n", 64, "", "found 0"},
		{"html error page", "<html>Not Found</html>", 64, "", "expected 64 hexadecimal digits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDigestFile("x.sha", []byte(tc.data), tc.hexLen, "containerd-2.1.4-linux-amd64.tar.gz")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("%q %v, want %q", got, err, tc.want)
			}
		})
	}
}

func FuzzParseDigestFile(f *testing.F) {
	f.Add([]byte(strings.Repeat("ab", 32)), 64)
	f.Add([]byte(strings.Repeat("cd", 64)+"  cni-plugins-linux-amd64-v1.7.1.tgz\n"), 128)
	f.Add([]byte(strings.Repeat("ab", 32)+" *a/b\\cni-plugins-linux-amd64-v1.7.1.tgz"), 64)
	f.Fuzz(func(t *testing.T, data []byte, hexLen int) {
		if hexLen != 64 && hexLen != 128 {
			hexLen = 64
		}
		sum, err := ParseDigestFile("f", data, hexLen, "cni-plugins-linux-amd64-v1.7.1.tgz")
		if err != nil {
			return
		}
		if len(sum) != hexLen || strings.ToLower(sum) != sum || strings.Trim(sum, "0123456789abcdef") != "" {
			t.Fatalf("accepted %q -> %q", data, sum)
		}
		if !bytes.Contains(bytes.ToLower(data), []byte(sum)) {
			t.Fatalf("digest %q is not in %q", sum, data)
		}
	})
}

func FuzzParseSums(f *testing.F) {
	f.Add([]byte(strings.Repeat("a", 64) + "  kubelet\n" + strings.Repeat("b", 64) + " *cni/bridge\n"))
	f.Add([]byte("# x\n\n*"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sums, err := ParseSums("SHA256SUMS", data)
		if err != nil {
			return
		}
		for name, sum := range sums {
			if name == "" || len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
				t.Fatalf("accepted %q -> %q", name, sum)
			}
		}
	})
}

func FuzzParseOfficial(f *testing.F) {
	f.Add("official:kubernetes=v1.33.1,containerd=2.1.4,cni=1.7.1")
	f.Add("official:kubernetes=v1.33.1,containerd=2.1.4,cni=1.7.1,cni-release-url=https://m/x")
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOfficial(s)
		if err != nil {
			return
		}
		// What is accepted has a canonical form that reads back the same.
		again, err := ParseOfficial(o.String())
		if err != nil || again != o {
			t.Fatalf("%q -> %q -> %+v %v", s, o.String(), again, err)
		}
		for _, v := range []string{o.Kubernetes, o.Containerd, o.CNI} {
			if !versionRE.MatchString(v) {
				t.Fatalf("%q: version %q", s, v)
			}
		}
	})
}

func FuzzCleanEntry(f *testing.F) {
	for _, s := range []string{"./bridge", "bin/containerd", "../x", "a/../../b", "/etc/passwd", `C:\x`, "./"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		clean, err := cleanEntry(name)
		if err != nil {
			return
		}
		// Whatever is accepted stays inside the directory it is unpacked in.
		root := filepath.Join(os.TempDir(), "root")
		p := filepath.Join(root, filepath.FromSlash(clean))
		if p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Fatalf("%q -> %q escapes to %s", name, clean, p)
		}
	})
}

// Zip archives go through the same checks as tar archives.
func TestUnpackZip(t *testing.T) {
	mk := func(names ...string) string {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, n := range names {
			w, err := zw.Create(n)
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte("program " + n))
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "a.zip")
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pick := func(e string) (string, bool) { return "cni/" + filepath.Base(e), strings.HasSuffix(e, ".exe") }
	out := t.TempDir()
	u := &unpacker{dir: out, pick: pick, limits: DefaultLimits()}
	if err := u.unpackZip(mk("bin/", "bin/host-local.exe", "README.md")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "cni", "host-local.exe")); err != nil || string(b) != "program bin/host-local.exe" || len(u.out) != 1 {
		t.Errorf("%q %v %+v", b, err, u.out)
	}
	u = &unpacker{dir: t.TempDir(), pick: pick, limits: DefaultLimits()}
	if err := u.unpackZip(mk("bin/host-local.exe", "../../x.exe")); err == nil || !strings.Contains(err.Error(), "leaves the archive") {
		t.Errorf("zip with ../: %v", err)
	}
	u = &unpacker{dir: t.TempDir(), pick: pick, limits: DefaultLimits()}
	if err := u.unpackZip(mk("a/x.exe", "b/x.exe")); err == nil || !strings.Contains(err.Error(), "comes from two entries") {
		t.Errorf("two entries for one file: %v", err)
	}
}
