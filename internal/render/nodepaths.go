package render

import (
	"path/filepath"

	"github.com/kubewin/kubewin/internal/plan"
)

// NodePaths are where a node joined by kubewin join keeps its files and state, as paths of the
// machine join runs on. On Linux the defaults are the usual locations and join --root puts
// them all below one directory (an image being prepared, or a test's own directory). On
// Windows they are the bundle's layout below the install dir, because the Windows renderers
// (kubelet flags, services, kube-proxy configuration) name those paths in what they write.
type NodePaths struct {
	// DataDir holds what kubewin itself keeps: the join state, the service manifest, the
	// bootstrap kubeconfig and the kubelet's kubeconfig (on Windows: the install dir).
	DataDir string
	// BinDir holds the node binaries join installs (kubelet, kube-proxy, kube-log-runner).
	BinDir string
	// RuntimeBinDir holds containerd and its shim (BinDir on Linux; containerd's own
	// directory on Windows, where its configuration also lives).
	RuntimeBinDir string
	// PKIDir holds the pinned cluster CA (ca.crt) and the kubelet's client certificates.
	PKIDir string
	// KubeletConfigDir holds config.yaml, the drop-in directory config.d and the static pods.
	KubeletConfigDir string
	// KubeProxyConfigDir holds kube-proxy's config.yaml (Windows nodes; on Linux the cluster
	// runs kube-proxy, or a CNI replaces it).
	KubeProxyConfigDir string
	KubeletRootDir     string
	PodLogsDir         string
	LogDir             string

	ContainerdConfigDir string
	ContainerdCertsDir  string
	ContainerdRoot      string
	ContainerdState     string
	ContainerdSocket    string
	CNIBinDir           string
	CNIConfDir          string
	// CNIStateDir holds host-local IPAM's allocations (its dataDir).
	CNIStateDir string
}

// LinuxPathsUnder returns the default Linux layout below root ("/" for a real node).
func LinuxPathsUnder(root string) NodePaths {
	j := func(p string) string { return filepath.Join(root, p) }
	data := j("/var/lib/kubewin")
	bin := j("/usr/local/lib/kubewin/bin")
	return NodePaths{
		DataDir:             data,
		BinDir:              bin,
		RuntimeBinDir:       bin,
		PKIDir:              filepath.Join(data, "pki"),
		KubeletConfigDir:    filepath.Join(data, "kubelet"),
		KubeProxyConfigDir:  filepath.Join(data, "kube-proxy"),
		KubeletRootDir:      j("/var/lib/kubelet"),
		PodLogsDir:          j("/var/log/pods"),
		LogDir:              j("/var/log/kubewin"),
		ContainerdConfigDir: j("/etc/containerd"),
		ContainerdCertsDir:  j(linuxCertsDir),
		ContainerdRoot:      j("/var/lib/containerd"),
		ContainerdState:     j("/run/containerd"),
		ContainerdSocket:    j("/run/containerd/containerd.sock"),
		CNIBinDir:           j(linuxCNIBinDir),
		CNIConfDir:          j(linuxCNIConfDir),
		CNIStateDir:         j("/var/lib/cni/networks"),
	}
}

// Windows defaults: the spec's default install dir and containerd's directory, which
// render's Windows files name.
const (
	WindowsDefaultInstallDir = `C:\k`
	WindowsContainerdDir     = windowsContainerdDir
)

// WindowsPathsUnder returns a Windows node's layout, installDir standing for the spec's
// windows.installDir (C:\k by default) and containerdDir for C:\Program Files\containerd on
// this machine: on a Windows node they are those directories; a test on Linux passes
// directories of its own. The names below them are the ones KubeletFlags, WindowsServices,
// KubeProxyConfig and CNIConfig write, so what join puts there is what the services read.
func WindowsPathsUnder(installDir, containerdDir string) NodePaths {
	bundle := filepath.Join(installDir, bundleSubdir)
	return NodePaths{
		DataDir:             installDir,
		BinDir:              installDir,
		RuntimeBinDir:       containerdDir,
		PKIDir:              filepath.Join(installDir, pkiSubdir),
		KubeletConfigDir:    filepath.Join(bundle, "kubelet"),
		KubeProxyConfigDir:  filepath.Join(bundle, "kube-proxy"),
		KubeletRootDir:      filepath.Join(filepath.VolumeName(installDir)+string(filepath.Separator), "var", "lib", "kubelet"),
		PodLogsDir:          filepath.Join(filepath.VolumeName(installDir)+string(filepath.Separator), "var", "log", "pods"),
		LogDir:              filepath.Join(installDir, "logs"),
		ContainerdConfigDir: containerdDir,
		ContainerdCertsDir:  filepath.Join(containerdDir, "certs.d"),
		CNIBinDir:           filepath.Join(installDir, "cni", "bin"),
		CNIConfDir:          filepath.Join(installDir, "cni", "conf"),
	}
}

// Files below NodePaths that several parts of kubewin name.
func (l NodePaths) CACert() string { return filepath.Join(l.PKIDir, clusterCAFile) }
func (l NodePaths) BootstrapKubeconfig() string {
	return filepath.Join(l.DataDir, bootstrapKubeconfig)
}
func (l NodePaths) KubeletKubeconfig() string { return filepath.Join(l.DataDir, kubeletKubeconfig) }
func (l NodePaths) KubeletConfig() string     { return filepath.Join(l.KubeletConfigDir, "config.yaml") }
func (l NodePaths) KubeletDropInDir() string  { return filepath.Join(l.KubeletConfigDir, "config.d") }
func (l NodePaths) ContainerdConfig() string {
	return filepath.Join(l.ContainerdConfigDir, "config.toml")
}

// KubeProxyKubeconfig is kube-proxy's kubeconfig (Windows nodes: the node's own credential).
func (l NodePaths) KubeProxyKubeconfig() string {
	return filepath.Join(l.DataDir, kubeProxyKubeconfig)
}

// KubeProxyConfig is kube-proxy's KubeProxyConfiguration.
func (l NodePaths) KubeProxyConfig() string {
	return filepath.Join(l.KubeProxyConfigDir, "config.yaml")
}

// StaticPodDir is the kubelet's staticPodPath on a joined node (join's check pod runs there).
func StaticPodDir(l NodePaths) string { return filepath.Join(l.KubeletConfigDir, "manifests") }

// WindowsStaticPodDir is the Windows kubelet's staticPodPath, as the node sees it.
func WindowsStaticPodDir(w *plan.WindowsNodePlan) string {
	return winPath(BundleDir(w), "kubelet", "manifests")
}

// WindowsLogFile is a Windows node service's log file (kube-log-runner's -log-file).
func WindowsLogFile(w *plan.WindowsNodePlan, service string) string {
	return winPath(w.LogDir, service+".log")
}
