package binaries

import (
	"fmt"
	"path"
	"strings"
)

// kubernetesBinaries are the node programs taken from Kubernetes' release layout, on Windows
// with .exe (hack/lib/golang.sh in kubernetes/kubernetes: kube::golang::node_targets and
// KUBE_NODE_BINARIES_WIN). kubeadm, also a node target, is not used by kubewin.
func kubernetesBinaries() []string { return []string{"kubelet", "kube-proxy", "kube-log-runner"} }

// checksum is a published checksum file: its URL and the digest it holds.
type checksum struct {
	url    string
	algo   string // "sha256" or "sha512"
	hexLen int
}

// artifact is one file of a release layout: where it is, the checksum files published beside
// it, and, for an archive, which of its entries become which mirror files.
type artifact struct {
	component string
	url, name string // name: the base name the checksum files name
	sums      []checksum
	// archive is "" for a program (stored as mirrorName), "tar.gz" or "zip".
	archive    string
	mirrorName string
	// pick maps a cleaned archive entry path to its mirror name; false leaves it out.
	pick func(entry string) (string, bool)
	// required are mirror names an archive of this layout has; one missing means the URL
	// does not hold this layout (or this version's layout changed).
	required []string
}

func sha256File(u string) checksum { return checksum{u, "sha256", 64} }
func sha512File(u string) checksum { return checksum{u, "sha512", 128} }

// checkPlatform admits the operating systems join knows and the architectures the projects
// publish for them.
func checkPlatform(goos, arch string) error {
	switch goos {
	case "linux":
		for _, c := range arch {
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
				return fmt.Errorf("architecture %q: expected a Go GOARCH name such as amd64 or arm64", arch)
			}
		}
		if arch == "" {
			return fmt.Errorf("no architecture given")
		}
	case "windows":
		// containerd's release workflow builds windows/amd64 only (.github/workflows/release.yml,
		// the build matrix), and so does the CNI plugins' (release.yaml, windows_releases).
		if arch != "amd64" {
			return fmt.Errorf("windows/%s: containerd and the CNI plugins publish Windows archives for amd64 only", arch)
		}
	default:
		return fmt.Errorf("operating system %q: expected linux or windows", goos)
	}
	return nil
}

func exe(goos string) string {
	if goos == "windows" {
		return ".exe"
	}
	return ""
}

// artifacts lists what o's components publish for goos/arch. o is normalized.
func (o Official) artifacts(goos, arch string) []artifact {
	x := exe(goos)
	var out []artifact
	if o.Kubernetes != "" {
		// https://dl.k8s.io/release/v1.33.1/bin/linux/amd64/kubelet, kubelet.sha256, kubelet.sha512.
		for _, b := range kubernetesBinaries() {
			u := fmt.Sprintf("%s/%s/bin/%s/%s/%s%s", o.KubernetesURL, o.Kubernetes, goos, arch, b, x)
			out = append(out, artifact{component: "kubernetes " + o.Kubernetes, url: u, name: b + x,
				sums: []checksum{sha256File(u + ".sha256"), sha512File(u + ".sha512")}, mirrorName: b + x})
		}
	}
	if o.Containerd != "" {
		// containerd-2.1.4-linux-amd64.tar.gz holds bin/<program> (Makefile: pack_release runs
		// `tar -czf releases/$(1).tar.gz -C releases/$(1) bin`; the version without its v).
		// On Windows the programs are .exe and containerd-shim-runhcs-v1.exe (Makefile.windows).
		name := fmt.Sprintf("containerd-%s-%s-%s.tar.gz", strings.TrimPrefix(o.Containerd, "v"), goos, arch)
		u := fmt.Sprintf("%s/%s/%s", o.ContainerdURL, o.Containerd, name)
		shim := "containerd-shim-runc-v2"
		if goos == "windows" {
			shim = "containerd-shim-runhcs-v1.exe"
		}
		out = append(out, artifact{component: "containerd " + o.Containerd, url: u, name: name,
			sums: []checksum{sha256File(u + ".sha256sum")}, archive: "tar.gz",
			pick: func(entry string) (string, bool) {
				dir, file := path.Split(entry)
				return file, dir == "bin/" && file != ""
			},
			required: []string{"containerd" + x, shim}})
	}
	if o.CNI != "" {
		// cni-plugins-linux-amd64-v1.7.1.tgz holds the plugins at its top level with README.md
		// and LICENSE (release.yaml: `cp README.md LICENSE bin/`, `tar cfzpv … .` in bin).
		// Linux plugins have no extension, Windows ones (plugins/windows_only.txt) end .exe.
		name := fmt.Sprintf("cni-plugins-%s-%s-%s.tgz", goos, arch, o.CNI)
		u := fmt.Sprintf("%s/%s/%s", o.CNIURL, o.CNI, name)
		out = append(out, artifact{component: "cni " + o.CNI, url: u, name: name,
			sums: []checksum{sha256File(u + ".sha256"), sha512File(u + ".sha512")}, archive: "tar.gz",
			pick: func(entry string) (string, bool) {
				if strings.Contains(entry, "/") || entry == "" || entry == "README.md" || entry == "LICENSE" {
					return "", false
				}
				if goos == "windows" {
					return "cni/" + entry, strings.HasSuffix(entry, ".exe")
				}
				return "cni/" + entry, !strings.Contains(entry, ".")
			},
			required: []string{"cni/host-local" + x}})
	}
	return out
}
