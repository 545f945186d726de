package rules

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/platform"
)

// windowsCNI reports whether a CNI conf drives an HNS plugin.
func windowsCNI(c *check.CNIConf) bool {
	for _, t := range []string{c.Type, c.Delegate} {
		switch t {
		case "win-bridge", "win-overlay", "wincni", "sdnbridge", "sdnoverlay", "nat":
			return true
		}
	}
	return false
}

func bridgeCNI(c *check.CNIConf) bool {
	return c.Type == "win-bridge" || c.Delegate == "win-bridge" || c.Type == "sdnbridge" || c.Type == "wincni"
}

func policyLoc(c *check.CNIConf, path string) check.Location {
	l := check.Location{File: c.File, Field: path}
	l.Line, l.Column = c.Pos.Locate(path)
	return l
}

// natExceptions returns the OutBoundNAT exception prefixes (and the policy path).
func natExceptions(c *check.CNIConf) ([]netip.Prefix, []string, string, bool) {
	var ps []netip.Prefix
	var raw []string
	path, found := "", false
	for _, p := range c.Policies {
		if !strings.EqualFold(p.Type, "OutBoundNAT") {
			continue
		}
		found = true
		if path == "" {
			path = p.Path
		}
		for _, e := range p.Exceptions {
			raw = append(raw, e)
			s := e
			if !strings.Contains(s, "/") {
				s += "/32"
			}
			if pp, err := netip.ParsePrefix(s); err == nil {
				ps = append(ps, pp.Masked())
			}
		}
	}
	return ps, raw, path, found
}

// clusterCIDRsFor returns the cluster CIDRs from the plan/spec or from the hand-written
// kube-proxy --cluster-cidr / flannel Network.
func clusterCIDRsFor(ctx *check.Context) ([]netip.Prefix, string) {
	if cc := ctx.ClusterCIDRs(); len(cc) > 0 {
		return cc, "the cluster's pod CIDRs"
	}
	for _, cl := range commandLines(ctx, platform.KubeProxy) {
		if f, ok := cl.Last("cluster-cidr"); ok && usable(f) {
			if ps := prefixes(f.Value); len(ps) > 0 {
				return ps, "kube-proxy --cluster-cidr"
			}
		}
	}
	for _, n := range ctx.FlannelNetConfs {
		if ps := prefixes(n.Network); len(ps) > 0 {
			return ps, "flannel Network"
		}
	}
	return nil, ""
}

func nodeSubnets(ctx *check.Context) []netip.Prefix {
	if ctx.Plan != nil {
		var out []netip.Prefix
		for _, s := range ctx.Plan.Networking.NodeSubnets {
			if p, err := netip.ParsePrefix(s); err == nil {
				out = append(out, p.Masked())
			}
		}
		return out
	}
	return nil
}

// minWindowsVNI is the lowest VXLAN VNI Windows overlay networking accepts.
const minWindowsVNI = 4096

var cniRules = []check.Rule{
	{
		ID: "KW1301", Name: "cni-network-name-mismatch", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "The CNI conf's name is not the HNS network's name",
		Why:       "win-bridge and win-overlay attach endpoints to the existing HNS network whose name equals the conf's name; with another name pod sandboxes fail.",
		Fix:       "Set \"name\" to the HNS network's name (the New-HNSNetwork -Name, e.g. l2bridge).",
		Reference: refSeed000 + " §2.4.2 (name = the vSwitch created earlier)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, c := range ctx.CNIConfs {
				if !windowsCNI(c) {
					continue
				}
				want, from := "", ""
				if ws := ctx.WindowsNodes(); len(ws) > 0 {
					want, from = ws[0].Windows.HNSNetworkName, "the plan's HNS network"
				} else {
					for _, u := range kubeProxyUnits(ctx) {
						if v := u.networkName(ctx); v.found && usable(check.Flag{Value: v.value, Resolved: true}) && v.value != "" {
							want, from = v.value, "kube-proxy's network name ("+v.via+")"
							break
						}
					}
				}
				if want != "" && !strings.EqualFold(c.Name, want) && c.Type != "flannel" {
					emit(check.Finding{Location: policyLoc(c, "name"), Message: fmt.Sprintf("CNI network %q but %s is %q", c.Name, from, want),
						Fix: fmt.Sprintf(`"name": %q`, want)})
				}
			}
		},
	},
	{
		ID: "KW1302", Name: "exceptionlist-missing-cluster-cidr", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "OutBoundNAT ExceptionList does not exempt the cluster (pod) CIDR",
		Why:       "Pod-to-pod traffic to other nodes is NATed to the node's address, breaking the Kubernetes network model (no NAT between pods) and NetworkPolicies.",
		Fix:       "Add the cluster CIDR to ExceptionList.",
		Reference: refSeed000 + " §2.4.2; " + refSeed001 + " (ExceptionList: cluster, service and management subnets)",
		Check:     checkExceptions(0),
	},
	{
		ID: "KW1303", Name: "exceptionlist-missing-service-cidr", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "OutBoundNAT ExceptionList does not exempt the service CIDR",
		Why:       "Traffic to ClusterIPs is NATed before kube-proxy's load balancer sees it; services from Windows pods fail.",
		Fix:       "Add the service CIDR to ExceptionList.",
		Reference: refSeed000 + " §2.4.2",
		Check:     checkExceptions(1),
	},
	{
		ID: "KW1304", Name: "exceptionlist-missing-node-subnet", Family: check.FamilyCNI, Severity: check.Warning,
		Summary:   "OutBoundNAT ExceptionList of an L2Bridge conf does not exempt the nodes' subnet",
		Why:       "Replies to nodes (kubelet probes, node-to-pod traffic) leave with the node's address instead of the pod's; probes and host-network clients see the wrong source.",
		Fix:       "Add the cluster NICs' subnet (the management subnet) to ExceptionList.",
		Reference: refSeed001 + " troubleshooting (ExceptionList example includes the management subnet)",
		Check:     checkExceptions(2),
	},
	{
		ID: "KW1305", Name: "exceptionlist-external-target", Family: check.FamilyCNI, Severity: check.Warning,
		Summary:   "OutBoundNAT ExceptionList exempts destinations outside the cluster",
		Why:       "Traffic to an exempted external address leaves with the pod IP, which the outside network cannot route back: \"my Windows pods cannot reach external resources\".",
		Fix:       "Remove the external range from ExceptionList.",
		Reference: refSeed001 + " troubleshooting: Windows pods cannot ping/reach external resources",
		Check: func(ctx *check.Context, emit check.Emitter) {
			cc, _ := clusterCIDRsFor(ctx)
			svc, hasSvc := ctx.ServiceCIDR()
			known := append([]netip.Prefix(nil), cc...)
			if hasSvc {
				known = append(known, svc)
			}
			known = append(known, nodeSubnets(ctx)...)
			for _, c := range ctx.CNIConfs {
				ps, raw, path, ok := natExceptions(c)
				if !ok {
					continue
				}
				for i, p := range ps {
					switch {
					case p.Bits() == 0:
						emit(check.Finding{Location: policyLoc(c, path), Message: fmt.Sprintf("ExceptionList contains %s: nothing is NATed", raw[min(i, len(raw)-1)])})
					case len(known) > 0 && ctx.Plan != nil && !covered(p, known):
						emit(check.Finding{Location: policyLoc(c, path), Message: fmt.Sprintf("ExceptionList contains %s, which is neither a cluster, service nor node subnet", p)})
					}
				}
			}
		},
	},
	{
		ID: "KW1306", Name: "missing-service-route-policy", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "win-bridge conf without a ROUTE/SDNRoute policy for the service CIDR with NeedEncap",
		Why:       "Service traffic must be encapsulated to the host for kube-proxy's load balancers on l2bridge; without the route policy ClusterIPs are unreachable from pods.",
		Fix:       `{"Name":"EndpointPolicy","Value":{"Type":"ROUTE","DestinationPrefix":"<service CIDR>","NeedEncap":true}} (SDNRoute for HNS v2).`,
		Reference: refSeed000 + " §2.4.2",
		Check: func(ctx *check.Context, emit check.Emitter) {
			svc, hasSvc := ctx.ServiceCIDR()
			for _, c := range ctx.CNIConfs {
				if !bridgeCNI(c) {
					continue
				}
				found := false
				for _, p := range c.Policies {
					t := strings.ToUpper(p.Type)
					if (t == "ROUTE" || t == "SDNROUTE") && p.NeedEncap {
						dp, err := netip.ParsePrefix(p.DestinationPrefix)
						if err == nil && (!hasSvc || dp.Masked() == svc) {
							found = true
						}
					}
				}
				if !found {
					msg := "no ROUTE/SDNRoute policy with NeedEncap"
					if hasSvc {
						msg += " for the service CIDR " + svc.String()
					}
					emit(check.Finding{Location: policyLoc(c, ""), Message: msg})
				}
			}
		},
	},
	{
		ID: "KW1307", Name: "missing-outbound-nat", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "Windows CNI conf without an OutBoundNAT policy",
		Why:       "Without OutBoundNAT, pod traffic to anything outside the cluster leaves with the pod IP, which the network cannot route back.",
		Fix:       `{"Name":"EndpointPolicy","Value":{"Type":"OutBoundNAT","ExceptionList":[<cluster CIDR>,<service CIDR>,<node subnet>]}}`,
		Reference: refSeed000 + " §2.4.2",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, c := range ctx.CNIConfs {
				if !windowsCNI(c) || c.Type == "wincni" || c.Type == "nat" {
					// the nat plugin attaches to an HNS NAT network, where WinNAT translates
					// every outbound flow itself; OutBoundNAT is for l2bridge/overlay
					// (https://learn.microsoft.com/virtualization/windowscontainers/container-networking/network-drivers-topologies,
					// "NAT"; microsoft/windows-container-networking plugins/nat)
					continue
				}
				if _, _, _, ok := natExceptions(c); !ok {
					emit(check.Finding{Location: policyLoc(c, ""), Message: fmt.Sprintf("%s conf %q has no OutBoundNAT policy", c.Type, c.Name)})
				}
			}
		},
	},
	{
		ID: "KW1308", Name: "multiple-cni-confs", Family: check.FamilyCNI, Severity: check.Warning,
		Summary:   "More than one CNI conf in one conf directory",
		Why:       "The runtime uses only the lexically first .conf/.conflist/.json file; the others are silently ignored.",
		Fix:       "Keep exactly one conf in the directory.",
		Reference: refSeed000 + " §2.4.2 (make sure the config dir holds no other file); libcni ConfFiles",
		Check: func(ctx *check.Context, emit check.Emitter) {
			byDir := map[string][]*check.CNIConf{}
			var dirs []string
			for _, c := range ctx.CNIConfs {
				if _, ok := byDir[c.Dir]; !ok {
					dirs = append(dirs, c.Dir)
				}
				byDir[c.Dir] = append(byDir[c.Dir], c)
			}
			for _, d := range dirs {
				cs := byDir[d]
				if len(cs) < 2 {
					continue
				}
				var names []string
				for _, c := range cs {
					names = append(names, filepath.Base(c.File))
				}
				for _, c := range cs[1:] {
					emit(check.Finding{Location: check.Location{File: c.File},
						Message: fmt.Sprintf("%s holds %s (%s); only %s is used", d, plural(len(cs), "CNI conf"), strings.Join(names, ", "), names[0])})
				}
			}
		},
	},
	{
		ID: "KW1309", Name: "old-wincni-plugin", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "The retired wincni.exe plugin",
		Why:       "wincni from microsoft/SDN is unmaintained: it mangles DNS suffixes (default.default.svc...), breaks teardown (\"no plugin name provided\") and ExceptionList handling.",
		Fix:       "Use win-bridge (or win-overlay) from containernetworking/plugins.",
		Reference: refSeed000 + " FAQ 7",
		Check: func(ctx *check.Context, emit check.Emitter) {
			// Until Windows support went GA (1.14) wincni was the documented plugin (the
			// microsoft/SDN guides of 2018); from then on the guides use win-bridge/win-overlay.
			if ctx.Version.Major == 1 && ctx.Version.Minor < 14 {
				return
			}
			isWincni := func(t string) bool { return strings.TrimSuffix(strings.ToLower(t), ".exe") == "wincni" }
			for _, c := range ctx.CNIConfs {
				if isWincni(c.Type) || isWincni(c.Delegate) {
					emit(check.Finding{Location: policyLoc(c, "type"), Message: fmt.Sprintf("conf %q uses type wincni", c.Name)})
				}
			}
		},
	},
	{
		ID: "KW1310", Name: "cni-dns-mismatch", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "The CNI conf's DNS server is not the cluster DNS Service IP",
		Why:       "Windows pods get their resolvers from the CNI conf; a wrong address makes every lookup of Service names fail.",
		Fix:       "dns.Nameservers: [<kube-dns Service IP>].",
		Reference: refSeed000 + " §2.4.2 (dns.Nameservers = kube-dns Service IP)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			want := ""
			if ctx.Plan != nil {
				want = ctx.Plan.Networking.ClusterDNS
			} else {
				for _, u := range kubeletUnits(ctx) {
					if v := u.lookup(ctx, "cluster-dns", "clusterDNS", func(d *check.KubeletConfigDoc) string { return strings.Join(d.Config.ClusterDNS, ",") }); v.found && v.value != "" {
						want = strings.Split(v.value, ",")[0]
						break
					}
				}
			}
			if want == "" {
				return
			}
			for _, c := range ctx.CNIConfs {
				if len(c.Nameservers) == 0 {
					continue
				}
				ok := false
				for _, n := range c.Nameservers {
					if n == want {
						ok = true
					}
				}
				if !ok {
					emit(check.Finding{Location: policyLoc(c, "dns"), Message: fmt.Sprintf("dns.Nameservers %v does not contain the cluster DNS %s", c.Nameservers, want),
						Fix: fmt.Sprintf(`"Nameservers": [%q]`, want)})
				}
			}
		},
	},
	{
		ID: "KW1311", Name: "cni-conf-extension", Family: check.FamilyCNI, Severity: check.Warning,
		Summary:   "A CNI conf file whose extension the runtime does not load",
		Why:       "Runtimes load only *.conf, *.conflist and *.json from the conf dir; any other name is ignored and the node has no network.",
		Fix:       "Rename the file to <name>.conf (single plugin) or <name>.conflist (list).",
		Reference: refSeed000 + " §2.4.2 (extension must be .conf); libcni ConfFiles",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, c := range ctx.CNIConfs {
				ext := strings.ToLower(filepath.Ext(c.File))
				switch ext {
				case ".template", ".tmpl", ".tpl", ".j2", ".in":
					continue // a template a tool renders into the real conf (K2s, Calico's cni.conf.template)
				}
				if ext != ".conf" && ext != ".conflist" && ext != ".json" {
					emit(check.Finding{Location: check.Location{File: c.File}, Message: fmt.Sprintf("%s has extension %q", filepath.Base(c.File), ext)})
				}
				if c.IsList && ext == ".conf" {
					emit(check.Finding{Location: check.Location{File: c.File}, Severity: check.Info,
						Message: fmt.Sprintf("%s is a plugin list but named .conf; runtimes read it as a list only as .conflist", filepath.Base(c.File))})
				}
			}
		},
	},
	{
		ID: "KW1312", Name: "flannel-vxlan-vni", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "flannel VXLAN VNI below 4096 with Windows nodes",
		Why:       "Windows overlay networking requires a VNI of 4096 or more; flannel on Windows cannot create the network otherwise.",
		Fix:       `"Backend": {"Type": "vxlan", "VNI": 4096, "Port": 4789}`,
		Reference: refSeed001 + " (Flannel VXLAN on Windows: VNI 4096, UDP 4789)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, n := range ctx.FlannelNetConfs {
				if n.Backend == "vxlan" && n.VNI < minWindowsVNI {
					vni := n.VNI
					what := fmt.Sprintf("VNI %d", vni)
					if vni == 0 {
						what = "no VNI (flannel's default is 1)"
					}
					emit(check.Finding{Location: check.Location{File: n.File, Field: "Backend.VNI", Line: n.Pos.Line("Backend.VNI")}, Message: what})
				}
			}
			if ctx.Plan != nil && ctx.Plan.Flannel != nil && ctx.Plan.Flannel.Backend == "vxlan" && ctx.Plan.Flannel.VNI < minWindowsVNI {
				emit(check.Finding{Location: ctx.SpecLoc("spec.linuxCNI.flannel.vni"), Message: fmt.Sprintf("planned VNI %d", ctx.Plan.Flannel.VNI)})
			}
		},
	},
	{
		ID: "KW1313", Name: "flannel-vxlan-port", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "flannel VXLAN port other than 4789 with Windows nodes",
		Why:       "Windows' VXLAN implementation uses UDP 4789 only; a different port leaves Windows and Linux nodes unable to talk.",
		Fix:       `"Port": 4789 in the net-conf every node reads (Linux flanneld defaults to the kernel's 8472).`,
		Reference: refSeed001 + " (Flannel VXLAN on Windows: VNI 4096, UDP 4789)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, n := range ctx.FlannelNetConfs {
				if n.Backend == "vxlan" && n.Port != 4789 {
					msg := fmt.Sprintf("Port %d", n.Port)
					if n.Port == 0 {
						// flannel's Linux vxlan backend leaves Port 0 to the kernel, which uses 8472
						// (flannel Documentation/backends.md: "Port ... Defaults to kernel default, currently 8472")
						msg = "no Port (flanneld on Linux nodes then uses the kernel's default, 8472)"
					}
					emit(check.Finding{Location: check.Location{File: n.File, Field: "Backend.Port", Line: n.Pos.Line("Backend.Port")}, Message: msg})
				}
			}
			if ctx.Plan != nil && ctx.Plan.Flannel != nil && ctx.Plan.Flannel.Backend == "vxlan" && ctx.Plan.Flannel.Port != 0 && ctx.Plan.Flannel.Port != 4789 {
				emit(check.Finding{Location: ctx.SpecLoc("spec.linuxCNI.flannel.port"), Message: fmt.Sprintf("planned port %d", ctx.Plan.Flannel.Port)})
			}
		},
	},
	{
		ID: "KW1314", Name: "flannel-network-mismatch", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "flannel net-conf Network differs from the cluster CIDR",
		Why:       "flanneld leases node subnets from Network; if it differs from kube-controller-manager's --cluster-cidr, pods get addresses the rest of the cluster does not route (the seed 004 pitfall).",
		Fix:       `"Network": "<cluster CIDR>"`,
		Reference: "seed 004 (replace 10.244.0.0/16 with the cluster CIDR in net-conf.json)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			want := ctx.ClusterCIDRs()
			if len(want) == 0 {
				for _, cl := range commandLines(ctx, platform.KubeProxy) {
					if f, ok := cl.Last("cluster-cidr"); ok && usable(f) {
						want = prefixes(f.Value)
					}
				}
			}
			if len(want) == 0 {
				return
			}
			for _, n := range ctx.FlannelNetConfs {
				got := prefixes(n.Network)
				if len(got) != 1 || got[0] != want[0] {
					emit(check.Finding{Location: check.Location{File: n.File, Field: "Network", Line: n.Pos.Line("Network")},
						Message: fmt.Sprintf("Network %q but the cluster CIDR is %s", n.Network, want[0]), Fix: fmt.Sprintf(`"Network": %q`, want[0].String())})
				}
			}
		},
	},
	{
		ID: "KW1315", Name: "cni-type-vs-design", Family: check.FamilyCNI, Severity: check.Error,
		Summary:   "The CNI plugin does not match the network design (win-bridge vs win-overlay)",
		Why:       "win-bridge needs an L2Bridge HNS network and routable pod CIDRs, win-overlay an Overlay network and VXLAN; the wrong one never gets an endpoint.",
		Fix:       "Use the plugin the plan names for the node (kubewin render writes it).",
		Reference: refSeed001 + " (network modes table)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			ws := ctx.WindowsNodes()
			if len(ws) == 0 {
				return
			}
			want := ws[0].Windows.HNSNetworkType
			for _, c := range ctx.CNIConfs {
				t := c.Type
				if t == "flannel" {
					t = c.Delegate
				}
				switch {
				case strings.EqualFold(want, "Overlay") && (t == "win-bridge" || t == "sdnbridge"):
					emit(check.Finding{Location: policyLoc(c, "type"), Message: fmt.Sprintf("%s in an overlay design", t)})
				case strings.EqualFold(want, "L2Bridge") && (t == "win-overlay" || t == "sdnoverlay"):
					emit(check.Finding{Location: policyLoc(c, "type"), Message: fmt.Sprintf("%s in an L2Bridge design", t)})
				}
			}
		},
	},
	{
		ID: "KW1316", Name: "portmappings-capability-missing", Family: check.FamilyCNI, Severity: check.Info,
		Summary:   "Windows CNI conf without the portMappings capability",
		Why:       "hostPort in pod specs is silently ignored unless the plugin advertises portMappings.",
		Fix:       `"capabilities": {"portMappings": true}`,
		Reference: refSeed000 + " §2.4.2 (capabilities)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, c := range ctx.CNIConfs {
				if windowsCNI(c) && c.Type != "wincni" && !c.Capabilities["portMappings"] {
					emit(check.Finding{Location: policyLoc(c, "capabilities"), Message: fmt.Sprintf("conf %q does not enable portMappings", c.Name)})
				}
			}
		},
	},
	{
		ID: "KW1317", Name: "dns-search-incomplete", Family: check.FamilyCNI, Severity: check.Warning,
		Summary:   "The CNI conf's DNS search list lacks the svc.<cluster domain> suffix",
		Why:       "Windows resolves short Service names only through the search list; without svc.<domain> pods must use fully qualified names.",
		Fix:       `"Search": ["<ns>.svc.<domain>", "svc.<domain>", "<domain>"]`,
		Reference: refSeed000 + " Known issues; " + refSeed001 + " (DNS limitations)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			domain := "cluster.local"
			if ctx.Plan != nil && ctx.Plan.Networking.ClusterDomain != "" {
				domain = ctx.Plan.Networking.ClusterDomain
			}
			for _, c := range ctx.CNIConfs {
				if !windowsCNI(c) || len(c.Search) == 0 {
					continue
				}
				ok := false
				for _, s := range c.Search {
					if strings.EqualFold(strings.TrimSuffix(s, "."), "svc."+domain) {
						ok = true
					}
				}
				if !ok {
					emit(check.Finding{Location: policyLoc(c, "dns"), Message: fmt.Sprintf("dns.Search %v has no svc.%s", c.Search, domain)})
				}
			}
		},
	},
}

// checkExceptions checks that exceptions cover: 0 cluster CIDRs, 1 service CIDR, 2 node subnets.
// overlayConf reports whether a CNI conf attaches pods to an Overlay (VXLAN) network:
// win-overlay or sdnoverlay, directly or as flannel's delegate.
func overlayConf(c *check.CNIConf) bool {
	t := c.Type
	if t == "flannel" {
		t = c.Delegate
	}
	return t == "win-overlay" || t == "sdnoverlay"
}

func checkExceptions(which int) func(*check.Context, check.Emitter) {
	return func(ctx *check.Context, emit check.Emitter) {
		var want []netip.Prefix
		what := ""
		switch which {
		case 0:
			want, what = clusterCIDRsFor(ctx)
		case 1:
			if s, ok := ctx.ServiceCIDR(); ok {
				want, what = []netip.Prefix{s}, "the service CIDR"
			}
		case 2:
			want, what = nodeSubnets(ctx), "the node subnet"
		}
		if len(want) == 0 {
			return
		}
		for _, c := range ctx.CNIConfs {
			ps, _, path, ok := natExceptions(c)
			if !ok {
				continue
			}
			if which == 2 && overlayConf(c) {
				// on an Overlay network other hosts are reached through VXLAN from the pod's
				// own address only when exempted; microsoft/SDN's helper.psm1 and k3s/rke2
				// exempt just the cluster and service CIDRs there (kubewin's render does too):
				// the node subnet is an L2Bridge matter
				continue
			}
			for _, w := range want {
				if !covered(w, ps) {
					emit(check.Finding{Location: policyLoc(c, path),
						Message: fmt.Sprintf("ExceptionList %s does not cover %s %s", joinPrefixes(ps), what, w),
						Fix:     fmt.Sprintf("add %q to ExceptionList", w.String())})
				}
			}
		}
	}
}
