package check

import (
	"net/netip"

	proxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/platform"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Problem is an input error found while reading inputs; the input-family rule with RuleID
// turns it into a finding.
type Problem struct {
	RuleID   string
	Location Location
	Message  string
	Fix      string
	// Severity, when set, replaces the rule's (a template's stored text is info, templated.go).
	Severity Severity
}

// Context is everything a rule may look at. Rules only read it.
type Context struct {
	// Version is the target Kubernetes release; VersionFrom says where it came from
	// ("spec", "--kubernetes-version", "default").
	Version     platform.Version
	VersionFrom string
	// Newest is the release whose flag set and feature gates kubewin's generated tables hold.
	Newest platform.Version

	Spec     *v1alpha1.Cluster
	SpecFile string
	SpecSrc  *v1alpha1.Source
	Plan     *plan.Plan

	CommandLines     []*CommandLine
	CNIConfs         []*CNIConf
	KubeletConfigs   []*KubeletConfigDoc
	KubeProxyConfigs []*KubeProxyConfigDoc
	KubeadmConfigs   []*KubeadmConfigDoc
	Containerd       []*ContainerdConfig
	Keepalived       []*KeepalivedConf
	FlannelNetConfs  []*FlannelNetConf
	Kubeconfigs      []*KubeconfigDoc
	Scripts          []*Script
	Sysctls          []*SysctlFile
	Modules          []*ModulesFile
	DockerDaemons    []*DockerDaemon
	Objects          []*Object
	// KubewinFiles are files kubewin itself wrote that hold nothing to check (see bundle.go).
	KubewinFiles []KubewinFile
	// Templates are the inputs written for a template engine (templated.go).
	Templates []TemplateFile

	Problems []Problem
	Catalogs *Catalogs
	Gates    *GateRegistry

	memo map[string]any
	// bundles tells kubewin's own bundle files from hand-written ones while loading.
	bundles *bundleIndex
}

// Memo returns the value f computes for key, computing it once per Context: derived views
// that several rules share (every pod template with its OS) are built once per run.
func (c *Context) Memo(key string, f func() any) any {
	if v, ok := c.memo[key]; ok {
		return v
	}
	if c.memo == nil {
		c.memo = map[string]any{}
	}
	v := f()
	c.memo[key] = v
	return v
}

// AddProblem records an input problem.
func (c *Context) AddProblem(id string, loc Location, msg, fix string) {
	p := Problem{RuleID: id, Location: loc, Message: msg, Fix: fix}
	if _, ok := c.Template(loc.File); ok && id == "KW0001" {
		// a template whose rendered form kubewin could not rebuild (a placeholder standing for
		// a key, a table name or part of a word): the renderer runs first, so this is a limit
		// of the reading, not a problem in the file
		for _, q := range c.Problems {
			if q.RuleID == id && q.Location.File == loc.File {
				return // one notice per template is enough
			}
		}
		p.Severity = Info
		p.Message = "a template, not read as rendered: " + msg + "; its placeholders are values known only at render time"
		p.Fix = "Nothing, if the template is rendered before use; check the rendered file too."
	}
	c.Problems = append(c.Problems, p)
}

// SpecLoc locates a spec field path.
func (c *Context) SpecLoc(field string) Location {
	l := Location{File: c.SpecFile, Field: field}
	if c.SpecSrc != nil {
		l.Line, l.Column = c.SpecSrc.Locate(field)
	}
	return l
}

// PlanLoc locates a plan value; plans have no file, so the location names the spec and field.
func (c *Context) PlanLoc(field, node string) Location {
	file := c.SpecFile
	if file == "" {
		file = "<plan>"
	}
	return Location{File: file, Field: field, Node: node}
}

// SpecNode returns the spec node named n.
func (c *Context) SpecNode(n string) (*v1alpha1.Node, bool) {
	if c.Spec == nil || n == "" {
		return nil, false
	}
	for i := range c.Spec.Spec.Nodes {
		if c.Spec.Spec.Nodes[i].Name == n {
			return &c.Spec.Spec.Nodes[i], true
		}
	}
	return nil, false
}

// PlanNode returns the plan of node n.
func (c *Context) PlanNode(n string) (*plan.NodePlan, bool) {
	if c.Plan == nil || n == "" {
		return nil, false
	}
	for i := range c.Plan.Nodes {
		if c.Plan.Nodes[i].Name == n {
			return &c.Plan.Nodes[i], true
		}
	}
	return nil, false
}

// WindowsNodes returns the Windows nodes of the plan.
func (c *Context) WindowsNodes() []*plan.NodePlan {
	if c.Plan == nil {
		return nil
	}
	var out []*plan.NodePlan
	for i := range c.Plan.Nodes {
		if c.Plan.Nodes[i].Windows != nil {
			out = append(out, &c.Plan.Nodes[i])
		}
	}
	return out
}

// ClusterCIDRs returns the cluster (pod) CIDRs known from the plan, spec, or hand-written
// configs (kube-proxy --cluster-cidr, flannel Network), in that order of preference.
func (c *Context) ClusterCIDRs() []netip.Prefix {
	if c.Plan != nil {
		return parsePrefixes(c.Plan.Networking.ClusterCIDRs)
	}
	if c.Spec != nil {
		return parsePrefixes(c.Spec.Spec.Networking.PodCIDRs)
	}
	return nil
}

// ServiceCIDR returns the service CIDR from plan or spec.
func (c *Context) ServiceCIDR() (netip.Prefix, bool) {
	s := ""
	if c.Plan != nil {
		s = c.Plan.Networking.ServiceCIDR
	} else if c.Spec != nil {
		s = c.Spec.Spec.Networking.ServiceCIDR
	}
	p, err := netip.ParsePrefix(s)
	return p.Masked(), err == nil
}

func parsePrefixes(ss []string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
		}
	}
	return out
}

// CNIConf is a CNI network configuration (a .conf or a .conflist), parsed by libcni, with the
// Windows (HNS) policies extracted.
type CNIConf struct {
	File string
	Dir  string
	Name string
	// CNIVersion and Type of the (first) plugin; Delegate is flannel's delegate type.
	CNIVersion string
	Type       string
	Delegate   string
	IsList     bool
	// DNS of the plugin.
	Nameservers []string
	Search      []string
	// Policies are the HNS endpoint policies (AdditionalArgs or policies, HNS v1 and v2).
	Policies     []HNSPolicy
	Capabilities map[string]bool
	// IPAMSubnet and IPAMGateway when an ipam section sets them.
	IPAMType    string
	IPAMSubnet  string
	IPAMGateway string
	Pos         *Positions
}

// HNSPolicy is one endpoint policy of a Windows CNI config.
type HNSPolicy struct {
	// Type is OutBoundNAT, ROUTE, SDNRoute, PortMapping, ...
	Type string
	// Exceptions of OutBoundNAT (ExceptionList in v1, Settings.Exceptions in v2).
	Exceptions []string
	// DestinationPrefix and NeedEncap of ROUTE / SDNRoute.
	DestinationPrefix string
	NeedEncap         bool
	// Path is the JSON path of the policy for line lookups.
	Path string
}

// KubeletConfigDoc is a KubeletConfiguration file decoded into the official versioned type and
// defaulted as the kubelet defaults it (pointer fields the kubelet defaults are never nil).
type KubeletConfigDoc struct {
	File   string
	Config *kubeletv1beta1.KubeletConfiguration
	// Set lists the top-level fields the file sets (so defaults are not mistaken for choices).
	Set map[string]bool
	Pos *Positions
	OS  OSKind
	// DropIn: a fragment from the kubelet's drop-in directory, merged over a base file kubewin
	// may not have; settings it does not hold may be in the base.
	DropIn bool
}

// KubeProxyConfigDoc is a KubeProxyConfiguration file decoded into the official versioned type
// and defaulted as kube-proxy defaults it.
type KubeProxyConfigDoc struct {
	File   string
	Config *proxyv1alpha1.KubeProxyConfiguration
	Set    map[string]bool
	Pos    *Positions
}

// ContainerdConfig is a containerd config.toml.
type ContainerdConfig struct {
	File    string
	Version int
	// SystemdCgroup is the runc option (nil when unset); SandboxImage the pause image.
	SystemdCgroup     *bool
	SystemdCgroupLine int
	SandboxImage      string
	SandboxImageLine  int
	// Handlers are the runtime handlers (runtimes.<name>).
	Handlers []RuntimeHandlerConf
	// Insecure lists registries configured without TLS verification or over http.
	Insecure              []InsecureRegistry
	CNIConfDir, CNIBinDir string
	Windows               bool
	// MirrorsLine is the first registry.mirrors table (0: none); ConfigPath the registry's
	// config_path (hosts.toml directory) and its line.
	MirrorsLine    int
	ConfigPath     string
	ConfigPathLine int
	// Misplaced are settings under a table that does not have them: a table header opened
	// earlier than meant swallows the lines after it.
	Misplaced []ContainerdMisplaced
}

// ContainerdMisplaced is a key found under a table that does not take it.
type ContainerdMisplaced struct {
	Key, Table, Belongs string
	Line                int
}

// RuntimeHandlerConf is one containerd runtime handler.
type RuntimeHandlerConf struct {
	Name         string
	RuntimeType  string
	SandboxImage string
	// SandboxIsolation 1 means Hyper-V isolation.
	SandboxIsolation int
	Line             int
}

// InsecureRegistry is one plain-HTTP or unverified registry.
type InsecureRegistry struct {
	Host   string
	Reason string
	Line   int
}

// FlannelNetConf is flannel's net-conf.json.
type FlannelNetConf struct {
	File    string
	Network string
	Backend string
	VNI     int
	Port    int
	Pos     *Positions
}

// KubeconfigDoc is a kubeconfig file.
type KubeconfigDoc struct {
	File  string
	Users []KubeconfigUser
}

// KubeconfigUser is one user entry.
type KubeconfigUser struct {
	Name string
	// Groups are the certificate's organisations (the Kubernetes groups).
	Groups []string
	// CommonName is the certificate's CN (the Kubernetes user name).
	CommonName string
	Line       int
}

// Script is a shell, PowerShell or cmd script (or any text the command-line scanner read).
type Script struct {
	File  string
	Lines []string
	// FirewallOff are lines that turn the host firewall off.
	FirewallOff []int
	// Writes are data files the script writes whose text holds flags (another script reads
	// them at run time).
	Writes []ScriptWrite
	// UnitEnv are a systemd unit's (or drop-in's) Environment= assignments, UnitEnvFiles its
	// EnvironmentFile= paths (leading "-" removed), each with its line.
	UnitEnv      []UnitSetting
	UnitEnvFiles []UnitSetting
}

// UnitSetting is one name (or path) a systemd unit sets, at its line.
type UnitSetting struct {
	Name string
	Line int
}

// ScriptWrite is a data file a script writes with command-line flags in it.
type ScriptWrite struct {
	Line   int
	Target string
	Text   string
}

// SysctlFile is a sysctl.d-style file.
type SysctlFile struct {
	File   string
	Values map[string]SysctlValue
}

// SysctlValue is one key = value line.
type SysctlValue struct {
	Value string
	Line  int
}

// ModulesFile is a modules-load.d file (one kernel module per line).
type ModulesFile struct {
	File    string
	Modules map[string]int // module -> line
}

// DockerDaemon is a docker daemon.json.
type DockerDaemon struct {
	File               string
	InsecureRegistries []string
	CgroupDriver       string
	Pos                *Positions
}
