package render

import (
	"fmt"
	"os"
	"path"
	"regexp"
	"sort"

	"github.com/kubewin/kubewin/internal/atomicfs"
	"github.com/kubewin/kubewin/internal/plan"
)

// Line endings: every file uses LF, Windows files included. Every consumer on the node accepts
// LF (PowerShell 5.1 and 7, the kubelet's and kube-proxy's YAML decoders, containerd's TOML
// parser, win-bridge's JSON), Notepad on every supported Windows Server build (2019 and later)
// displays and keeps LF, and one convention keeps the golden files and byte-for-byte
// determinism simple. Windows files are ASCII-only (checked) because Windows PowerShell 5.1
// reads a script without a byte-order mark in the ANSI code page.

const (
	fileMode os.FileMode = 0o644
	execMode os.FileMode = 0o755
)

// nodeDirName guards path construction: node names are DNS-1123 subdomains.
var nodeDirName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// Render renders every file of the bundle of p, sorted by path. It performs no I/O; write the
// result with atomicfs.WriteTree.
func Render(p *plan.Plan) ([]atomicfs.File, error) {
	if p == nil {
		return nil, fmt.Errorf("render: no plan")
	}
	planJSON, err := p.JSON()
	if err != nil {
		return nil, fmt.Errorf("render plan.json: %w", err)
	}
	files := []atomicfs.File{{Path: "plan.json", Data: planJSON, Mode: fileMode}}
	cs := &fileSet{dir: "cluster"}
	cs.add("runtimeclasses.yaml", fileMode, func() ([]byte, error) { return RuntimeClasses(p) })
	cs.add("windows-nodes.yaml", fileMode, func() ([]byte, error) { return WindowsNodeObjects(p) })
	cs.add("calico-ipreservation.yaml", fileMode, func() ([]byte, error) { return CalicoReservation(p) })
	cs.add("tor-routes.txt", fileMode, func() ([]byte, error) { return TorRoutesText(p) })
	cs.add("tor-routes.json", fileMode, func() ([]byte, error) { return TorRoutesJSON(p) })
	cs.add("flannel-net-conf.json", fileMode, func() ([]byte, error) { return FlannelNetConf(p) })
	addHostProcessFiles(cs, p)
	if cs.err != nil {
		return nil, cs.err
	}
	files = append(files, cs.files...)

	enc := newYAMLEncoder()
	seen := map[string]bool{}
	for _, n := range p.Nodes {
		if !nodeDirName.MatchString(n.Name) {
			return nil, fmt.Errorf("render: node name %q cannot name a directory", n.Name)
		}
		if seen[n.Name] {
			return nil, fmt.Errorf("render: node %s planned twice", n.Name)
		}
		seen[n.Name] = true
		var nf []atomicfs.File
		switch {
		case n.Windows != nil && n.Windows.NetworkOwner == plan.NetworkOwnerDaemonSet:
			nf, err = hostProcessNodeFiles(p, n, enc)
		case n.Windows != nil:
			nf, err = windowsNodeFiles(p, n, enc)
		case n.Linux != nil:
			nf, err = linuxNodeFiles(p, n)
		default:
			err = fmt.Errorf("render: node %s has neither a Windows nor a Linux plan", n.Name)
		}
		if err != nil {
			return nil, err
		}
		files = append(files, nf...)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

type fileSet struct {
	dir   string
	files []atomicfs.File
	err   error
}

func (s *fileSet) add(name string, mode os.FileMode, render func() ([]byte, error)) {
	if s.err != nil {
		return
	}
	data, err := render()
	if err != nil {
		s.err = err
		return
	}
	if data == nil {
		return
	}
	s.files = append(s.files, atomicfs.File{Path: path.Join(s.dir, name), Data: data, Mode: mode})
}

func windowsNodeFiles(p *plan.Plan, n plan.NodePlan, enc *yamlEncoder) ([]atomicfs.File, error) {
	effects, err := NodeEffects(p, n)
	if err != nil {
		return nil, err
	}
	return windowsNodeFilesFrom(p, n, enc, effects)
}

// windowsNodeFilesFrom renders a Windows node's files with its host effects: what the host
// needs comes from that list only (the parity test drops one effect at a time).
func windowsNodeFilesFrom(p *plan.Plan, n plan.NodePlan, enc *yamlEncoder, effects []HostEffect) ([]atomicfs.File, error) {
	w := n.Windows
	s := &fileSet{dir: "nodes/" + n.Name}
	s.add("cni/"+CNIConfigName(w), fileMode, func() ([]byte, error) { return CNIConfig(n) })
	// hns/network.json states the HNS network and host endpoint declaratively with HCN schema v2
	// names (checked against hcsshim's hcn types by the Windows-only test). setup.ps1 does not
	// read it; it is kept for the Windows host layer of the node service, which creates the same
	// objects through hcn (issue 11 item 13, decided).
	s.add("hns/network.json", fileMode, func() ([]byte, error) { return HNSNetworkJSON(p, n) })
	s.add("hns/setup.ps1", fileMode, func() ([]byte, error) { return hnsSetupScript(p, n, effects) })
	s.add("hns/cleanup.ps1", fileMode, func() ([]byte, error) { return HNSCleanupScript(p, n) })
	s.add("kubelet/config.yaml", fileMode, func() ([]byte, error) { return kubeletConfig(enc, p, n) })
	s.add("kubelet/flags", fileMode, func() ([]byte, error) { return KubeletFlagsFile(p, n) })
	s.add("kube-proxy/config.yaml", fileMode, func() ([]byte, error) { return kubeProxyConfig(enc, p, n) })
	s.add("containerd/config.toml", fileMode, func() ([]byte, error) { return WindowsContainerdConfig(p, n) })
	addRegistryHosts(s, effects)
	s.add("pause/Dockerfile", fileMode, func() ([]byte, error) { return PauseDockerfile(n) })
	s.add("services/install.ps1", fileMode, func() ([]byte, error) { return servicesScript(p, n, effects) })
	s.add("firewall/rules.ps1", fileMode, func() ([]byte, error) { return firewallScript(n, effects) })
	s.add("flannel/net-conf.json", fileMode, func() ([]byte, error) { return WindowsFlannelNetConf(p, n) })
	s.add("README.md", fileMode, func() ([]byte, error) { return WindowsReadme(p, n) })
	if s.err != nil {
		return nil, s.err
	}
	for _, f := range s.files {
		if !isASCII(f.Data) {
			return nil, fmt.Errorf("render %s: non-ASCII content would be misread by Windows PowerShell 5.1", f.Path)
		}
	}
	return s.files, nil
}

func linuxNodeFiles(p *plan.Plan, n plan.NodePlan) ([]atomicfs.File, error) {
	effects, err := NodeEffects(p, n)
	if err != nil {
		return nil, err
	}
	return linuxNodeFilesFrom(p, n, effects)
}

func linuxNodeFilesFrom(p *plan.Plan, n plan.NodePlan, effects []HostEffect) ([]atomicfs.File, error) {
	s := &fileSet{dir: "nodes/" + n.Name}
	s.add("modules-load.d/kubewin.conf", fileMode, func() ([]byte, error) { return modulesLoad(n, effects) })
	s.add("sysctl.d/99-kubewin.conf", fileMode, func() ([]byte, error) { return sysctlsConf(n, effects) })
	s.add("containerd/config.toml", fileMode, func() ([]byte, error) { return LinuxContainerdConfig(p, n) })
	addRegistryHosts(s, effects)
	s.add("routes", execMode, func() ([]byte, error) { return linuxRoutes(n, effects) })
	if n.Linux.Gateway != nil {
		s.add("keepalived/keepalived.conf", fileMode, func() ([]byte, error) {
			return KeepalivedConfigForNode(p.GatewayGroups, n.Name)
		})
		s.add("keepalived/keepalived.service.d/kubewin-vips.conf", fileMode, func() ([]byte, error) {
			return KeepalivedUnitDropIn(p.GatewayGroups, n.Name)
		})
	}
	return s.files, s.err
}

func addRegistryHosts(s *fileSet, effects []HostEffect) {
	for _, e := range EffectsOf(effects, EffectRegistryHost) {
		h := e.RegistryHost
		s.add("containerd/certs.d/"+h.Dir+"/hosts.toml", fileMode, func() ([]byte, error) { return h.Data, nil })
	}
}
