package gateway

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func winNode(name string, cidrs ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Spec.PodCIDRs = cidrs
	if len(cidrs) > 0 {
		n.Spec.PodCIDR = cidrs[0]
	}
	return n
}

func calicoPool(name, cidr string, block int, disabled bool) CalicoPool {
	return CalicoPool{Name: name, CIDR: netip.MustParsePrefix(cidr), BlockSize: block, Disabled: disabled}
}

func TestDesiredCalicoReservation(t *testing.T) {
	def := calicoPool("default-ipv4-ippool", "10.244.0.0/16", 0, false)
	tests := []struct {
		name      string
		pools     []CalicoPool
		nodes     []*corev1.Node
		want      []string
		wantSmall []string // "node podCIDR" of the block-size findings
		invalid   []string
	}{
		{name: "inside and outside the pool", pools: []CalicoPool{def},
			nodes: []*corev1.Node{winNode("win-b", "10.244.11.0/24"), winNode("win-a", "10.244.10.0/24"), winNode("win-out", "172.20.5.0/24")},
			want:  []string{"10.244.10.0/24", "10.244.11.0/24"}},
		{name: "sorted by address, not as text", pools: []CalicoPool{calicoPool("big", "10.0.0.0/8", 26, false)},
			nodes: []*corev1.Node{winNode("w1", "10.100.0.0/24"), winNode("w2", "10.9.0.0/24"), winNode("w3", "10.10.0.0/24")},
			want:  []string{"10.9.0.0/24", "10.10.0.0/24", "10.100.0.0/24"}},
		{name: "a CIDR shared by two nodes is reserved once", pools: []CalicoPool{def},
			nodes: []*corev1.Node{winNode("old", "10.244.10.0/24"), winNode("new", "10.244.10.0/24")},
			want:  []string{"10.244.10.0/24"}},
		{name: "disabled pool reserves nothing", pools: []CalicoPool{calicoPool("old", "10.250.0.0/16", 26, true)},
			nodes: []*corev1.Node{winNode("w", "10.250.3.0/24")}},
		{name: "overlapping one of two pools", pools: []CalicoPool{def, calicoPool("second", "10.96.64.0/18", 26, false)},
			nodes: []*corev1.Node{winNode("w1", "10.96.64.0/24"), winNode("w2", "10.97.0.0/24")},
			want:  []string{"10.96.64.0/24"}},
		{name: "pod CIDR larger than the pool still overlaps", pools: []CalicoPool{calicoPool("small", "10.244.10.0/26", 26, false)},
			nodes: []*corev1.Node{winNode("w", "10.244.0.0/16")},
			want:  []string{"10.244.0.0/16"}},
		{name: "pod CIDR smaller than the block size is reserved and reported", pools: []CalicoPool{def},
			nodes: []*corev1.Node{winNode("w", "10.244.10.0/27")},
			want:  []string{"10.244.10.0/27"}, wantSmall: []string{"w 10.244.10.0/27"}},
		{name: "pool block size /28 fits a /27 pod CIDR", pools: []CalicoPool{calicoPool("p", "10.244.0.0/16", 28, false)},
			nodes: []*corev1.Node{winNode("w", "10.244.10.0/27")},
			want:  []string{"10.244.10.0/27"}},
		{name: "unmasked pod CIDR is masked", pools: []CalicoPool{def},
			nodes: []*corev1.Node{winNode("w", "10.244.10.7/24")},
			want:  []string{"10.244.10.0/24"}},
		{name: "dual-stack: IPv4 before IPv6, IPv6 default block /122", pools: []CalicoPool{def, calicoPool("v6", "fd00:10:244::/56", 0, false)},
			nodes: []*corev1.Node{winNode("w", "fd00:10:244:1::/64", "10.244.3.0/24"), winNode("w6", "fd00:10:244:2::/123")},
			want:  []string{"10.244.3.0/24", "fd00:10:244:1::/64", "fd00:10:244:2::/123"}, wantSmall: []string{"w6 fd00:10:244:2::/123"}},
		{name: "only podCIDR set (older API objects)", pools: []CalicoPool{def},
			nodes: []*corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "w"}, Spec: corev1.NodeSpec{PodCIDR: "10.244.9.0/24"}}},
			want:  []string{"10.244.9.0/24"}},
		{name: "no pod CIDR yet and invalid ones", pools: []CalicoPool{def},
			nodes:   []*corev1.Node{winNode("pending"), winNode("bad", "10.244.1.0/33")},
			invalid: []string{"bad: 10.244.1.0/33"}},
		{name: "no pools", nodes: []*corev1.Node{winNode("w", "10.244.10.0/24")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods, invalid := WindowsPodCIDRs(tt.nodes)
			if !reflect.DeepEqual(invalid, tt.invalid) {
				t.Errorf("invalid = %q, want %q", invalid, tt.invalid)
			}
			got, small := DesiredCalicoReservation(tt.pools, pods)
			if gs := prefixStrings(got); !reflect.DeepEqual(gs, append([]string{}, tt.want...)) {
				t.Errorf("reserve %q, want %q", gs, tt.want)
			}
			var gotSmall []string
			for _, s := range small {
				if s.Kind != CalicoConflictBlockSize {
					t.Errorf("finding of kind %q, want %q", s.Kind, CalicoConflictBlockSize)
				}
				gotSmall = append(gotSmall, s.Node+" "+s.PodCIDR)
			}
			if !reflect.DeepEqual(gotSmall, tt.wantSmall) {
				t.Errorf("block-size findings %q, want %q", gotSmall, tt.wantSmall)
			}
		})
	}
}

func TestCalicoBlockConflicts(t *testing.T) {
	pods := []WindowsPodCIDR{
		{Node: "win-a", CIDR: netip.MustParsePrefix("10.244.10.0/24")},
		{Node: "win-s", CIDR: netip.MustParsePrefix("10.244.20.32/27")},
	}
	block := func(cidr, aff string, inUse ...int) CalicoBlock {
		return CalicoBlock{Name: cidr, CIDR: netip.MustParsePrefix(cidr), Affinity: aff, InUse: inUse}
	}
	tests := []struct {
		name   string
		blocks []CalicoBlock
		want   []CalicoConflict
	}{
		{name: "block of a Linux node inside the pod CIDR",
			blocks: []CalicoBlock{block("10.244.10.64/26", "host:lin-1", 0, 5, 63)},
			want:   []CalicoConflict{{Kind: CalicoConflictBlock, Node: "win-a", PodCIDR: "10.244.10.0/24", Block: "10.244.10.64/26", Owner: "lin-1", InUse: 3}}},
		{name: "blocks elsewhere are no conflict",
			blocks: []CalicoBlock{block("10.244.11.0/26", "host:lin-1", 1), block("10.244.9.192/26", "host:lin-2", 1)}},
		{name: "empty block still conflicts: its owner exports the route",
			blocks: []CalicoBlock{block("10.244.10.0/26", "host:lin-1")},
			want:   []CalicoConflict{{Kind: CalicoConflictBlock, Node: "win-a", PodCIDR: "10.244.10.0/24", Block: "10.244.10.0/26", Owner: "lin-1"}}},
		{name: "block wider than a small pod CIDR counts only addresses inside it",
			// 10.244.20.0/26 ordinals 32..63 are 10.244.20.32/27.
			blocks: []CalicoBlock{block("10.244.20.0/26", "host:lin-3", 1, 31, 32, 40, 63)},
			want:   []CalicoConflict{{Kind: CalicoConflictBlock, Node: "win-s", PodCIDR: "10.244.20.32/27", Block: "10.244.20.0/26", Owner: "lin-3", InUse: 3}}},
		{name: "unaffine and virtual blocks",
			blocks: []CalicoBlock{block("10.244.10.0/26", "", 2), block("10.244.10.128/26", "virtual:vm-1")},
			want: []CalicoConflict{
				{Kind: CalicoConflictBlock, Node: "win-a", PodCIDR: "10.244.10.0/24", Block: "10.244.10.0/26", InUse: 1},
				{Kind: CalicoConflictBlock, Node: "win-a", PodCIDR: "10.244.10.0/24", Block: "10.244.10.128/26", Owner: "vm-1"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CalicoBlockConflicts(pods, tt.blocks)
			sortConflicts(got)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("conflicts\n got %+v\nwant %+v", got, tt.want)
			}
			for _, c := range got {
				if s := c.String(); !strings.Contains(s, c.Block) || !strings.Contains(s, c.PodCIDR) {
					t.Errorf("report %q does not name the block and the pod CIDR", s)
				}
			}
		})
	}
}

func TestInUseWithinIPv6(t *testing.T) {
	b := CalicoBlock{CIDR: netip.MustParsePrefix("fd00:10:244::/122"), InUse: []int{0, 31, 32, 63}}
	if got := inUseWithin(b, netip.MustParsePrefix("fd00:10:244::20/123")); got != 2 {
		t.Errorf("in use within the upper /123 = %d, want 2 (ordinals 32 and 63)", got)
	}
}

func TestCalicoAPIFor(t *testing.T) {
	tests := []struct {
		name   string
		groups []string
		want   schema.GroupVersion
		ok     bool
	}{
		{"Calico with Kubernetes datastore CRDs", []string{"apps", "crd.projectcalico.org"}, calicoV1, true},
		{"Calico API server in front of the CRDs", []string{"crd.projectcalico.org", "projectcalico.org"}, calicoV1, true},
		{"projectcalico.org/v3 CRDs only (Calico v3.32+)", []string{"projectcalico.org", "apps"}, calicoV3, true},
		{"no Calico", []string{"apps", "flannel.io"}, schema.GroupVersion{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := calicoAPIFor(tt.groups)
			if got != tt.want || ok != tt.ok {
				t.Errorf("calicoAPIFor(%v) = %v, %v; want %v, %v", tt.groups, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestSameSelector(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"kubernetes.io/os=windows", DefaultWindowsNodeSelector, true},
		{"kubernetes.io/os = windows", DefaultWindowsNodeSelector, true},
		{"kubernetes.io/os=windows,pool=a", DefaultWindowsNodeSelector, false},
		{"(", DefaultWindowsNodeSelector, false},
	}
	for _, tt := range tests {
		if got := sameSelector(tt.a, tt.b); got != tt.want {
			t.Errorf("sameSelector(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
