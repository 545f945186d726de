package rollout

import (
	"strings"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/rollout/api"
)

func TestParseProbe(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Probe
		err  string
	}{
		{in: "ready:daemonset/kube-system/kube-proxy", want: Probe{Kind: "ready", Workload: "daemonset", Namespace: "kube-system", Name: "kube-proxy", Min: 1}},
		{in: "ready:Deployment/shop/web,min=0", want: Probe{Kind: "ready", Workload: "deployment", Namespace: "shop", Name: "web", Min: 0}},
		{in: "http:http://10.0.0.5:8080/healthz", want: Probe{Kind: "http", URL: "http://10.0.0.5:8080/healthz", Timeout: 10 * time.Second}},
		{in: "http:https://web.shop.svc/a,b?x=1,timeout=3s,image=registry.local/curl:8", want: Probe{Kind: "http", URL: "https://web.shop.svc/a,b?x=1", Timeout: 3 * time.Second, Image: "registry.local/curl:8"}},
		{in: "ready:pod/ns/x", err: "is not deployment"},
		{in: "ready:deployment/ns", err: "want ready:KIND/NAMESPACE/NAME"},
		{in: "ready:deployment/Bad_NS/x", err: "namespace"},
		{in: "ready:deployment/ns/x,min=-1", err: "is not a count"},
		{in: "ready:deployment/ns/x,max=2", err: "unknown option"},
		{in: "http:ftp://x/y", err: "not an http(s) URL"},
		{in: "http:http://x/,timeout=1h", err: "up to 10m"},
		{in: "tcp:x:80", err: "unknown kind"},
		{in: "web", err: "want ready:"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseProbe(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Raw = tc.in
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func FuzzParseProbe(f *testing.F) {
	for _, s := range []string{"ready:daemonset/a/b", "ready:deployment/a/b,min=3", "http:http://x/,timeout=2s", "http:https://a,b,image=i", "x", ":", "http:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParseProbe(in)
		if err != nil {
			return
		}
		// What parses is complete: a kind, and what that kind needs.
		switch p.Kind {
		case "ready":
			if p.Namespace == "" || p.Name == "" || p.Min < 0 {
				t.Fatalf("%q → %+v", in, p)
			}
		case "http":
			if p.URL == "" || p.Timeout <= 0 {
				t.Fatalf("%q → %+v", in, p)
			}
		default:
			t.Fatalf("%q → kind %q", in, p.Kind)
		}
		again, err := ParseProbe(p.Raw)
		if err != nil || again != p {
			t.Fatalf("not stable: %+v vs %+v (%v)", p, again, err)
		}
	})
}

func TestParseRevision(t *testing.T) {
	good := `
name: v1-37-2
kubelet: v1.37.2
kubeProxy: v1.37.2
binaries:
  source: https://mirror.example/kubewin/v1.37.2
  checksums:
    kubelet.exe: ` + sha + `
osUpdates:
- kb: KB5040000
  url: https://mirror.example/kb5040000.msu
  sha256: ` + sha + `
`
	r, err := ParseRevision([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "v1-37-2" || r.Binaries.Checksums["kubelet.exe"] != sha || r.OSUpdates[0].KB != "KB5040000" {
		t.Errorf("%+v", r)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"unknown field", good + "kubeletFlags: x\n", "unknown field"},
		{"duplicate field", good + "name: again\n", "already set"},
		{"invalid", "name: x\n", "changes nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseRevision([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func FuzzParseRevision(f *testing.F) {
	s, _ := api.EncodeRevision(&api.Revision{Name: "a", OSUpdates: []api.OSUpdate{{KB: "KB1234567", URL: "C:/kb.msu", SHA256: sha}}})
	for _, seed := range []string{s, "name: a\n", "[", "{}", "name: a\nosUpdates:\n- kb: KB1234567\n  url: x\n  sha256: " + sha + "\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := ParseRevision(in)
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("parsed an invalid revision: %v", err)
		}
	})
}

func TestManifest(t *testing.T) {
	m, err := Manifest(ManifestOptions{Image: "registry.example/kubewin:v1"})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Manifest(ManifestOptions{Image: "registry.example/kubewin:v1"})
	if string(m) != string(again) {
		t.Error("same options, different bytes")
	}
	s := string(m)
	for _, want := range []string{"kind: ServiceAccount", "kind: ClusterRole\n", "kind: Role\n", "pods/eviction", "leases", "- rollout\n        - run\n        - --all", "readOnlyRootFilesystem: true"} {
		if !strings.Contains(s, want) {
			t.Errorf("manifest lacks %q", want)
		}
	}
	for _, never := range []string{"creationTimestamp", "status:", `"*"`, "- '*'", "secrets", "delete\n    - deletecollection"} {
		if strings.Contains(s, never) {
			t.Errorf("manifest has %q", never)
		}
	}
	if _, err := Manifest(ManifestOptions{}); err == nil {
		t.Error("no image accepted")
	}
}
