package join

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/binaries"
	"github.com/kubewin/kubewin/internal/bootstrap"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/testenv"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Discovery against a real kube-apiserver: the token's signature, the CA pin, and the errors a
// user must be able to tell apart.
func TestDiscover(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	c := cp.Clientset(t)
	ctx := context.Background()
	tok, err := bootstrap.NewToken(cp.Host, cp.Config.CAData, bootstrap.TokenOptions{Token: "abcdef.0123456789abcdef"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bootstrap.Apply(ctx, c, tok); err != nil {
		t.Fatal(err)
	}
	trust, err := Discover(ctx, cp.Host, tok.Token, tok.CACertHash, 5*time.Second)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	if string(trust.CAPEM) != string(cp.Config.CAData) || trust.Server != cp.Host {
		t.Errorf("trust = %s %q", trust.Server, trust.CAPEM)
	}
	for _, tc := range []struct {
		name, token, hash string
		want              error
		text              string
	}{
		{"wrong pin", tok.Token, "sha256:" + strings.Repeat("0", 64), ErrCAPinMismatch, "the cluster's is " + tok.CACertHash},
		{"unknown token", "zzzzzz.0123456789abcdef", tok.CACertHash, ErrTokenNotSigned, "token zzzzzz"},
		{"wrong secret", "abcdef.zzzzzzzzzzzzzzzz", tok.CACertHash, ErrBadSignature, "abcdef"},
		{"malformed token", "abcdef", tok.CACertHash, nil, "--token: expected"},
		{"malformed pin", tok.Token, "md5:00", nil, "--ca-cert-hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Discover(ctx, cp.Host, tc.token, tc.hash, time.Second)
			if err == nil {
				t.Fatal("accepted")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Errorf("error %q does not say %q", err, tc.text)
			}
		})
	}
	if _, err := Discover(ctx, "http://"+strings.TrimPrefix(cp.Host, "https://"), tok.Token, tok.CACertHash, time.Second); err == nil ||
		!strings.Contains(err.Error(), "expected https://") {
		t.Errorf("plain http server: %v", err)
	}
}

func TestReadSums(t *testing.T) {
	sum := strings.Repeat("a", 64)
	for _, tc := range []struct {
		name, data, err string
		want            map[string]string
	}{
		{"sha256sum output", sum + "  kubelet\n" + sum + " *cni/bridge\n\n# comment\n", "", map[string]string{"kubelet": sum, "cni/bridge": sum}},
		{"short sum", "abc  kubelet\n", "SHA256SUMS:1: expected", nil},
		{"no name", sum + "\n", "SHA256SUMS:1: expected", nil},
		{"not hex", strings.Repeat("z", 64) + "  kubelet\n", "SHA256SUMS:1: expected", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := Binaries{Source: dir}.readSums(context.Background())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s: %q", k, got[k])
				}
			}
		})
	}
	if _, err := (Binaries{Source: "http://127.0.0.1:1/"}).readSums(context.Background()); err == nil || !strings.Contains(err.Error(), "plain http") {
		t.Errorf("plain http mirror: %v", err)
	}
	if _, err := (Binaries{Source: t.TempDir()}).readSums(context.Background()); err == nil || !strings.Contains(err.Error(), "SHA256SUMS") {
		t.Errorf("missing SHA256SUMS: %v", err)
	}
}

// install refuses a binary whose checksum differs, and leaves an identical one alone; from a
// directory and from an http mirror (on loopback).
func TestInstallChecksBinaries(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "kubelet"), []byte("kubelet v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	good, _ := binaries.FileSHA256(filepath.Join(src, "kubelet"))
	mirror := httptest.NewTLSServer(http.FileServer(http.Dir(src)))
	defer mirror.Close()
	ctx := context.Background()
	for name, b := range map[string]Binaries{"directory": {Source: src}, "mirror": {Source: mirror.URL + "/", Client: mirror.Client()}} {
		t.Run(name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "bin", "kubelet")
			if _, err := b.install(ctx, map[string]string{"kubelet": strings.Repeat("0", 64)}, "kubelet", dst); err == nil ||
				!strings.Contains(err.Error(), "SHA256SUMS says") {
				t.Errorf("mismatch: %v", err)
			}
			if entries, _ := os.ReadDir(filepath.Dir(dst)); len(entries) != 0 {
				t.Errorf("a binary with a wrong checksum left %d files", len(entries))
			}
			if _, err := b.install(ctx, map[string]string{}, "kubelet", dst); err == nil || !strings.Contains(err.Error(), "does not list kubelet") {
				t.Errorf("unlisted: %v", err)
			}
			for i, want := range []string{ActionCreated, ActionUnchanged} {
				ch, err := b.install(ctx, map[string]string{"kubelet": good}, "kubelet", dst)
				if err != nil || ch.Action != want {
					t.Errorf("install #%d: %+v %v, want %s", i+1, ch, err, want)
				}
			}
			if st, err := os.Stat(dst); err != nil || st.Mode().Perm() != 0o755 {
				t.Errorf("installed %v %v", st, err)
			}
		})
	}
	if _, err := (Binaries{Source: mirror.URL, Client: mirror.Client()}).install(ctx, map[string]string{"nope": good}, "nope", filepath.Join(t.TempDir(), "x")); err == nil ||
		!strings.Contains(err.Error(), "404") {
		t.Errorf("missing file on the mirror: %v", err)
	}
}

func TestWriteFilesIdempotent(t *testing.T) {
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "a", "b.conf"), Data: []byte("x"), Mode: 0o600}
	for i, want := range []string{ActionCreated, ActionUnchanged} {
		ch, err := writeFiles([]File{f})
		if err != nil || ch[0].Action != want {
			t.Fatalf("write #%d: %+v %v, want %s", i+1, ch, err, want)
		}
	}
	f.Mode = 0o644
	if ch, err := writeFiles([]File{f}); err != nil || ch[0].Action != ActionUpdated {
		t.Errorf("mode change: %+v %v", ch, err)
	}
	if st, _ := os.Stat(f.Path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
}

// memHost is an in-memory host for the planning logic only (no files, no services).
type memHost struct {
	os    string
	facts Facts
}

func (h memHost) OS() string                                     { return h.os }
func (h memHost) Facts(context.Context, string) (Facts, error)   { return h.facts, nil }
func (h memHost) InstallService(context.Context) (Change, error) { return Change{}, nil }
func (h memHost) Kernel() LinuxSystem                            { return LinuxSystem{} }
func (h memHost) EnsureRoutes(_ context.Context, rs []plan.Route) ([]Change, error) {
	var out []Change
	for _, r := range rs {
		out = append(out, Change{What: "route " + r.Destination, Action: ActionUnchanged})
	}
	return out, nil
}

func TestReplanAddsThisNode(t *testing.T) {
	spec, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	facts := Facts{Hostname: "linux-new", NIC: NIC{Name: "eth1", IP: "100.100.126.250", Prefix: 23}}
	j := &joiner{host: memHost{os: "linux", facts: facts}, facts: facts, node: "linux-new", spec: spec}
	if err := j.replan(""); err != nil {
		t.Fatal(err)
	}
	if j.nodePlan.Name != "linux-new" || j.nodePlan.NodeIP != facts.NIC.IP || j.nodePlan.Linux == nil {
		t.Errorf("node plan %+v", j.nodePlan)
	}
	if err := j.replan("10.160.200.0/24"); err != nil || j.nodePlan.PodCIDR != "10.160.200.0/24" {
		t.Errorf("with the allocated pod CIDR: %v %q", err, j.nodePlan.PodCIDR)
	}
	// A name the description lists as a Windows node cannot join from Linux.
	for _, n := range spec.Spec.Nodes {
		if n.OS == v1alpha1.OSWindows {
			j.node = n.Name
			break
		}
	}
	if err := j.replan(""); !errors.Is(err, ErrBadInput) {
		t.Errorf("Windows node joining from Linux: %v", err)
	}
}

func TestRunRejectsUnknownSkip(t *testing.T) {
	for _, skip := range []string{"nope", "discovery"} {
		_, err := Run(context.Background(), Options{Skip: []string{skip}}, memHost{os: "linux"}, render.LinuxPathsUnder(t.TempDir()))
		if !errors.Is(err, ErrBadInput) {
			t.Errorf("--skip %s: %v", skip, err)
		}
	}
	for _, o := range []Options{
		{Server: "https://10.0.0.1:6443", Token: "BADTOKEN", CACertHash: "sha256:" + strings.Repeat("a", 64)},
		{Server: "https://10.0.0.1:6443", Token: "abcdef.0123456789abcdef", CACertHash: "sha256:zz"},
		{Server: "10.0.0.1:6443", Token: "abcdef.0123456789abcdef", CACertHash: "sha256:" + strings.Repeat("a", 64)},
		{Server: "https://10.0.0.1:6443", Token: "abcdef.0123456789abcdef", CACertHash: "sha256:" + strings.Repeat("a", 64), NodeName: "My_Node"},
	} {
		if _, err := Run(context.Background(), o, memHost{os: "linux", facts: Facts{Hostname: "n1"}}, render.LinuxPathsUnder(t.TempDir())); !errors.Is(err, ErrBadInput) {
			t.Errorf("%+v: %v, want bad input", o, err)
		}
	}
	var err error
	_, err = Run(context.Background(), Options{}, memHost{os: "linux"}, render.LinuxPathsUnder(t.TempDir()))
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "--server, --token and --ca-cert-hash") {
		t.Errorf("missing flags: %v", err)
	}
}
