package verify

import "fmt"

// calicoState holds the routes Calico's BGP mesh (BIRD) programs on every Linux node: each
// node's IPAM blocks via that node, over tunl0 with IPIP (Always, or CrossSubnet across
// subnets) or directly; and, when the plan says so, the connected route of each gateway VIP
// holder (seed 000 §2.6: "10.160.11.0 via 100.100.126.204 dev tunl0" on master1).
type calicoState struct {
	m       *Model
	mode    string // Always, CrossSubnet, Never (of ipipMode, or of vxlanMode when vxlan)
	vxlan   bool
	exports bool
	// tables by source segment for CrossSubnet; key nil otherwise.
	tables map[*Segment]*Table
}

func newCalico(m *Model) *calicoState {
	c := &calicoState{m: m, mode: "Always", exports: true, tables: map[*Segment]*Table{}}
	if cp := m.Plan.Calico; cp != nil {
		if cp.IPIPMode != "" {
			c.mode = cp.IPIPMode
		}
		c.exports = cp.ExportsConnectedRoutes
	}
	if v := m.routing.calicoVXLAN; v != "" {
		// VXLAN pools: Felix programs "block via <node> dev vxlan.calico onlink" routes from the
		// IPAM data and BIRD is not run (calico_backend vxlan), so no connected route of a VIP
		// holder is exported (docs.tigera.io, Overlay networking: VXLAN needs no BGP).
		c.mode, c.vxlan, c.exports = v, true, false
	}
	return c
}

// exportsVIP reports whether the other Linux nodes install the holder's exported route to p:
// not with Felix programming cluster routes when p lies in an IP pool (BIRD's kernel filter
// then rejects pool routes and Felix programs IPAM blocks only).
func (c *calicoState) exportsVIP(p Prefix) bool {
	if !c.exports {
		return false
	}
	if c.m.routing.felixClusterRoutes {
		for _, pool := range c.m.routing.pools {
			if pool.Overlaps(p) {
				return false
			}
		}
	}
	return true
}

func (c *calicoState) key(n *Node) *Segment {
	if c.mode == "CrossSubnet" && n.Cluster != nil {
		return n.Cluster.Seg
	}
	return nil
}

func (c *calicoState) route(src *Segment, dst Prefix, via *Node, origin string) Route {
	r := Route{Dst: dst, Via: via.IP(), Origin: origin}
	viaSeg := (*Segment)(nil)
	if via.Cluster != nil {
		viaSeg = via.Cluster.Seg
	}
	if c.mode == "Always" || (c.mode == "CrossSubnet" && viaSeg != src) {
		r.Dev, r.Kind = "tunl0", DevIPIP
		if c.vxlan {
			r.Dev, r.Kind = "vxlan.calico", DevVXLAN
		}
	}
	return r
}

// rebuild recomputes every shared table and points Linux nodes at theirs.
func (c *calicoState) rebuild() {
	c.tables = map[*Segment]*Table{}
	for _, n := range c.m.Nodes {
		if n.OS != osLinux && !c.windowsConsumer(n) {
			continue
		}
		k := c.key(n)
		if c.tables[k] == nil {
			c.tables[k] = &Table{}
		}
	}
	for k, t := range c.tables {
		for _, y := range c.m.Nodes {
			c.addNodeTo(t, k, y)
		}
		if c.exports {
			for _, g := range c.m.Groups {
				for _, in := range g.Instances {
					c.exportTo(t, k, in)
				}
			}
		}
	}
	for _, n := range c.m.Nodes {
		if n.OS == osLinux || c.windowsConsumer(n) {
			n.cni = c.tables[c.key(n)]
			if n.FelixDown != "" {
				n.cni = nil
			}
			n.assemble()
		}
	}
}

// windowsConsumer reports whether a Windows node's host takes Calico's routes: calico/hostprocess
// with BGP and no encapsulation (the node-to-node mesh carries every block, docs.tigera.io
// windows-calico/requirements; on Windows the BGP router confd configures,
// confd/windows-packaging/config-bgp.psm1). With VXLAN its HNS network's RemoteSubnetRoutes do the job
// (overlayPeer); IP-in-IP does not exist on Windows (windows-calico/limitations).
func (c *calicoState) windowsConsumer(n *Node) bool {
	return n.Win != nil && c.m.calicoHostProcess() && !c.vxlan && c.mode == "Never" && n.Win.NetType != "Overlay"
}

// windowsPeer reports whether Linux nodes route to a Windows node's blocks (calico/hostprocess:
// Felix programs a route to every VTEP's block with VXLAN, BGP carries them without).
func (c *calicoState) windowsPeer(y *Node) bool {
	return y.Win != nil && c.m.calicoHostProcess()
}

func (c *calicoState) addNodeTo(t *Table, k *Segment, y *Node) {
	if y.Down || (y.OS == osLinux && y.FelixDown != "") || (y.OS != osLinux && !c.windowsPeer(y)) {
		return
	}
	how := "calico BGP"
	if c.vxlan {
		how = "calico VXLAN (Felix route to the VTEP)"
	}
	for _, r := range y.PodRanges {
		t.Add(c.route(k, r, y, how+": block "+r.String()+" of "+y.Name))
	}
}

func (c *calicoState) exportTo(t *Table, k *Segment, in *Instance) {
	for _, v := range in.VIPs {
		p := prefixOf(v.Addr, v.Len)
		t.Remove(p)
		if in.Holder != nil && in.Holder.OS == osLinux && in.Holder.FelixDown == "" && v.Len < 32 && c.exportsVIP(p) {
			t.Add(c.route(k, p, in.Holder, fmt.Sprintf("calico BGP: connected route of VIP %s exported by its holder %s", v.Addr, in.Holder.Name)))
		}
	}
}

// holderChanged updates the exported routes of one instance.
func (c *calicoState) holderChanged(in *Instance) {
	if !c.exports {
		return
	}
	for k, t := range c.tables {
		c.exportTo(t, k, in)
	}
}

// nodeAdded adds a joining Linux node's blocks.
func (c *calicoState) nodeAdded(n *Node) {
	if n.OS != osLinux && !c.windowsPeer(n) {
		return
	}
	if n.OS != osLinux && !c.windowsConsumer(n) {
		for kk, t := range c.tables {
			c.addNodeTo(t, kk, n)
		}
		return
	}
	k := c.key(n)
	if c.tables[k] == nil {
		c.rebuild()
		return
	}
	for kk, t := range c.tables {
		c.addNodeTo(t, kk, n)
	}
	n.cni = c.tables[k]
	if n.FelixDown != "" {
		n.cni = nil
	}
	n.assemble()
}

// nodeRemoved withdraws a dead node's blocks (BGP session down).
func (c *calicoState) nodeRemoved(n *Node) {
	for _, t := range c.tables {
		for _, r := range n.PodRanges {
			if e := t.Exact(r); e != nil && e.Via == n.IP() {
				t.Remove(r)
			}
		}
	}
}

// flannelState holds flanneld's routes: every participant's subnet via its IP (host-gw) or
// via flannel.1 to its VTEP (vxlan). Windows nodes participate in the flannel/* designs, where
// flanneld runs on them too.
type flannelState struct {
	m       *Model
	backend string
	table   *Table
}

func newFlannel(m *Model) *flannelState {
	f := &flannelState{m: m, backend: "host-gw"}
	if m.Plan.Flannel != nil && m.Plan.Flannel.Backend != "" {
		f.backend = m.Plan.Flannel.Backend
	}
	return f
}

func (f *flannelState) participates(n *Node) bool {
	switch n.OS {
	case osLinux:
		return f.m.Plan.Cluster.LinuxCNI == "flannel" || len(f.m.Design) > 8 && f.m.Design[:8] == "flannel/"
	case osWindows:
		return len(f.m.Design) > 8 && f.m.Design[:8] == "flannel/"
	}
	return false
}

func (f *flannelState) route(y *Node, r Prefix) Route {
	rt := Route{Dst: r, Via: y.IP(), Origin: "flannel " + f.backend + ": subnet lease of " + y.Name}
	if f.backend == "vxlan" {
		rt.Dev, rt.Kind = "flannel.1", DevVXLAN
	}
	return rt
}

func (f *flannelState) rebuild() {
	f.table = &Table{}
	for _, y := range f.m.Nodes {
		f.add(y)
	}
	for _, n := range f.m.Nodes {
		if f.participates(n) && (n.OS == osLinux || f.backend == "host-gw") {
			n.cni = f.table
			n.assemble()
		}
	}
}

func (f *flannelState) add(y *Node) {
	if !f.participates(y) || y.Down {
		return
	}
	for _, r := range y.PodRanges {
		f.table.Add(f.route(y, r))
	}
}

func (f *flannelState) nodeAdded(n *Node) {
	f.add(n)
	if f.participates(n) && (n.OS == osLinux || f.backend == "host-gw") {
		n.cni = f.table
		n.assemble()
	}
}

func (f *flannelState) nodeRemoved(n *Node) {
	for _, r := range n.PodRanges {
		if e := f.table.Exact(r); e != nil && e.Via == n.IP() {
			f.table.Remove(r)
		}
	}
}
