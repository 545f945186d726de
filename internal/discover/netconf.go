package discover

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
)

// flannelNetConf is the part of flannel's net-conf.json (ConfigMap kube-flannel-cfg, or
// canal-config for Canal) that matters here. Field names follow flannel's documentation;
// encoding/json matches them case-insensitively as flannel does.
type flannelNetConf struct {
	Network     string `json:"Network"`
	IPv6Network string `json:"IPv6Network"`
	EnableIPv4  *bool  `json:"EnableIPv4"`
	Backend     struct {
		Type string `json:"Type"`
		VNI  int    `json:"VNI"`
		Port int    `json:"Port"`
	} `json:"Backend"`
}

// parseFlannelNetConf decodes net-conf.json and checks the values used: Network must be an IPv4
// CIDR (when IPv4 is enabled), VNI and Port must be in range.
func parseFlannelNetConf(data string) (*flannelNetConf, error) {
	var nc flannelNetConf
	dec := json.NewDecoder(bytes.NewReader([]byte(data)))
	if err := dec.Decode(&nc); err != nil {
		return nil, fmt.Errorf("decode net-conf.json: %w", err)
	}
	if nc.EnableIPv4 == nil || *nc.EnableIPv4 {
		p, err := netip.ParsePrefix(strings.TrimSpace(nc.Network))
		if err != nil || !p.Addr().Is4() {
			return nil, fmt.Errorf("net-conf.json: Network %q is not an IPv4 CIDR", nc.Network)
		}
		nc.Network = p.Masked().String()
	}
	nc.Backend.Type = strings.ToLower(strings.TrimSpace(nc.Backend.Type))
	if nc.Backend.Type == "" {
		// flannel's default backend.
		nc.Backend.Type = "udp"
	}
	if nc.Backend.VNI < 0 || nc.Backend.VNI > 1<<24-1 {
		return nil, fmt.Errorf("net-conf.json: Backend.VNI %d is out of range 0-16777215", nc.Backend.VNI)
	}
	if nc.Backend.Port < 0 || nc.Backend.Port > 65535 {
		return nil, fmt.Errorf("net-conf.json: Backend.Port %d is out of range 0-65535", nc.Backend.Port)
	}
	return &nc, nil
}
