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

// KW1611: containerd 1.7's transfer service reads config_path and max_concurrent_downloads in
// its own table (containerd v1.7 plugins/transfer/plugin.go transferConfig; the stock
// `containerd config default` dump writes them there); under another plugin's table they are
// still swallowed.
func TestContainerdTransferPluginKeys(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		fires      bool
	}{
		{"transfer plugin table (containerd 1.7 default dump)", "version = 2\n[plugins]\n  [plugins.\"io.containerd.transfer.v1.local\"]\n    config_path = \"\"\n    max_concurrent_downloads = 3\n    max_concurrent_uploaded_layers = 3\n", false},
		{"the same keys under the gc scheduler's table", "version = 2\n[plugins]\n  [plugins.\"io.containerd.gc.v1.scheduler\"]\n    config_path = \"/etc/containerd/certs.d\"\n    max_concurrent_downloads = 3\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := runCase(t, tc{files: map[string]string{"config.toml": tt.body}, version: "1.28"})
			if got := len(findingsOf(rep, "KW1611")) > 0; got != tt.fires {
				t.Errorf("KW1611 fired %v, want %v: %s", got, tt.fires, summary(rep))
			}
		})
	}
}
