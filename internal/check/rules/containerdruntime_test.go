package rules

import "testing"

// KW1611: runtime_type is read in runtimes.<handler> tables and, in containerd 1.x, in the
// deprecated default_runtime and untrusted_workload_runtime tables (a false positive of the
// spent sealed part); under the containerd table itself it is swallowed.
func TestContainerdRuntimeTypeHomes(t *testing.T) {
	const head = "version = 2\n[plugins]\n  [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n    snapshotter = \"overlayfs\"\n"
	for _, tt := range []struct {
		name, body string
		fires      bool
	}{
		{"deprecated default_runtime table", "  [plugins.\"io.containerd.grpc.v1.cri\".containerd.default_runtime]\n    runtime_type = \"io.containerd.runtime.v1.linux\"\n", false},
		{"deprecated untrusted_workload_runtime table", "  [plugins.\"io.containerd.grpc.v1.cri\".containerd.untrusted_workload_runtime]\n    runtime_type = \"\"\n", false},
		{"a handler table", "  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n    runtime_type = \"io.containerd.runc.v2\"\n", false},
		{"the containerd table itself", "    runtime_type = \"io.containerd.runc.v2\"\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := runCase(t, tc{files: map[string]string{"config.toml": head + tt.body}, version: "1.26"})
			if got := len(findingsOf(rep, "KW1611")) > 0; got != tt.fires {
				t.Errorf("KW1611 fired %v, want %v: %s", got, tt.fires, summary(rep))
			}
		})
	}
}
