package render

import (
	"strings"

	"github.com/kubewin/kubewin/internal/plan"
)

// Releases the programs of a Windows node come from. The README (step 2) and services/install.ps1
// read them from here only.
//
//   - win-bridge.exe, win-overlay.exe, host-local.exe: containernetworking/plugins, asset
//     cni-plugins-windows-amd64-<v>.tgz (its release workflow still builds the plugins listed
//     in plugins/windows_only.txt). kubewin's CNI configuration is that release's pkg/hns
//     NetConf. microsoft/windows-container-networking ships different plugins (sdnbridge,
//     sdnoverlay, nat) with another configuration format.
//   - flanneld.exe: flannel-io/flannel, release asset flanneld.exe (Makefile dist/flanneld.exe).
//   - flannel.exe: flannel-io/cni-plugin, asset cni-plugin-flannel-windows-amd64-<v>.tgz, which
//     holds flannel-amd64.exe (scripts/package.sh); containerd looks for the CNI type "flannel"
//     as flannel.exe, hence the rename.
//   - nssm.exe: nssm.cc; it reads a service's program, arguments, environment and log files
//     from the service's Parameters registry key (since 2.19).
const (
	cniPluginsVersion       = "v1.9.1"
	flannelVersion          = "v0.28.10"
	flannelCNIPluginVersion = "v1.9.1-flannel1"
	nssmVersion             = "2.24"
)

// windowsProgram is one group of programs a Windows node needs from one release.
type windowsProgram struct {
	Files   []string
	Project string
	Version string
	// Asset says which release file holds Files when that is not obvious.
	Asset string
	Dir   string
}

// Line is the README bullet of p.
func (p windowsProgram) Line() string {
	s := strings.Join(p.Files, ", ") + " from " + p.Project + " " + p.Version
	if p.Asset != "" {
		s += " (" + p.Asset + ")"
	}
	return s + " into `" + p.Dir + "`"
}

// windowsCNIAndFlannelPrograms are the CNI plugins of a Windows node and, for flannel designs,
// flanneld and its service wrapper.
func windowsCNIAndFlannelPrograms(w *plan.WindowsNodePlan) []windowsProgram {
	plugin := w.CNIPlugin
	if usesFlannel(w) {
		plugin = w.CNIDelegate
	}
	cni := windowsProgram{Files: []string{plugin + ".exe", "host-local.exe"},
		Project: "containernetworking/plugins", Version: cniPluginsVersion, Dir: w.CNIBinDir}
	if !usesFlannel(w) {
		return []windowsProgram{cni}
	}
	return []windowsProgram{
		{Files: []string{"flanneld.exe"}, Project: "flannel-io/flannel", Version: flannelVersion,
			Asset: "release asset flanneld.exe", Dir: w.InstallDir},
		{Files: []string{"flannel.exe"}, Project: "flannel-io/cni-plugin", Version: flannelCNIPluginVersion,
			Asset: "flannel-amd64.exe from cni-plugin-flannel-windows-amd64-" + flannelCNIPluginVersion + ".tgz, renamed", Dir: w.CNIBinDir},
		cni,
		{Files: []string{"nssm.exe"}, Project: "nssm.cc", Version: nssmVersion,
			Asset: `win64\nssm.exe from nssm-` + nssmVersion + ".zip", Dir: w.InstallDir},
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
