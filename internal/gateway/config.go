// Package gateway keeps the Windows pod-CIDR gateways (.1 of every Windows node's pod CIDR)
// alive as keepalived VIPs on a group of Linux nodes, and keeps the routes other Linux nodes
// need to reach them.
//
// Every member runs the same Controller: it watches Windows Node objects, lays out VIPs into
// VRRP instances with the planner (plan.LayoutGatewayGroup), renders keepalived.conf with the
// renderer (render.KeepalivedConfig, the code path `kubewin plan` uses), validates it with
// `keepalived -t`, installs it atomically and reloads keepalived with SIGHUP only when the bytes
// changed. keepalived does the VRRP; this package never adds or removes a VIP itself.
//
// Beside keepalived, every member keeps Calico IPAM out of the Windows pod CIDRs of joined
// nodes with one IPReservation (CalicoReserver), and reports Calico blocks already inside them.
//
// Fail-static: the desired state comes only from the informer cache. An unreachable API server
// leaves the cache — and therefore the installed configuration — as it was; nothing is written
// before the first complete list.
package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubewin/kubewin/internal/plan"
)

// ConfigAPIVersion and ConfigKind identify a GroupConfig file.
const (
	ConfigAPIVersion = "kubewin.io/v1alpha1"
	ConfigKind       = "GatewayGroupConfig"
)

// DefaultWindowsNodeSelector selects the nodes whose pod CIDRs a group serves.
const DefaultWindowsNodeSelector = "kubernetes.io/os=windows"

// GroupConfig is everything about a gateway group that does not come from Node objects: the
// planner's layout inputs minus the Windows nodes. `kubewin plan` writes it into the group's
// ConfigMap (see Manifests); every member and every route keeper reads the same file, so all of
// them compute the same layout.
type GroupConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`

	Name                  string                   `json:"name"`
	Interface             string                   `json:"interface"`
	Members               []plan.GatewayMemberPlan `json:"members"`
	VRRPVersion           int                      `json:"vrrpVersion"`
	AdvertIntervalSeconds float64                  `json:"advertIntervalSeconds"`
	VRIDRange             [2]int                   `json:"vridRange"`
	VIPsPerInstance       int                      `json:"vipsPerInstance"`
	ClusterCIDRs          []string                 `json:"clusterCIDRs"`
	NodeCIDRMaskSize      int                      `json:"nodeCIDRMaskSize"`
	RouterVIPs            []string                 `json:"routerVIPs,omitempty"`
	RouterVIPsRequired    bool                     `json:"routerVIPsRequired,omitempty"`
	// WindowsNodeSelector is a label selector (kubectl syntax) for the Windows nodes the group
	// serves; the watch is filtered by it on the server. Default DefaultWindowsNodeSelector.
	WindowsNodeSelector string `json:"windowsNodeSelector,omitempty"`
}

// LoadGroupConfig reads a GroupConfig file strictly: unknown fields, trailing data and invalid
// values are errors naming the file and the field.
func LoadGroupConfig(path string) (GroupConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return GroupConfig{}, fmt.Errorf("read gateway group config: %w", err)
	}
	c, err := ParseGroupConfig(data)
	if err != nil {
		return GroupConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseGroupConfig decodes and validates a GroupConfig (JSON).
func ParseGroupConfig(data []byte) (GroupConfig, error) {
	var c GroupConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return GroupConfig{}, describeJSONError(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return GroupConfig{}, fmt.Errorf("line %d: unexpected data after the configuration object", lineOf(data, int(dec.InputOffset())))
	}
	c.applyDefaults()
	if err := c.Validate(); err != nil {
		return GroupConfig{}, err
	}
	return c, nil
}

func describeJSONError(data []byte, err error) error {
	switch e := err.(type) {
	case *json.SyntaxError:
		return fmt.Errorf("line %d: invalid JSON: %v", lineOf(data, int(e.Offset)), e)
	case *json.UnmarshalTypeError:
		return fmt.Errorf("line %d: field %s: expected %s, got JSON %s", lineOf(data, int(e.Offset)), e.Field, e.Type, e.Value)
	}
	if strings.HasPrefix(err.Error(), "json: unknown field") {
		return fmt.Errorf("%s (expected fields of %s)", strings.TrimPrefix(err.Error(), "json: "), ConfigKind)
	}
	if err == io.EOF {
		return fmt.Errorf("empty gateway group config")
	}
	return fmt.Errorf("decode gateway group config: %w", err)
}

func lineOf(data []byte, offset int) int {
	if offset > len(data) {
		offset = len(data)
	}
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

func (c *GroupConfig) applyDefaults() {
	if c.WindowsNodeSelector == "" {
		c.WindowsNodeSelector = DefaultWindowsNodeSelector
	}
}

// Validate checks what the controller relies on before it ever contacts the API server; the
// planner checks the layout-specific rules again.
func (c GroupConfig) Validate() error {
	if c.APIVersion != ConfigAPIVersion || c.Kind != ConfigKind {
		return fmt.Errorf("apiVersion/kind: expected %s/%s, got %q/%q", ConfigAPIVersion, ConfigKind, c.APIVersion, c.Kind)
	}
	if c.Name == "" {
		return fmt.Errorf("name: must not be empty")
	}
	if c.Interface == "" {
		return fmt.Errorf("interface: must not be empty")
	}
	if len(c.Members) < 2 {
		return fmt.Errorf("members: a gateway group needs at least two members, got %d", len(c.Members))
	}
	seen := map[string]bool{}
	for i, m := range c.Members {
		if m.Node == "" {
			return fmt.Errorf("members[%d].node: must not be empty", i)
		}
		if seen[m.Node] {
			return fmt.Errorf("members[%d].node: %s listed twice", i, m.Node)
		}
		seen[m.Node] = true
		if _, err := netip.ParseAddr(m.IP); err != nil {
			return fmt.Errorf("members[%d].ip: %q is not an IP address", i, m.IP)
		}
	}
	if c.VRRPVersion != 2 && c.VRRPVersion != 3 {
		return fmt.Errorf("vrrpVersion: expected 2 or 3, got %d", c.VRRPVersion)
	}
	if c.AdvertIntervalSeconds <= 0 {
		return fmt.Errorf("advertIntervalSeconds: must be positive, got %g", c.AdvertIntervalSeconds)
	}
	if c.VRIDRange[0] < 1 || c.VRIDRange[1] > 255 || c.VRIDRange[0] > c.VRIDRange[1] {
		return fmt.Errorf("vridRange: expected first <= last within 1-255, got %v", c.VRIDRange)
	}
	if c.VIPsPerInstance < 1 || c.VIPsPerInstance > 255 {
		return fmt.Errorf("vipsPerInstance: expected 1-255, got %d", c.VIPsPerInstance)
	}
	if len(c.ClusterCIDRs) == 0 {
		return fmt.Errorf("clusterCIDRs: must not be empty")
	}
	for i, s := range c.ClusterCIDRs {
		if _, err := netip.ParsePrefix(s); err != nil {
			return fmt.Errorf("clusterCIDRs[%d]: %q is not a CIDR", i, s)
		}
	}
	if c.NodeCIDRMaskSize < 1 || c.NodeCIDRMaskSize > 30 {
		return fmt.Errorf("nodeCIDRMaskSize: expected 1-30, got %d", c.NodeCIDRMaskSize)
	}
	for i, s := range c.RouterVIPs {
		if _, err := netip.ParseAddr(strings.SplitN(s, "/", 2)[0]); err != nil {
			return fmt.Errorf("routerVIPs[%d]: %q is not an IP address", i, s)
		}
	}
	if _, err := labels.Parse(c.WindowsNodeSelector); err != nil {
		return fmt.Errorf("windowsNodeSelector: %w", err)
	}
	return nil
}

// Member returns the member entry for node.
func (c GroupConfig) Member(node string) (plan.GatewayMemberPlan, bool) {
	for _, m := range c.Members {
		if m.Node == node {
			return m, true
		}
	}
	return plan.GatewayMemberPlan{}, false
}

// Marshal returns the canonical JSON form (what Manifests puts into the ConfigMap).
func (c GroupConfig) Marshal() ([]byte, error) {
	c.APIVersion, c.Kind = ConfigAPIVersion, ConfigKind
	members := append([]plan.GatewayMemberPlan(nil), c.Members...)
	sort.Slice(members, func(i, j int) bool { return members[i].Node < members[j].Node })
	c.Members = members
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("marshal gateway group config %s: %w", c.Name, err)
	}
	return append(b, '\n'), nil
}

// GroupConfigFromPlan extracts gateway group name's configuration from a plan.
func GroupConfigFromPlan(p plan.Plan, name string) (GroupConfig, error) {
	for _, g := range p.GatewayGroups {
		if g.Name != name {
			continue
		}
		in := g.LayoutInput(p.Networking, nil)
		c := GroupConfig{
			APIVersion:            ConfigAPIVersion,
			Kind:                  ConfigKind,
			Name:                  in.Name,
			Interface:             in.Interface,
			Members:               in.Members,
			VRRPVersion:           in.VRRPVersion,
			AdvertIntervalSeconds: in.AdvertIntervalSeconds,
			VRIDRange:             in.VRIDRange,
			VIPsPerInstance:       in.VIPsPerInstance,
			ClusterCIDRs:          in.ClusterCIDRs,
			NodeCIDRMaskSize:      in.NodeCIDRMaskSize,
			RouterVIPs:            in.RouterVIPs,
			RouterVIPsRequired:    in.RouterVIPsRequired,
		}
		c.applyDefaults()
		if err := c.Validate(); err != nil {
			return GroupConfig{}, fmt.Errorf("gateway group %s: %w", name, err)
		}
		return c, nil
	}
	return GroupConfig{}, fmt.Errorf("plan has no gateway group %q", name)
}

// layoutInput is the planner input for this group and the given Windows nodes.
func (c GroupConfig) layoutInput(windows []plan.WindowsPodCIDR) plan.GatewayLayoutInput {
	return plan.GatewayLayoutInput{
		Name:                  c.Name,
		Interface:             c.Interface,
		Members:               c.Members,
		VRRPVersion:           c.VRRPVersion,
		AdvertIntervalSeconds: c.AdvertIntervalSeconds,
		VRIDRange:             c.VRIDRange,
		VIPsPerInstance:       c.VIPsPerInstance,
		ClusterCIDRs:          c.ClusterCIDRs,
		NodeCIDRMaskSize:      c.NodeCIDRMaskSize,
		RouterVIPs:            c.RouterVIPs,
		RouterVIPsRequired:    c.RouterVIPsRequired,
		WindowsNodes:          windows,
	}
}
