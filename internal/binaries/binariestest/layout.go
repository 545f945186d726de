// Package binariestest serves made-up releases in the official layouts of Kubernetes,
// containerd and the CNI plugins (package binaries names the upstream sources of each) from a
// local https server, for tests that must not reach the internet.
package binariestest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Versions of the made-up releases.
const (
	Kubernetes = "v1.33.1"
	Containerd = "2.1.4"
	CNI        = "v1.7.1"
)

// Entry is one entry of a made-up archive.
type Entry struct {
	Name     string
	Data     string
	Typeflag byte // tar.TypeReg when zero
	Linkname string
}

// TarGz makes a gzip-compressed tar archive (same entries, same bytes).
func TarGz(t testing.TB, entries []Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Typeflag: e.Typeflag, Linkname: e.Linkname, Mode: 0o755, Size: int64(len(e.Data))}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write([]byte(e.Data)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Content is what a made-up program holds: its name, platform and version, so a test can tell
// which one it got.
func Content(name, goos, version string) string {
	return fmt.Sprintf("%s %s/amd64 %s\n", name, goos, version)
}

func sum256(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }
func sum512(b []byte) string { h := sha512.Sum512(b); return hex.EncodeToString(h[:]) }

// Server serves Files (URL path → body; absent is 404) and counts the requests per path.
// Change Files with Set and SetArchive once it serves.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	Files    map[string][]byte
	requests map[string]int
}

// Set replaces the body at p (nil removes it).
func (s *Server) Set(p string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b == nil {
		delete(s.Files, p)
		return
	}
	s.Files[p] = b
}

// Get is the body at p (nil when absent).
func (s *Server) Get(p string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Files[p]
}

// Requests is how often p was asked for.
func (s *Server) Requests(p string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[p]
}

// Layout returns the files of the made-up releases for linux and windows on amd64, below the
// paths /k8s, /containerd and /cni (the hosts' base URLs are Server.URL + those):
//
//	/k8s/v1.33.1/bin/<os>/amd64/<kubelet|kube-proxy|kube-log-runner>[.exe](.sha256|.sha512)  bare digests
//	/containerd/v2.1.4/containerd-2.1.4-<os>-amd64.tar.gz(.sha256sum)  bin/<program>
//	/cni/v1.7.1/cni-plugins-<os>-amd64-v1.7.1.tgz(.sha256|.sha512)     ./<plugin>, README.md, LICENSE
func Layout(t testing.TB) map[string][]byte {
	files := map[string][]byte{}
	for _, goos := range []string{"linux", "windows"} {
		x := ""
		if goos == "windows" {
			x = ".exe"
		}
		for _, b := range []string{"kubelet", "kube-proxy", "kube-log-runner"} {
			p := fmt.Sprintf("/k8s/%s/bin/%s/amd64/%s%s", Kubernetes, goos, b, x)
			data := []byte(Content(b+x, goos, Kubernetes))
			files[p] = data
			// kubernetes/release WriteChecksums: the digest alone, no newline.
			files[p+".sha256"] = []byte(sum256(data))
			files[p+".sha512"] = []byte(sum512(data))
		}
		progs := []string{"containerd", "containerd-shim-runc-v2", "ctr"}
		if goos == "windows" {
			progs = []string{"containerd.exe", "containerd-shim-runhcs-v1.exe", "ctr.exe"}
		}
		entries := []Entry{{Name: "bin/", Typeflag: tar.TypeDir}}
		for _, p := range progs {
			entries = append(entries, Entry{Name: "bin/" + p, Data: Content(p, goos, Containerd)})
		}
		SetArchive(files, fmt.Sprintf("/containerd/v%s/containerd-%s-%s-amd64.tar.gz", Containerd, Containerd, goos), TarGz(t, entries), ".sha256sum")
		plugins := []string{"bridge", "host-local", "loopback", "portmap"}
		if goos == "windows" {
			plugins = []string{"win-bridge.exe", "win-overlay.exe", "host-local.exe"}
		}
		entries = []Entry{{Name: "./", Typeflag: tar.TypeDir}}
		for _, p := range plugins {
			entries = append(entries, Entry{Name: "./" + p, Data: Content(p, goos, CNI)})
		}
		entries = append(entries, Entry{Name: "./README.md", Data: "readme"}, Entry{Name: "./LICENSE", Data: "license"})
		SetArchive(files, fmt.Sprintf("/cni/%s/cni-plugins-%s-amd64-%s.tgz", CNI, goos, CNI), TarGz(t, entries), ".sha256", ".sha512")
	}
	return files
}

// SetArchive puts an archive at p with sha256sum/sha512sum-format checksum files (suffixes
// ".sha256sum" or ".sha256", ".sha512") naming its base name.
func SetArchive(files map[string][]byte, p string, data []byte, suffixes ...string) {
	files[p] = data
	base := p[strings.LastIndex(p, "/")+1:]
	for _, s := range suffixes {
		sum := sum256(data)
		if s == ".sha512" {
			sum = sum512(data)
		}
		files[p+s] = []byte(sum + "  " + base + "\n")
	}
}

// SetArchive is the package's SetArchive on the served files.
func (s *Server) SetArchive(p string, data []byte, suffixes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	SetArchive(s.Files, p, data, suffixes...)
}

// Serve starts an https server on loopback with Layout's files; it is closed with the test.
func Serve(t testing.TB) *Server {
	s := &Server{Files: Layout(t), requests: map[string]int{}}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests[r.URL.Path]++
		b, ok := s.Files[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

// Spec is the join --binaries value naming the made-up releases on s.
func (s *Server) Spec() string {
	return fmt.Sprintf("official:kubernetes=%s,containerd=%s,cni=%s,kubernetes-release-url=%s/k8s,containerd-release-url=%s/containerd,cni-release-url=%s/cni",
		Kubernetes, Containerd, CNI, s.URL, s.URL, s.URL)
}
