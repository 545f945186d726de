package render

import (
	"bytes"
	"fmt"
	"net"
	"strings"

	"github.com/kubewin/kubewin/internal/plan"
)

// containerd configuration, format version 3 (containerd 2.x; Kubernetes v1.36 and later no
// longer support containerd 1.x). CNI binaries are given as bin_dirs, which containerd 2.1 and
// later read (2.0 knew only bin_dir). Plugin sections use the CRI plugin's TOML keys
// (containerd internal/cri/config): io.containerd.cri.v1.images for images and registries,
// io.containerd.cri.v1.runtime for CNI and runtime handlers.

const (
	windowsContainerdRoot  = `C:\ProgramData\containerd\root`
	windowsContainerdState = `C:\ProgramData\containerd\state`
	windowsContainerdPipe  = `\\.\pipe\containerd-containerd`
	windowsContainerdDir   = `C:\Program Files\containerd`
	linuxCertsDir          = "/etc/containerd/certs.d"
	linuxCNIBinDir         = "/opt/cni/bin"
	linuxCNIConfDir        = "/etc/cni/net.d"
	runhcsRuntimeType      = "io.containerd.runhcs.v1"
	runcRuntimeType        = "io.containerd.runc.v2"
	// hcsshim's Options.SandboxIsolation: 0 process, 1 hypervisor.
	sandboxIsolationHyperV = 1
)

const (
	criImages  = "plugins.'io.containerd.cri.v1.images'"
	criRuntime = "plugins.'io.containerd.cri.v1.runtime'"
)

// WindowsContainerdConfigPath is where services/install.ps1 installs containerd/config.toml.
func WindowsContainerdConfigPath() string { return windowsContainerdDir + `\config.toml` }

// WindowsContainerdConfig renders containerd/config.toml of a Windows node.
func WindowsContainerdConfig(p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	w := n.Windows
	if w == nil {
		return nil, fmt.Errorf("render containerd config for %s: not a Windows node", n.Name)
	}
	if len(w.RuntimeHandlers) == 0 {
		return nil, fmt.Errorf("render containerd config for %s: no runtime handlers", n.Name)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# containerd 2.1+ configuration for %s (%s, image tag %s).\n# %s\n", n.Name, w.BuildLabel, w.ImageTag, generatedBy)
	b.WriteString("version = 3\n")
	fmt.Fprintf(&b, "root = %s\nstate = %s\n\n", tomlString(windowsContainerdRoot), tomlString(windowsContainerdState))
	fmt.Fprintf(&b, "[grpc]\n  address = %s\n\n", tomlString(windowsContainerdPipe))

	fmt.Fprintf(&b, "[%s]\n", criImages)
	// Windows base images are gigabytes and registries behind slow links stall for minutes
	// between layers; the field report's pulls needed up to 30 minutes (seed 000 §2.1.4). The
	// timeout cancels a pull only when no byte arrived for that long (containerd
	// internal/cri/config: image_pull_progress_timeout, default 5m).
	fmt.Fprintf(&b, "  image_pull_progress_timeout = %s\n", tomlString("30m0s"))
	fmt.Fprintf(&b, "\n[%s.pinned_images]\n  sandbox = %s\n", criImages, tomlString(w.PauseImage))
	if len(p.Images.InsecureRegistries) > 0 {
		fmt.Fprintf(&b, "\n[%s.registry]\n  config_path = %s\n", criImages, tomlString(windowsContainerdDir+`\certs.d`))
	}
	for _, h := range w.RuntimeHandlers {
		if h.Isolation != "hyperv" {
			continue
		}
		// Hyper-V isolation runs images of this build or older; the platform tells containerd
		// which variant of a multi-platform image the handler pulls.
		fmt.Fprintf(&b, "\n[%s.runtime_platforms.%s]\n  platform = %s\n", criImages, tomlKey(h.Name),
			tomlString(fmt.Sprintf("windows(10.0.%d)/amd64", h.ImageBuild)))
	}

	fmt.Fprintf(&b, "\n[%s]\n", criRuntime)
	fmt.Fprintf(&b, "\n[%s.cni]\n  bin_dirs = %s\n  conf_dir = %s\n  max_conf_num = 1\n", criRuntime,
		tomlStrings([]string{w.CNIBinDir}), tomlString(w.CNIConfDir))
	fmt.Fprintf(&b, "\n[%s.containerd]\n  default_runtime_name = %s\n", criRuntime, tomlString(w.RuntimeHandlers[0].Name))
	for _, h := range w.RuntimeHandlers {
		fmt.Fprintf(&b, "\n[%s.containerd.runtimes.%s]\n  runtime_type = %s\n", criRuntime, tomlKey(h.Name), tomlString(runhcsRuntimeType))
		switch h.Isolation {
		case "process":
		case "hyperv":
			fmt.Fprintf(&b, "\n[%s.containerd.runtimes.%s.options]\n  SandboxIsolation = %d\n  ScaleCpuLimitsToSandbox = true\n",
				criRuntime, tomlKey(h.Name), sandboxIsolationHyperV)
		default:
			return nil, fmt.Errorf("render containerd config for %s: runtime handler %s has unknown isolation %q", n.Name, h.Name, h.Isolation)
		}
	}
	return b.Bytes(), nil
}

// LinuxContainerdConfig renders containerd/config.toml of a Linux node in the bundle: runc with
// the systemd cgroup driver exactly when the kubelet uses it (a mismatch destabilises nodes under
// pressure), CNI and registry paths at their usual places.
func LinuxContainerdConfig(p *plan.Plan, n plan.NodePlan) ([]byte, error) {
	return linuxContainerdConfig(p, n, nil)
}

// LinuxContainerdConfigAt renders the containerd configuration of a Linux node that kubewin join
// runs: as LinuxContainerdConfig, with root, state, socket and CNI directories at paths.
func LinuxContainerdConfigAt(p *plan.Plan, n plan.NodePlan, paths NodePaths) ([]byte, error) {
	return linuxContainerdConfig(p, n, &paths)
}

func linuxContainerdConfig(p *plan.Plan, n plan.NodePlan, paths *NodePaths) ([]byte, error) {
	l := n.Linux
	if l == nil {
		return nil, fmt.Errorf("render containerd config for %s: not a Linux node", n.Name)
	}
	var systemd bool
	switch l.CgroupDriver {
	case "systemd":
		systemd = true
	case "cgroupfs":
	default:
		return nil, fmt.Errorf("render containerd config for %s: unknown cgroup driver %q", n.Name, l.CgroupDriver)
	}
	certsDir, cniBin, cniConf := linuxCertsDir, linuxCNIBinDir, linuxCNIConfDir
	var b bytes.Buffer
	fmt.Fprintf(&b, "# containerd 2.1+ configuration for %s (kubelet cgroupDriver: %s).\n# %s\n", n.Name, l.CgroupDriver, generatedBy)
	b.WriteString("version = 3\n")
	if paths != nil {
		certsDir, cniBin, cniConf = paths.ContainerdCertsDir, paths.CNIBinDir, paths.CNIConfDir
		fmt.Fprintf(&b, "root = %s\nstate = %s\n\n[grpc]\n  address = %s\n", tomlString(paths.ContainerdRoot),
			tomlString(paths.ContainerdState), tomlString(paths.ContainerdSocket))
	}
	fmt.Fprintf(&b, "\n[%s]\n", criImages)
	fmt.Fprintf(&b, "\n[%s.pinned_images]\n  sandbox = %s\n", criImages, tomlString(p.Images.LinuxPause))
	if len(p.Images.InsecureRegistries) > 0 {
		fmt.Fprintf(&b, "\n[%s.registry]\n  config_path = %s\n", criImages, tomlString(certsDir))
	}
	fmt.Fprintf(&b, "\n[%s]\n", criRuntime)
	fmt.Fprintf(&b, "\n[%s.cni]\n  bin_dirs = %s\n  conf_dir = %s\n", criRuntime, tomlStrings([]string{cniBin}), tomlString(cniConf))
	fmt.Fprintf(&b, "\n[%s.containerd]\n  default_runtime_name = 'runc'\n", criRuntime)
	fmt.Fprintf(&b, "\n[%s.containerd.runtimes.runc]\n  runtime_type = %s\n", criRuntime, tomlString(runcRuntimeType))
	fmt.Fprintf(&b, "\n[%s.containerd.runtimes.runc.options]\n  SystemdCgroup = %t\n", criRuntime, systemd)
	return b.Bytes(), nil
}

// RegistryHostDir is containerd's certs.d directory name for a registry host: ":port" becomes
// "_port_" (containerd remotes/docker/config hostDirectory), which Windows paths also allow.
func RegistryHostDir(host string) string {
	if h, port, err := net.SplitHostPort(host); err == nil && port != "" {
		return h + "_" + port + "_"
	}
	return host
}

// RegistryHostsTOML renders certs.d/<host>/hosts.toml telling containerd to pull from a
// plain-HTTP registry.
func RegistryHostsTOML(host string) ([]byte, error) {
	if host == "" || strings.ContainsAny(host, "/ \"'") {
		return nil, fmt.Errorf("render registry config: %q is not a registry host[:port]", host)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s is a plain-HTTP registry.\n# %s\n", host, generatedBy)
	fmt.Fprintf(&b, "server = %s\n\n[host.%s]\n  capabilities = ['pull', 'resolve']\n", tomlString("http://"+host), tomlString("http://"+host))
	return b.Bytes(), nil
}

// tomlKey quotes a table key unless it is a bare key.
func tomlKey(k string) string {
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return tomlString(k)
		}
	}
	return k
}
