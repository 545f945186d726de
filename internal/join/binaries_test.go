package join

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/binaries"
	"github.com/kubewin/kubewin/internal/binaries/binariestest"
)

// --binaries official:… takes the node's binaries from the release layouts (served on loopback
// over https), checked against their published checksums, and installs them through the same
// SHA256SUMS path as a mirror; a second join finds the mirror it built and downloads nothing.
func TestResolveOfficial(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		os   string
		want []string
	}{
		{"linux", []string{"cni/bridge", "cni/host-local", "cni/loopback", "cni/portmap", "containerd", "containerd-shim-runc-v2", "kubelet"}},
		{"windows", []string{"cni/host-local.exe", "cni/win-bridge.exe", "cni/win-overlay.exe", "containerd-shim-runhcs-v1.exe", "containerd.exe",
			"kube-log-runner.exe", "kube-proxy.exe", "kubelet.exe"}},
	} {
		t.Run(tc.os, func(t *testing.T) {
			s := binariestest.Serve(t)
			j := &joiner{host: memHost{os: tc.os}}
			cache := filepath.Join(t.TempDir(), "data", "binaries")
			b := Binaries{Source: s.Spec(), Client: s.Client()}
			bin, sums, err := b.resolve(ctx, tc.os, "amd64", cache, j.installs)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for n := range sums {
				names = append(names, n)
			}
			sort.Strings(names)
			if fmt.Sprint(names) != fmt.Sprint(tc.want) {
				t.Errorf("mirror lists %v, want %v", names, tc.want)
			}
			if filepath.Dir(bin.Source) != cache {
				t.Errorf("mirror at %s, not below %s", bin.Source, cache)
			}
			dst := t.TempDir()
			for _, n := range names {
				ch, err := bin.install(ctx, sums, n, filepath.Join(dst, n))
				if err != nil || ch.Action != ActionCreated {
					t.Fatalf("install %s: %+v %v", n, ch, err)
				}
				// The installed program is the one published for this platform and version.
				version := map[bool]string{true: binariestest.CNI}[strings.HasPrefix(n, "cni/")]
				switch {
				case strings.HasPrefix(n, "containerd"):
					version = binariestest.Containerd
				case strings.HasPrefix(n, "kube"):
					version = binariestest.Kubernetes
				}
				got, _ := os.ReadFile(filepath.Join(dst, n))
				if want := binariestest.Content(strings.TrimPrefix(n, "cni/"), tc.os, version); string(got) != want {
					t.Errorf("%s = %q, want %q", n, got, want)
				}
			}
			kubelet := "/k8s/v1.33.1/bin/" + tc.os + "/amd64/kubelet" + map[bool]string{true: ".exe"}[tc.os == "windows"]
			if s.Requests(kubelet) != 1 {
				t.Errorf("kubelet fetched %d times", s.Requests(kubelet))
			}
			again, sums2, err := b.resolve(ctx, tc.os, "amd64", cache, j.installs)
			if err != nil || again.Source != bin.Source || fmt.Sprint(sums2) != fmt.Sprint(sums) || s.Requests(kubelet) != 1 {
				t.Errorf("second join: %s %v, kubelet fetched %d times", again.Source, err, s.Requests(kubelet))
			}
			// Another version builds another mirror and drops the old one.
			if tc.os == "linux" {
				for _, suffix := range []string{"", ".sha256", ".sha512"} {
					s.Set("/k8s/v1.33.2/bin/linux/amd64/kubelet"+suffix, s.Get("/k8s/v1.33.1/bin/linux/amd64/kubelet"+suffix))
				}
				b2 := Binaries{Source: strings.Replace(s.Spec(), "v1.33.1", "v1.33.2", 1), Client: s.Client()}
				newer, _, err := b2.resolve(ctx, "linux", "amd64", cache, j.installs)
				if err != nil || newer.Source == bin.Source {
					t.Fatalf("v1.33.2: %s %v", newer.Source, err)
				}
				if ents, _ := os.ReadDir(cache); len(ents) != 1 || ents[0].Name() != filepath.Base(newer.Source) {
					t.Errorf("cache holds %v", ents)
				}
			}
		})
	}
}

// What the user named wrongly is bad input (exit 2); a download that does not match its
// published checksum is a failure; neither leaves a mirror behind for the next join to trust.
func TestResolveOfficialRefuses(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		spec     func(s *binariestest.Server) string
		badInput bool
		err      string
	}{
		{"malformed", func(s *binariestest.Server) string { return "official:kubernetes=v1.33.1" }, true, "containerd=VERSION is required"},
		{"version not published", func(s *binariestest.Server) string { return strings.Replace(s.Spec(), "cni=v1.7.1", "cni=v1.7.9", 1) }, true, "404"},
		{"checksum mismatch", func(s *binariestest.Server) string {
			s.Set("/k8s/v1.33.1/bin/linux/amd64/kubelet", []byte("not the published kubelet"))
			return s.Spec()
		}, false, "kubelet has sha256"},
		{"missing checksum file", func(s *binariestest.Server) string {
			s.Set("/containerd/v2.1.4/containerd-2.1.4-linux-amd64.tar.gz.sha256sum", nil)
			return s.Spec()
		}, true, ".sha256sum: 404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := binariestest.Serve(t)
			j := &joiner{host: memHost{os: "linux"}}
			cache := filepath.Join(t.TempDir(), "binaries")
			_, _, err := Binaries{Source: tc.spec(s), Client: s.Client()}.resolve(ctx, "linux", "amd64", cache, j.installs)
			if err == nil || !strings.Contains(err.Error(), tc.err) || errors.Is(err, ErrBadInput) != tc.badInput {
				t.Fatalf("error %v, want %q (bad input %v)", err, tc.err, tc.badInput)
			}
			if ents, _ := os.ReadDir(cache); len(ents) != 0 {
				t.Errorf("left %v in the cache", ents)
			}
		})
	}
	// A mirror Source is read as before.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, binaries.SumsFile), []byte(strings.Repeat("a", 64)+"  kubelet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, sums, err := Binaries{Source: dir}.resolve(ctx, "linux", "amd64", t.TempDir(), nil)
	if err != nil || bin.Source != dir || sums["kubelet"] != strings.Repeat("a", 64) {
		t.Errorf("mirror directory: %+v %v %v", bin, sums, err)
	}
	if _, _, err := (Binaries{Source: t.TempDir()}).resolve(ctx, "linux", "amd64", t.TempDir(), nil); !errors.Is(err, ErrBadInput) {
		t.Errorf("mirror without SHA256SUMS: %v", err)
	}
}

// A mirror kubewin mirror wrote is what --binaries reads, as a directory and served over https.
func TestBuiltMirrorIsABinariesSource(t *testing.T) {
	ctx := context.Background()
	s := binariestest.Serve(t)
	dir := filepath.Join(t.TempDir(), "mirror")
	o, err := binaries.ParseOfficial(s.Spec())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := binaries.Build(ctx, binaries.Request{Official: o, OSes: []string{"linux", "windows"}, Arch: "amd64", Client: s.Client()}, dir); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	for _, src := range []Binaries{{Source: dir}, {Source: srv.URL + "/", Client: srv.Client()}} {
		for _, nodeOS := range []string{"linux", "windows"} {
			j := &joiner{host: memHost{os: nodeOS}}
			bin, sums, err := src.resolve(ctx, nodeOS, "amd64", t.TempDir(), j.installs)
			if err != nil {
				t.Fatalf("%s: %v", src.Source, err)
			}
			dst := t.TempDir()
			n := 0
			for name := range sums {
				if !j.installs(name) {
					continue
				}
				if _, err := bin.install(ctx, sums, name, filepath.Join(dst, name)); err != nil {
					t.Errorf("%s %s: %v", src.Source, name, err)
				}
				n++
			}
			if want := map[string]int{"linux": 7, "windows": 8}[nodeOS]; n != want {
				t.Errorf("%s: %d %s files installed, want %d", src.Source, n, nodeOS, want)
			}
		}
	}
}
