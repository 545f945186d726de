package rules

import (
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/render"
)

// KW1105 states per flag when it went (not one release for all), and where it names containerd
// settings it names the containerd 2.x keys (config version 3) kubewin itself renders.
func TestRemovedFlagsNameTheirRelease(t *testing.T) {
	cases := []struct {
		flag      string
		why       []string
		fix       []string
		notInFix  []string
		component string
	}{
		{"--network-plugin=cni", []string{"removed in 1.24"}, []string{"plugins.'io.containerd.cri.v1.runtime'.cni", "version = 3"}, []string{"grpc.v1.cri"}, "kubelet"},
		{`--cni-bin-dir=c:\k\cni`, []string{"removed in 1.24"}, []string{"[plugins.'io.containerd.cri.v1.runtime'.cni] bin_dirs"}, []string{"grpc.v1.cri"}, "kubelet"},
		{`--cni-conf-dir=c:\k\cni\config`, []string{"removed in 1.24"}, []string{"[plugins.'io.containerd.cri.v1.runtime'.cni] conf_dir"}, []string{"grpc.v1.cri"}, "kubelet"},
		{"--image-pull-progress-deadline=10m", []string{"removed in 1.24"}, []string{"[plugins.'io.containerd.cri.v1.images'] image_pull_progress_timeout"}, []string{"grpc.v1.cri"}, "kubelet"},
		{`--log-dir=c:\k\logs`, []string{"deprecated in 1.23 and removed in 1.26", "--log-dir"}, []string{"-v"}, nil, "kubelet"},
		{`--log-file=c:\k\kubelet.log`, []string{"removed in 1.26", "--log-file"}, nil, nil, "kubelet"},
		{"--container-runtime=remote", []string{"removed in 1.27"}, nil, nil, "kubelet"},
		{"--pod-infra-container-image=registry.k8s.io/pause:3.10", []string{"deprecated in 1.24 and removed in 1.35"},
			[]string{"[plugins.'io.containerd.cri.v1.images'.pinned_images] sandbox"}, []string{"grpc.v1.cri"}, "kubelet"},
	}
	for _, c := range cases {
		t.Run(c.flag, func(t *testing.T) {
			rep := runCase(t, tc{kubelet: []string{goodKubelet + " " + c.flag}, version: "1.37"})
			got := findingsOf(rep, "KW1105")
			if len(got) != 1 {
				t.Fatalf("%d KW1105 findings:\n%s", len(got), dump(rep))
			}
			f := got[0]
			if strings.Contains(f.Why, "dockershim") && !strings.Contains(c.why[0], "1.24") {
				t.Errorf("why blames dockershim: %s", f.Why)
			}
			for _, w := range c.why {
				if !strings.Contains(f.Why, w) {
					t.Errorf("why %q lacks %q", f.Why, w)
				}
			}
			if !strings.Contains(f.Why, "kubelet v1.37") {
				t.Errorf("why %q does not name the target", f.Why)
			}
			for _, w := range c.fix {
				if !strings.Contains(f.Fix, w) {
					t.Errorf("fix %q lacks %q", f.Fix, w)
				}
			}
			for _, w := range c.notInFix {
				if strings.Contains(f.Fix, w) {
					t.Errorf("fix %q names containerd 1.x key %q", f.Fix, w)
				}
			}
		})
	}
	// Before removal, KW1106 gives the same containerd 2.x replacement.
	rep := runCase(t, tc{kubelet: []string{goodKubelet + " --pod-infra-container-image=registry.k8s.io/pause:3.10"}, version: "1.34"})
	if got := findingsOf(rep, "KW1106"); len(got) != 1 || !strings.Contains(got[0].Fix, "io.containerd.cri.v1.images'.pinned_images") {
		t.Errorf("KW1106 on 1.34: %s", dump(rep))
	}
}

// The containerd sections the fixes name are the ones kubewin renders, so a user following a fix
// ends up with a configuration like kubewin's own.
func TestRemovedFlagFixesMatchRenderedContainerd(t *testing.T) {
	_, p := examplePlan(t, nil)
	n := nodeByName(p, "node009")
	cfg, err := render.WindowsContainerdConfig(p, *n)
	if err != nil {
		t.Fatal(err)
	}
	text := string(cfg)
	for _, want := range []string{"version = 3", "[plugins.'io.containerd.cri.v1.runtime'.cni]", "bin_dirs = ", "conf_dir = ",
		"[plugins.'io.containerd.cri.v1.images'.pinned_images]", "sandbox = "} {
		if !strings.Contains(text, want) {
			t.Errorf("rendered containerd config lacks %q, which KW1105's fixes name:\n%s", want, text)
		}
	}
	for flag, repl := range containerd2Replacements {
		for _, sec := range []string{"io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images"} {
			if strings.Contains(repl, sec) && !strings.Contains(text, "[plugins.'"+sec+"'") {
				t.Errorf("%s: replacement names %s, which kubewin does not render", flag, sec)
			}
		}
		if strings.Contains(repl, "grpc.v1.cri") {
			t.Errorf("%s: replacement names the containerd 1.x plugin: %s", flag, repl)
		}
	}
}

// KW1112: the Windows kubelet evicts on memory.available (since v1.31) and nodefs.available;
// only Linux-only signals, or memory.available before v1.31, are reported.
func TestWindowsEvictionSignals(t *testing.T) {
	cfg := func(evictionHard string) map[string]string {
		return map[string]string{"k.yaml": goodKubeletConfig + "evictionHard: {" + evictionHard + "}\n"}
	}
	cases := []struct {
		name    string
		c       tc
		want    []string
		wantNot bool
	}{
		{"kubewin's rendered thresholds", tc{files: cfg(`memory.available: 500Mi, nodefs.available: "10%", imagefs.available: "15%"`)}, nil, true},
		{"inode signal in config", tc{files: cfg(`memory.available: 500Mi, nodefs.inodesFree: "5%"`)}, []string{"evictionHard sets nodefs.inodesFree"}, false},
		{"pid signal soft flag", tc{kubelet: []string{goodKubelet + " --eviction-soft=pid.available<10% --eviction-soft-grace-period=pid.available=1m"}},
			[]string{"--eviction-soft sets pid.available"}, false},
		{"memory before v1.31", tc{kubelet: []string{goodKubelet + " --eviction-hard=memory.available<500Mi"}, version: "1.30"},
			[]string{"memory.available", "only from v1.31"}, false},
		{"memory on v1.31", tc{kubelet: []string{goodKubelet + " --eviction-hard=memory.available<500Mi"}, version: "1.31"}, nil, true},
		{"Linux kubelet", tc{files: map[string]string{"k.yaml": "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n" +
			"containerRuntimeEndpoint: unix:///run/containerd/containerd.sock\ncgroupDriver: systemd\nevictionHard: {nodefs.inodesFree: \"5%\"}\n"}}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := runCase(t, c.c)
			got := findingsOf(rep, "KW1112")
			if c.wantNot {
				if len(got) > 0 {
					t.Errorf("fires:\n%s", dump(&check.Report{Findings: got}))
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d findings:\n%s", len(got), dump(rep))
			}
			for _, w := range c.want {
				if !strings.Contains(got[0].Message, w) {
					t.Errorf("message %q lacks %q", got[0].Message, w)
				}
			}
		})
	}
}
