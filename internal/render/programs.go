package render

import (
	"strings"

	"github.com/kubewin/kubewin/internal/plan"
)

// Releases the programs of a Windows node come from: GitHub releases, by their download names.
// The README (step 2) and services/install.ps1 read them from here only; programs_test.go keeps
// every pin in a list of releases known to exist, with where that was checked.
//
//   - win-bridge.exe, win-overlay.exe, host-local.exe: containernetworking/plugins, asset
//     cni-plugins-windows-amd64-<v>.tgz (.github/workflows/release.yaml, job windows_releases,
//     which builds the plugins listed in plugins/windows_only.txt). kubewin's CNI configuration
//     is that release's pkg/hns NetConf. microsoft/windows-container-networking ships different
//     plugins (sdnbridge, sdnoverlay, nat) with another configuration format.
//   - flanneld.exe: flannel-io/flannel, asset flanneld.exe: the Makefile builds dist/flanneld.exe
//     (and packs it into flannel-<v>-windows-amd64.tar.gz), and .github/workflows/release.yml
//     uploads dist/flannel* to the release.
//   - flannel.exe: flannel-io/cni-plugin, asset cni-plugin-flannel-windows-amd64-<v>.tgz, which
//     holds flannel-amd64.exe (scripts/package.sh); containerd looks for the CNI type "flannel"
//     as flannel.exe, hence the rename.
//   - flanneld-service.exe: WinSW (winsw/winsw), the service wrapper flanneld runs under
//     (flannel.go): asset WinSW.NET461.exe, which runs on the .NET Framework 4.x that Windows
//     Server 2019 (4.7.2) and later (4.8) include
//     (https://learn.microsoft.com/dotnet/framework/migration-guide/versions-and-dependencies).
//     WinSW reads its configuration from the .xml of the same name beside it (WinSW
//     doc/installation.md), hence the rename. It is the one program whose digest kubewin pins:
//     services/install.ps1 refuses any other file, so a wrong pin fails closed.
const (
	cniPluginsVersion       = "v1.9.1"
	flannelVersion          = "v0.28.9"
	flannelCNIPluginVersion = "v1.9.1-flannel1"
	winswVersion            = "v2.12.0"
	winswAsset              = "WinSW.NET461.exe"
	// winswSHA256 is the SHA-256 of WinSW.NET461.exe of v2.12.0. It could not be computed here
	// (no network); it is the digest three unrelated projects pin for that URL, one of them after
	// installing and running a service with it (see programs_test.go).
	winswSHA256 = "b5066b7bbdfba1293e5d15cda3caaea88fbeab35bd5b38c41c913d492aadfc4f"
)

// windowsProgram is one group of programs a Windows node needs from one GitHub release.
type windowsProgram struct {
	Files []string
	// Project is the GitHub repository (owner/name) whose release Asset belongs to.
	Project string
	Version string
	// Asset is the release file Files come from; Note says how when it is not the file itself.
	Asset string
	Note  string
	// SHA256 is the digest of Asset that services/install.ps1 checks, when kubewin pins one.
	SHA256 string
	Dir    string
}

// URL is where Asset is downloaded from.
func (p windowsProgram) URL() string {
	return "https://github.com/" + p.Project + "/releases/download/" + p.Version + "/" + p.Asset
}

// Line is the README bullet of p.
func (p windowsProgram) Line() string {
	s := strings.Join(p.Files, ", ") + " from " + p.Project + " " + p.Version + " (" + p.URL()
	if p.Note != "" {
		s += ", " + p.Note
	}
	if p.SHA256 != "" {
		s += ", SHA-256 " + p.SHA256
	}
	return s + ") into `" + p.Dir + "`"
}

// windowsCNIAndFlannelPrograms are the CNI plugins of a Windows node and, for flannel designs,
// flanneld and its service wrapper.
func windowsCNIAndFlannelPrograms(w *plan.WindowsNodePlan) []windowsProgram {
	plugin := w.CNIPlugin
	if usesFlannel(w) {
		plugin = w.CNIDelegate
	}
	cni := windowsProgram{Files: []string{plugin + ".exe", "host-local.exe"},
		Project: "containernetworking/plugins", Version: cniPluginsVersion,
		Asset: "cni-plugins-windows-amd64-" + cniPluginsVersion + ".tgz", Dir: w.CNIBinDir}
	if !usesFlannel(w) {
		return []windowsProgram{cni}
	}
	return []windowsProgram{
		{Files: []string{"flanneld.exe"}, Project: "flannel-io/flannel", Version: flannelVersion,
			Asset: "flanneld.exe", Dir: w.InstallDir},
		{Files: []string{"flannel.exe"}, Project: "flannel-io/cni-plugin", Version: flannelCNIPluginVersion,
			Asset: "cni-plugin-flannel-windows-amd64-" + flannelCNIPluginVersion + ".tgz",
			Note:  "its flannel-amd64.exe renamed", Dir: w.CNIBinDir},
		cni,
		{Files: []string{flanneldWrapperExe}, Project: "winsw/winsw", Version: winswVersion, Asset: winswAsset,
			Note: "renamed", SHA256: winswSHA256, Dir: w.InstallDir},
	}
}

// programsIn lists the files of progs that go into dir.
func programsIn(progs []windowsProgram, dir string) []string {
	var out []string
	for _, p := range progs {
		if p.Dir == dir {
			out = append(out, p.Files...)
		}
	}
	return out
}
