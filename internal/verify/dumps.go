package verify

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DumpSet is the real state captured from nodes, overriding the planned state per node.
type DumpSet struct {
	Files []*DumpFile
}

// DumpFile is one parsed dump attributed to a node.
type DumpFile struct {
	Node       string
	Path       string
	Kind       string // route -n, ip route, hns, keepalived
	Route      *RouteDump
	HNS        *HNSDump
	Keepalived *KeepalivedDump
}

// ParseDump recognises a dump by its content: ConvertTo-Json output (HNS), keepalived's
// SIGUSR1 data dump, `route -n` or `ip route` output.
func ParseDump(node, path string, data []byte) (*DumpFile, error) {
	f := &DumpFile{Node: node, Path: path}
	text, err := decodeText(data)
	if err != nil {
		return nil, dumpErr(path, 1, "%v", err)
	}
	trimmed := bytes.TrimLeft(text, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return nil, dumpErr(path, 1, "empty dump")
	case bytes.Contains(text, []byte("------< ")) || bytes.Contains(text, []byte("VRRP Instance = ")):
		f.Kind = "keepalived"
		f.Keepalived, err = ParseKeepalived(path, text)
	case bytes.Contains(text, []byte("Kernel IP routing table")) || bytes.Contains(text, []byte("Destination     Gateway")) || bytes.HasPrefix(trimmed, []byte("Destination")):
		f.Kind = "route -n"
		f.Route, err = ParseRouteN(path, text)
	case trimmed[0] == '[' || trimmed[0] == '{':
		f.Kind = "hns"
		f.HNS, err = ParseHNS(path, text)
	default:
		f.Kind = "ip route"
		f.Route, err = ParseIPRoute(path, text)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// LoadDumpFile reads and parses FILE for --dump NODE=FILE.
func LoadDumpFile(node, path string) (*DumpFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read dump: %w", err)
	}
	return ParseDump(node, path, data)
}

// LoadDumpDir reads DIR/<node>/<file>: every regular file under a node's directory is a dump
// of that node, recognised by content. Files directly in DIR are an error (they name no node).
func LoadDumpDir(dir string) ([]*DumpFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read dump directory: %w", err)
	}
	var out []*DumpFile
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			return nil, dumpErr(p, 0, "a dump directory holds one sub-directory per node (%s/<node>/<file>); this file names no node", dir)
		}
		files, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("read dump directory: %w", err)
		}
		for _, fe := range files {
			if fe.IsDir() || strings.HasPrefix(fe.Name(), ".") {
				continue
			}
			f, err := LoadDumpFile(e.Name(), filepath.Join(p, fe.Name()))
			if err != nil {
				return nil, err
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// applyDumps attributes route and HNS dumps to nodes, checking they fit the plan.
func (m *Model) applyDumps(ds *DumpSet) error {
	var names []string
	for _, n := range m.Nodes {
		if n.OS == osLinux || n.OS == osWindows {
			names = append(names, n.Name)
		}
	}
	routeFile := map[*Node]string{}
	for _, f := range ds.Files {
		n := m.byName[f.Node]
		if n == nil || (n.OS != osLinux && n.OS != osWindows) {
			return dumpErr(f.Path, 0, "dump for node %q, which is not in the plan (nodes: %s)", f.Node, strings.Join(clipList(names, 12), ", "))
		}
		switch {
		case f.Route != nil:
			if n.OS != osLinux {
				return dumpErr(f.Path, 0, "%s dump for %s, a %s node (route dumps are for Linux nodes)", f.Kind, n.Name, n.OS)
			}
			if prev, ok := routeFile[n]; ok {
				return dumpErr(f.Path, 0, "contradictory dumps: a second routing table for %s (the first is %s)", n.Name, prev)
			}
			routeFile[n] = f.Path
			n.DumpRoutes = f.Route
			n.Sources = append(n.Sources, "dump "+f.Path)
			for _, a := range f.Route.Local {
				if o := m.nodeIPs[a]; o != nil && o != n {
					return dumpErr(f.Path, 0, "contradictory dump: %s's table lists %s as local, but it is %s's node IP", n.Name, a, o.Name)
				}
			}
			m.Notes = append(m.Notes, f.Route.Notes...)
		case f.HNS != nil:
			if n.OS != osWindows {
				return dumpErr(f.Path, 0, "HNS dump for %s, a %s node (HNS dumps are for Windows nodes)", n.Name, n.OS)
			}
			n.Sources = append(n.Sources, "dump "+f.Path)
		case f.Keepalived != nil:
			if n.OS != osLinux {
				return dumpErr(f.Path, 0, "keepalived dump for %s, a %s node", n.Name, n.OS)
			}
		}
	}
	if err := m.discoverCalicoBlocks(ds); err != nil {
		return err
	}
	for _, n := range m.Nodes {
		if n.Win == nil {
			continue
		}
		var files []*DumpFile
		for _, f := range ds.Files {
			if f.Node == n.Name && f.HNS != nil {
				files = append(files, f)
			}
		}
		if len(files) > 0 {
			if err := m.applyHNS(n, files); err != nil {
				return err
			}
		}
	}
	return nil
}

func clipList(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(slices.Clone(s[:n]), fmt.Sprintf("... %d more", len(s)-n))
}

// discoverCalicoBlocks reads Calico's real IPAM blocks from route dumps: a node's own blocks
// are its blackhole routes of the block size, its pods the cali* /32 routes, and other
// nodes' blocks the block-size routes via their IPs. Calico ignores node.spec.podCIDR, so
// these replace the planned pod CIDRs of the nodes they name.
func (m *Model) discoverCalicoBlocks(ds *DumpSet) error {
	cp := m.Plan.Calico
	if cp == nil || m.Plan.Cluster.LinuxCNI != "calico" {
		return nil
	}
	var pools []Prefix
	for _, s := range cp.IPPools {
		if p, err := ParsePrefix(s); err == nil {
			pools = append(pools, p)
		}
	}
	type owner struct {
		n  *Node
		at string
	}
	blocks := map[Prefix]owner{}
	byNode := map[*Node][]Prefix{}
	// A complete table shows every block; a partial one ("...") only some, which then add to
	// the planned ranges instead of replacing them.
	complete := false
	pods := map[*Node][]Addr{}
	claim := func(p Prefix, n *Node, at string) error {
		if o, ok := blocks[p]; ok {
			if o.n != n {
				file, line := splitAt(at)
				return dumpErr(file, line, "contradictory dumps: Calico block %s belongs to %s here but to %s at %s", p, n.Name, o.n.Name, o.at)
			}
			return nil
		}
		blocks[p] = owner{n, at}
		byNode[n] = append(byNode[n], p)
		return nil
	}
	for _, f := range ds.Files {
		if f.Route == nil {
			continue
		}
		self := m.byName[f.Node]
		if !f.Route.Partial {
			complete = true
		}
		for _, r := range f.Route.Routes {
			inPool := false
			for _, p := range pools {
				if p.Covers(r.Dst) {
					inPool = true
				}
			}
			if !inPool {
				continue
			}
			switch {
			case r.Type == RouteBlackhole && int(r.Dst.Len) == cp.BlockSize:
				if err := claim(r.Dst, self, r.Origin); err != nil {
					return err
				}
			case r.Kind == DevPod && r.Dst.Len == 32:
				pods[self] = append(pods[self], r.Dst.Addr)
			case r.Type == RouteUnicast && int(r.Dst.Len) == cp.BlockSize && r.Via != 0:
				if o := m.nodeIPs[r.Via]; o != nil && o.OS == osLinux {
					if err := claim(r.Dst, o, r.Origin); err != nil {
						return err
					}
				}
			}
		}
	}
	for n, bs := range byNode {
		if !complete {
			for _, r := range n.PodRanges {
				if !slices.Contains(bs, r) {
					bs = append(bs, r)
				}
			}
		}
		slices.SortFunc(bs, func(a, b Prefix) int { return cmpPrefix(a, b) })
		keep := !complete && len(n.Pods) > 0
		n.PodRanges = bs
		if keep {
			continue
		}
		n.Pods = nil
		if ips := pods[n]; len(ips) > 0 {
			slices.Sort(ips)
			pod := &Pod{Node: n, Name: "pod", IP: ips[0], Count: len(ips), Origin: "cali* routes in " + srcOf(n)}
			if len(ips) > 1 {
				pod.Sib = ips[1]
			}
			n.Pods = []*Pod{pod}
		}
		n.Sources = append(n.Sources, "calico blocks from dumps")
	}
	return nil
}

func splitAt(at string) (string, int) {
	i := strings.LastIndexByte(at, ':')
	if i < 0 {
		return at, 0
	}
	var line int
	fmt.Sscanf(at[i+1:], "%d", &line)
	return at[:i], line
}

func cmpPrefix(a, b Prefix) int {
	if a.Addr != b.Addr {
		if a.Addr < b.Addr {
			return -1
		}
		return 1
	}
	return int(a.Len) - int(b.Len)
}

// applyHNS overrides a Windows node's HNS state with Get-HnsNetwork/-Endpoint/-PolicyList dumps.
func (m *Model) applyHNS(n *Node, files []*DumpFile) error {
	w := n.Win
	var nets []HNSNetwork
	var eps []HNSEndpoint
	var pls []HNSPolicyList
	var netFile, epFile, plFile string
	for _, f := range files {
		if len(f.HNS.Networks) > 0 {
			nets = append(nets, f.HNS.Networks...)
			netFile = f.Path
		}
		if len(f.HNS.Endpoints) > 0 {
			eps = append(eps, f.HNS.Endpoints...)
			epFile = f.Path
		}
		if len(f.HNS.PolicyLists) > 0 {
			pls = append(pls, f.HNS.PolicyLists...)
			plFile = f.Path
		}
	}
	netID := ""
	if nets != nil {
		var found *HNSNetwork
		for i := range nets {
			if strings.EqualFold(nets[i].Name, w.NetName) {
				found = &nets[i]
			}
		}
		if found == nil {
			w.Missing = fmt.Sprintf("%s has no HNS network named %q (%s): win-bridge cannot attach pods and kube-proxy has no network", n.Name, w.NetName, netFile)
		} else {
			netID = strings.ToLower(found.ID)
			if found.Type != "" {
				w.NetType = found.Type
			}
			if found.Adapter != "" {
				if ifc := n.iface(found.Adapter); ifc != nil {
					w.Adapter = ifc
				} else if !strings.HasPrefix(found.Adapter, "vEthernet") {
					m.Notes = append(m.Notes, fmt.Sprintf("%s:%d: network adapter %q of %s is not a NIC of %s in the spec; the cluster NIC is assumed", netFile, found.Line, found.Adapter, found.Name, n.Name))
				}
			}
			if len(found.Subnets) > 0 {
				sn := found.Subnets[0]
				if sn.Prefix != w.Subnet {
					m.Notes = append(m.Notes, fmt.Sprintf("%s:%d: HNS network %s has subnet %s but the plan gives %s pod CIDR %s", netFile, found.Line, found.Name, sn.Prefix, n.Name, w.Subnet))
					w.Subnet = sn.Prefix
					n.PodRanges = []Prefix{sn.Prefix}
					if w.hostProcess != "" {
						m.hostProcessResubnet(n)
					}
				}
				if sn.Gateway != 0 && sn.Gateway != w.Gateway {
					m.Notes = append(m.Notes, fmt.Sprintf("%s:%d: HNS network %s has gateway %s, the plan %s", netFile, found.Line, found.Name, sn.Gateway, w.Gateway))
					if w.PodGateway == w.Gateway {
						w.PodGateway = sn.Gateway
					}
					w.Gateway = sn.Gateway
				}
			}
		}
	}
	if eps != nil {
		if err := m.applyEndpoints(n, eps, epFile, netID); err != nil {
			return err
		}
	}
	if pls != nil {
		w.LB = map[lbKey][]Addr{}
		w.LBFile = plFile
		ipOf := map[string]Addr{}
		for _, e := range eps {
			ipOf[strings.ToLower(e.ID)] = e.IP
		}
		for _, pl := range pls {
			var backends []Addr
			for _, id := range pl.Endpoints {
				if a, ok := ipOf[id]; ok {
					backends = append(backends, a)
				}
			}
			for _, lb := range pl.LBs {
				pr := TCP
				switch lb.Protocol {
				case 17:
					pr = UDP
				case 6:
				default:
					continue
				}
				for _, v := range lb.VIPs {
					w.LB[lbKey{VIP: v, Proto: pr, Port: lb.ExternalPort}] = backends
				}
			}
		}
	}
	return nil
}

func (m *Model) applyEndpoints(n *Node, eps []HNSEndpoint, file, netID string) error {
	w := n.Win
	seen := map[Addr]int{}
	groups := map[string]*Pod{}
	var order []string
	var pods []*Pod
	hostEP := Addr(0)
	remote := 0
	for _, e := range eps {
		if netID != "" && e.NetworkID != "" && !strings.EqualFold(e.NetworkID, netID) {
			continue
		}
		if netID == "" && e.Network != "" && !strings.EqualFold(e.Network, w.NetName) {
			continue
		}
		if !w.Subnet.Contains(e.IP) || m.hostProcessRemoteEndpoint(n, e) {
			if e.IsRemote {
				remote++
			}
			continue
		}
		if prev, ok := seen[e.IP]; ok && !e.IsRemote {
			return dumpErr(file, e.Line, "contradictory dump: a second endpoint with address %s (the first at line %d)", e.IP, prev)
		}
		seen[e.IP] = e.Line
		at := fmt.Sprintf("%s:%d", file, e.Line)
		if strings.EqualFold(e.Name, w.HostEPName) || e.IP == w.HostEP {
			hostEP = e.IP
			continue
		}
		ep := &EndpointPolicy{Gateway: e.Gateway, Origin: "HNS endpoint " + e.ID + " (" + at + ")"}
		if ep.Gateway == 0 {
			ep.Gateway = w.PodGateway
		}
		if e.OutboundNAT != nil {
			ep.OutboundNAT = true
			ep.Exceptions = e.OutboundNAT.Exceptions
		}
		ep.Routes = e.Routes
		if e.IsRemote {
			pods = append(pods, &Pod{Node: n, Name: "endpoint-" + shortID(e.ID), IP: e.IP, Count: 1, EP: ep, Origin: at,
				Broken: fmt.Sprintf("HNS endpoint %s (%s) on %s has IsRemoteEndpoint=true although %s is in %s's own pod subnet %s (%s): HNS treats this local pod as remote and does not switch its traffic to or from its port (seed 000 FAQ 6: win-bridge on 1909 with kube-proxy running as LocalSystem; run kube-proxy as NT AUTHORITY\\NetworkService)",
					shortID(e.ID), e.IP, n.Name, e.IP, n.Name, w.Subnet, at)})
			continue
		}
		key := podSig(&Pod{Node: n, EP: ep, Sib: 1})
		if p := groups[key]; p != nil {
			p.Count++
			if p.Sib == 0 {
				p.Sib = e.IP
			}
			continue
		}
		p := &Pod{Node: n, Name: "endpoint-" + shortID(e.ID), IP: e.IP, Count: 1, EP: ep, Origin: at}
		groups[key] = p
		order = append(order, key)
	}
	for _, k := range order {
		pods = append(pods, groups[k])
	}
	slices.SortStableFunc(pods, func(a, b *Pod) int { return int(a.IP) - int(b.IP) })
	n.Pods = pods
	w.HostEP = hostEP
	if hostEP == 0 && !w.HostRoutePolicy {
		m.Notes = append(m.Notes, fmt.Sprintf("%s: %s has no host endpoint %q in its HNS network: the host has no interface in its pod subnet", file, n.Name, w.HostEPName))
		if w.GatewayHolder == "windows-host" {
			w.PodGateway = 0
		}
	}
	if remote > 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("%s: %d remote endpoints of %s (kube-proxy's service backends on other nodes) are not pods of this node", file, remote, n.Name))
	}
	return nil
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
