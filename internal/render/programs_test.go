package render

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"
)

// knownReleases are releases known to exist, per project, with where that was checked. A pin
// (programs.go) must be one of them: issue 22 item 4 found the README sending operators to a
// flannel release, v0.28.10, that was never made. Add a release here only after checking it
// the same way (its tag, and the release workflow that uploads the asset the README names).
var knownReleases = map[string]struct {
	versions []string
	source   string
}{
	"flannel-io/flannel": {
		versions: []string{"v0.26.7", "v0.27.4", "v0.28.0", "v0.28.5", "v0.28.6", "v0.28.7", "v0.28.8", "v0.28.9"},
		source: "git tags of github.com/flannel-io/flannel as of 2026-08-14 (v0.28.9: 2026-08-07, the newest); " +
			".github/workflows/release.yml uploads dist/flannel*, which holds dist/flanneld.exe (Makefile)",
	},
	"flannel-io/cni-plugin": {
		versions: []string{"v1.8.0-flannel1", "v1.8.0-flannel2", "v1.9.0-flannel1", "v1.9.1-flannel1"},
		source: "git tags of github.com/flannel-io/cni-plugin as of 2026-05-18; scripts/package.sh packs " +
			"flannel-amd64.exe into cni-plugin-flannel-windows-amd64-<tag>.tgz",
	},
	"containernetworking/plugins": {
		versions: []string{"v1.8.0", "v1.9.0", "v1.9.1"},
		source: "git tags of github.com/containernetworking/plugins as of 2026-08; .github/workflows/release.yaml " +
			"(windows_releases) uploads cni-plugins-windows-amd64-<tag>.tgz",
	},
	"winsw/winsw": {
		versions: []string{"v2.11.0", "v2.12.0"},
		source: "git tags of github.com/winsw/winsw (v2.12.0 is the newest stable; v3 is alpha); eng/build.yml " +
			"publishes WinSW.NET461.exe",
	},
}

// knownDigests are SHA-256 digests of release assets, with where they come from.
var knownDigests = map[string]struct {
	sha256, source string
}{
	"https://github.com/winsw/winsw/releases/download/v2.12.0/WinSW.NET461.exe": {
		sha256: "b5066b7bbdfba1293e5d15cda3caaea88fbeab35bd5b38c41c913d492aadfc4f",
		source: "pinned for this URL by three unrelated public projects found by content search (one recording " +
			"a 655 KB download that installed, started and removed a service); not recomputed here (no network)",
	},
}

func TestProgramPinsAreKnownReleases(t *testing.T) {
	seen := map[string]bool{}
	for name, p := range designVariants(t) {
		for _, n := range windowsNodes(p) {
			for _, prog := range windowsCNIAndFlannelPrograms(n.Windows) {
				known, ok := knownReleases[prog.Project]
				if !ok {
					t.Errorf("%s: %s comes from %s, which has no known releases listed", name, prog.Line(), prog.Project)
					continue
				}
				if !slices.Contains(known.versions, prog.Version) {
					t.Errorf("%s: %s %s is not a known release (known: %v; %s)", name, prog.Project, prog.Version, known.versions, known.source)
				}
				if prog.Asset == "" || strings.ContainsAny(prog.Asset, "/ ") || !strings.HasPrefix(prog.URL(), "https://github.com/"+prog.Project+"/releases/download/"+prog.Version+"/") {
					t.Errorf("%s: %s: download URL %q", name, prog.Project, prog.URL())
				}
				if prog.SHA256 != "" {
					if b, err := hex.DecodeString(prog.SHA256); err != nil || len(b) != 32 || prog.SHA256 != strings.ToLower(prog.SHA256) {
						t.Errorf("%s: SHA-256 %q is not 64 lower-case hex digits", prog.URL(), prog.SHA256)
					}
					if d, ok := knownDigests[prog.URL()]; !ok || d.sha256 != prog.SHA256 {
						t.Errorf("%s: pinned SHA-256 %s is not the known digest %+v", prog.URL(), prog.SHA256, d)
					}
				}
				seen[prog.Project] = true
			}
		}
	}
	for project := range knownReleases {
		if !seen[project] {
			t.Errorf("no Windows node downloads from %s any more: drop it from knownReleases", project)
		}
	}
	// The asset names the release workflows produce.
	for project, want := range map[string]string{
		"flannel-io/flannel":          "flanneld.exe",
		"flannel-io/cni-plugin":       "cni-plugin-flannel-windows-amd64-" + flannelCNIPluginVersion + ".tgz",
		"containernetworking/plugins": "cni-plugins-windows-amd64-" + cniPluginsVersion + ".tgz",
		"winsw/winsw":                 "WinSW.NET461.exe",
	} {
		p := designVariants(t)["flannel-vxlan"]
		found := false
		for _, prog := range windowsCNIAndFlannelPrograms(windowsNode(t, p, "node009").Windows) {
			if prog.Project == project {
				found = found || prog.Asset == want
			}
		}
		if !found {
			t.Errorf("%s: asset %s not named", project, want)
		}
	}
}
