package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// HNS dumps are what `Get-HnsNetwork | ConvertTo-Json -Depth 10` (and Get-HnsEndpoint,
// Get-HnsPolicyList) print on a Windows node. Field names follow the HNS v1 schema
// (hcsshim's HNSNetwork/HNSEndpoint/PolicyList) and the HCN v2 schema (hcn.HostComputeNetwork,
// HostComputeEndpoint); both are accepted. Nothing here runs on Windows: the parser only
// reads text captured there.

// HNSDump is one parsed HNS JSON file.
type HNSDump struct {
	File        string
	Networks    []HNSNetwork
	Endpoints   []HNSEndpoint
	PolicyLists []HNSPolicyList
}

// HNSNetwork is an HNS network (v1 Subnets or v2 Ipams).
type HNSNetwork struct {
	ID, Name, Type, Adapter string
	Subnets                 []HNSSubnet
	Line                    int
}

// HNSSubnet is one address prefix of a network with its gateway.
type HNSSubnet struct {
	Prefix  Prefix
	Gateway Addr
}

// HNSEndpoint is an endpoint with the policies the model needs.
type HNSEndpoint struct {
	ID, Name string
	// Network is the VirtualNetworkName (v1) or the network ID (v1 VirtualNetwork, v2
	// HostComputeNetwork), whichever is present, compared case-insensitively.
	Network, NetworkID string
	IP                 Addr
	PrefixLen          int
	Gateway            Addr
	MAC                string
	IsRemote           bool
	// OutboundNAT is nil when the endpoint has no OutBoundNAT policy.
	OutboundNAT *OutboundNAT
	// Routes are ROUTE (v1) / SDNRoute (v2) policies.
	Routes []EncapRoute
	Schema string // "v1" or "v2"
	Line   int
}

// OutboundNAT is an OutBoundNAT endpoint policy.
type OutboundNAT struct {
	Exceptions []Prefix
	Line       int
}

// EncapRoute is a ROUTE/SDNRoute endpoint policy.
type EncapRoute struct {
	Dst       Prefix
	NeedEncap bool
	Line      int
}

// HNSPolicyList is a v1 policy list: the winkernel load balancer of one service port.
type HNSPolicyList struct {
	ID        string
	Endpoints []string // endpoint IDs from References (/endpoints/<id>)
	LBs       []ELB
	Line      int
}

// ELB is an ELB policy of a policy list.
type ELB struct {
	VIPs         []Addr
	Protocol     int // IANA number: 6 TCP, 17 UDP
	InternalPort int
	ExternalPort int
	ILB          bool
}

// decodeText strips a UTF-8 BOM and decodes UTF-16 (what `> file` writes in Windows
// PowerShell 5.1) to UTF-8.
func decodeText(data []byte) ([]byte, error) {
	if !(bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) || bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF})) {
		return data, nil
	}
	out, _, err := transform.Bytes(unicode.BOMOverride(unicode.UTF8.NewDecoder()), data)
	if err != nil {
		return nil, fmt.Errorf("decode text: %w", err)
	}
	return out, nil
}

func lineAt(data []byte, off int) int {
	if off > len(data) {
		off = len(data)
	}
	if off < 0 {
		off = 0
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// jsonElems splits a top-level JSON array (or a single object, which ConvertTo-Json prints
// for one result) into raw elements with their byte offsets.
func jsonElems(file string, data []byte) ([]json.RawMessage, []int, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, nil, dumpErr(file, 1, "empty file (expected ConvertTo-Json output)")
	}
	base := len(data) - len(trimmed)
	dec := json.NewDecoder(bytes.NewReader(data))
	wrap := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return dumpErr(file, lineAt(data, int(se.Offset)), "invalid JSON: %v", err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return dumpErr(file, lineAt(data, int(te.Offset)), "invalid JSON: %v", err)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return dumpErr(file, lineAt(data, len(data)), "invalid JSON: unexpected end of input")
		}
		return dumpErr(file, lineAt(data, int(dec.InputOffset())), "invalid JSON: %v", err)
	}
	switch trimmed[0] {
	case '{':
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, wrap(err)
		}
		if err := expectEOF(dec); err != nil {
			return nil, nil, wrap(err)
		}
		return []json.RawMessage{raw}, []int{base}, nil
	case '[':
		if _, err := dec.Token(); err != nil {
			return nil, nil, wrap(err)
		}
		var out []json.RawMessage
		var offs []int
		for dec.More() {
			var raw json.RawMessage
			off := int(dec.InputOffset())
			if err := dec.Decode(&raw); err != nil {
				return nil, nil, wrap(err)
			}
			// InputOffset is before the separating comma/whitespace; move to the element.
			for off < len(data) && (data[off] == ',' || data[off] == ' ' || data[off] == '\t' || data[off] == '\r' || data[off] == '\n') {
				off++
			}
			out = append(out, raw)
			offs = append(offs, off)
		}
		if _, err := dec.Token(); err != nil {
			return nil, nil, wrap(err)
		}
		if err := expectEOF(dec); err != nil {
			return nil, nil, wrap(err)
		}
		return out, offs, nil
	}
	return nil, nil, dumpErr(file, lineAt(data, base), "expected a JSON array or object (ConvertTo-Json output), got %q", string(trimmed[:1]))
}

func expectEOF(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return fmt.Errorf("unexpected data after the top-level value")
		}
		return err
	}
	return nil
}

// keyLine finds the line of "key" inside an element starting at off (for precise errors).
func keyLine(data []byte, off int, raw json.RawMessage, key string) int {
	i := bytes.Index(raw, []byte(`"`+key+`"`))
	if i < 0 {
		return lineAt(data, off)
	}
	return lineAt(data, off+i)
}

func lowerKeys(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out, nil
}

// truncated reports whether a value that should be an object or array was flattened to a
// string by ConvertTo-Json's default -Depth 2 ("@{Type=L2Driver}", "System.Object[]").
func truncated(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

const depthHint = "ConvertTo-Json flattened it at its default -Depth 2; capture again with ConvertTo-Json -Depth 10"

// ParseHNS parses Get-HnsNetwork, Get-HnsEndpoint or Get-HnsPolicyList output converted with
// ConvertTo-Json. The kind is recognised per element; one file may hold only one kind.
func ParseHNS(file string, input []byte) (*HNSDump, error) {
	data, err := decodeText(input)
	if err != nil {
		return nil, dumpErr(file, 1, "%v", err)
	}
	elems, offs, err := jsonElems(file, data)
	if err != nil {
		return nil, err
	}
	d := &HNSDump{File: file}
	kind := ""
	for i, raw := range elems {
		off := offs[i]
		ln := lineAt(data, off)
		m, err := lowerKeys(raw)
		if err != nil {
			return nil, dumpErr(file, ln, "expected a JSON object for each HNS element: %v", err)
		}
		k := hnsKind(m)
		if k == "" {
			return nil, dumpErr(file, ln, "element is neither an HNS network (Subnets/Ipams), endpoint (IPAddress/IpConfigurations) nor policy list (References)")
		}
		if kind != "" && k != kind {
			return nil, dumpErr(file, ln, "element is an HNS %s but the file started with %ss (one Get-Hns* command per file)", k, kind)
		}
		kind = k
		at := func(key string) int { return keyLine(data, off, raw, key) }
		switch k {
		case "network":
			n, err := parseHNSNetwork(file, m, ln, at)
			if err != nil {
				return nil, err
			}
			d.Networks = append(d.Networks, n)
		case "endpoint":
			e, err := parseHNSEndpoint(file, m, ln, at)
			if err != nil {
				return nil, err
			}
			d.Endpoints = append(d.Endpoints, e)
		case "policylist":
			p, err := parseHNSPolicyList(file, m, ln, at)
			if err != nil {
				return nil, err
			}
			d.PolicyLists = append(d.PolicyLists, p)
		}
	}
	return d, nil
}

func hnsKind(m map[string]json.RawMessage) string {
	has := func(k string) bool { _, ok := m[k]; return ok }
	switch {
	case has("references"):
		return "policylist"
	case has("ipaddress") || has("ipconfigurations") || has("virtualnetwork") || has("hostcomputenetwork") || has("isremoteendpoint"):
		return "endpoint"
	case has("subnets") || has("ipams") || has("networkadaptername"):
		return "network"
	}
	return ""
}

func str(m map[string]json.RawMessage, key string) (string, bool, error) {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", true, fmt.Errorf("expected a string, got %s", clip(string(raw)))
	}
	return s, true, nil
}

func num(m map[string]json.RawMessage, key string) (int, bool, error) {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return 0, false, nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, true, fmt.Errorf("expected an integer, got %s", clip(string(raw)))
	}
	return n, true, nil
}

func boolean(m map[string]json.RawMessage, key string) (bool, error) {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, fmt.Errorf("expected true or false, got %s", clip(string(raw)))
	}
	return b, nil
}

// objects decodes an array of objects, rejecting depth-truncated strings.
func objects(file string, m map[string]json.RawMessage, key, field string, at func(string) int) ([]map[string]json.RawMessage, error) {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	if s, isStr := truncated(raw); isStr {
		return nil, dumpErr(file, at(field), "%s is the string %q, not a list: %s", field, clip(s), depthHint)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		// ConvertTo-Json prints a one-element list as that element only in some versions.
		list = []json.RawMessage{raw}
	}
	var out []map[string]json.RawMessage
	for i, r := range list {
		if s, isStr := truncated(r); isStr {
			return nil, dumpErr(file, at(field), "%s[%d] is the string %q, not an object: %s", field, i, clip(s), depthHint)
		}
		mm, err := lowerKeys(r)
		if err != nil {
			return nil, dumpErr(file, at(field), "%s[%d]: expected an object: %v", field, i, err)
		}
		out = append(out, mm)
	}
	return out, nil
}

func strList(file string, m map[string]json.RawMessage, key, field string, at func(string) int) ([]string, error) {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if strings.Contains(s, "System.Object[]") || strings.HasPrefix(s, "@{") {
			return nil, dumpErr(file, at(field), "%s is the string %q: %s", field, clip(s), depthHint)
		}
		// ConvertTo-Json prints a one-element array beyond its depth as that element.
		return []string{s}, nil
	}
	return nil, dumpErr(file, at(field), "%s: expected a list of strings, got %s", field, clip(string(raw)))
}

func parseHNSNetwork(file string, m map[string]json.RawMessage, ln int, at func(string) int) (HNSNetwork, error) {
	n := HNSNetwork{Line: ln}
	var err error
	for _, f := range []struct {
		key, field string
		dst        *string
	}{{"id", "ID", &n.ID}, {"name", "Name", &n.Name}, {"type", "Type", &n.Type}, {"networkadaptername", "NetworkAdapterName", &n.Adapter}} {
		if *f.dst, _, err = str(m, f.key); err != nil {
			return n, dumpErr(file, at(f.field), "network %s: %v", f.field, err)
		}
	}
	subs, err := objects(file, m, "subnets", "Subnets", at)
	if err != nil {
		return n, err
	}
	for _, s := range subs {
		sn, err := hnsSubnet(file, s, "addressprefix", "gatewayaddress", at)
		if err != nil {
			return n, err
		}
		n.Subnets = append(n.Subnets, sn)
	}
	ipams, err := objects(file, m, "ipams", "Ipams", at)
	if err != nil {
		return n, err
	}
	for _, ip := range ipams {
		subs, err := objects(file, ip, "subnets", "Subnets", at)
		if err != nil {
			return n, err
		}
		for _, s := range subs {
			sn, err := hnsSubnet(file, s, "ipaddressprefix", "", at)
			if err != nil {
				return n, err
			}
			routes, err := objects(file, s, "routes", "Routes", at)
			if err != nil {
				return n, err
			}
			for _, r := range routes {
				dst, _, _ := str(r, "destinationprefix")
				nh, _, _ := str(r, "nexthop")
				if dst == "0.0.0.0/0" && nh != "" {
					if sn.Gateway, err = ParseAddr(nh); err != nil {
						return n, dumpErr(file, at("NextHop"), "network %s: NextHop: %v", n.Name, err)
					}
				}
			}
			n.Subnets = append(n.Subnets, sn)
		}
	}
	pols, err := objects(file, m, "policies", "Policies", at)
	if err != nil {
		return n, err
	}
	for _, p := range pols {
		t, _, _ := str(p, "type")
		if strings.EqualFold(t, "NetAdapterName") && n.Adapter == "" {
			if st, ok := p["settings"]; ok {
				if sm, err := lowerKeys(st); err == nil {
					n.Adapter, _, _ = str(sm, "networkadaptername")
				}
			}
		}
	}
	if n.Name == "" {
		return n, dumpErr(file, ln, "network without a Name")
	}
	return n, nil
}

func hnsSubnet(file string, s map[string]json.RawMessage, prefixKey, gwKey string, at func(string) int) (HNSSubnet, error) {
	var sn HNSSubnet
	ps, _, err := str(s, prefixKey)
	if err != nil || ps == "" {
		return sn, dumpErr(file, at("AddressPrefix"), "subnet without an address prefix")
	}
	if sn.Prefix, err = ParsePrefix(ps); err != nil {
		return sn, dumpErr(file, at(ps), "subnet: %v", err)
	}
	if gwKey != "" {
		gs, _, _ := str(s, gwKey)
		if gs != "" {
			if sn.Gateway, err = ParseAddr(gs); err != nil {
				return sn, dumpErr(file, at("GatewayAddress"), "subnet %s: GatewayAddress: %v", sn.Prefix, err)
			}
		}
	}
	return sn, nil
}

func parseHNSEndpoint(file string, m map[string]json.RawMessage, ln int, at func(string) int) (HNSEndpoint, error) {
	e := HNSEndpoint{Line: ln, Schema: "v1"}
	var err error
	fail := func(field string, err error) error {
		id := e.ID
		if id == "" {
			id = e.Name
		}
		return dumpErr(file, at(field), "endpoint %s: %s: %v", id, field, err)
	}
	if e.ID, _, err = str(m, "id"); err != nil {
		return e, fail("ID", err)
	}
	if e.Name, _, err = str(m, "name"); err != nil {
		return e, fail("Name", err)
	}
	if e.Network, _, err = str(m, "virtualnetworkname"); err != nil {
		return e, fail("VirtualNetworkName", err)
	}
	if e.NetworkID, _, err = str(m, "virtualnetwork"); err != nil {
		return e, fail("VirtualNetwork", err)
	}
	if e.MAC, _, err = str(m, "macaddress"); err != nil {
		return e, fail("MacAddress", err)
	}
	if e.IsRemote, err = boolean(m, "isremoteendpoint"); err != nil {
		return e, fail("IsRemoteEndpoint", err)
	}
	ipStr, _, err := str(m, "ipaddress")
	if err != nil {
		return e, fail("IPAddress", err)
	}
	if e.PrefixLen, _, err = num(m, "prefixlength"); err != nil {
		return e, fail("PrefixLength", err)
	}
	if gw, _, err := str(m, "gatewayaddress"); err != nil {
		return e, fail("GatewayAddress", err)
	} else if gw != "" {
		if e.Gateway, err = ParseAddr(gw); err != nil {
			return e, fail("GatewayAddress", err)
		}
	}
	if _, ok := m["ipconfigurations"]; ok || m["hostcomputenetwork"] != nil {
		e.Schema = "v2"
		if e.NetworkID, _, err = str(m, "hostcomputenetwork"); err != nil {
			return e, fail("HostComputeNetwork", err)
		}
		cfgs, err := objects(file, m, "ipconfigurations", "IpConfigurations", at)
		if err != nil {
			return e, err
		}
		for _, c := range cfgs {
			s, _, err := str(c, "ipaddress")
			if err != nil {
				return e, fail("IpConfigurations", err)
			}
			a, err := ParseAddr(s)
			if err != nil {
				if strings.Contains(s, ":") {
					continue // IPv6 configuration
				}
				return e, fail("IpAddress", err)
			}
			if ipStr == "" {
				ipStr = s
				e.IP = a
				if pl, _, err := num(c, "prefixlength"); err == nil {
					e.PrefixLen = pl
				}
			}
		}
		if flags, _, err := num(m, "flags"); err == nil && flags&1 != 0 {
			e.IsRemote = true // hcn.EndpointFlagsRemoteEndpoint
		}
	}
	if ipStr == "" {
		return e, dumpErr(file, ln, "endpoint %s has no IPAddress", e.ID)
	}
	if e.IP, err = ParseAddr(ipStr); err != nil {
		return e, fail("IPAddress", err)
	}
	if e.PrefixLen < 0 || e.PrefixLen > 32 {
		return e, fail("PrefixLength", fmt.Errorf("expected 0-32, got %d", e.PrefixLen))
	}
	pols, err := objects(file, m, "policies", "Policies", at)
	if err != nil {
		return e, err
	}
	for i, p := range pols {
		t, _, err := str(p, "type")
		if err != nil {
			return e, fail(fmt.Sprintf("Policies[%d].Type", i), err)
		}
		settings := p
		if st, ok := p["settings"]; ok && string(st) != "null" {
			if s, isStr := truncated(st); isStr {
				return e, dumpErr(file, at("Settings"), "endpoint %s: Policies[%d].Settings is the string %q: %s", e.ID, i, clip(s), depthHint)
			}
			if settings, err = lowerKeys(st); err != nil {
				return e, fail(fmt.Sprintf("Policies[%d].Settings", i), err)
			}
		}
		switch strings.ToLower(t) {
		case "outboundnat":
			key, field := "exceptionlist", "ExceptionList"
			if _, ok := settings["exceptions"]; ok {
				key, field = "exceptions", "Exceptions"
			}
			list, err := strList(file, settings, key, field, at)
			if err != nil {
				return e, err
			}
			o := &OutboundNAT{Line: at("OutBoundNAT")}
			for _, s := range list {
				p, err := ParsePrefix(s)
				if err != nil {
					return e, dumpErr(file, at(s), "endpoint %s: OutBoundNAT %s: %v", e.ID, field, err)
				}
				o.Exceptions = append(o.Exceptions, p)
			}
			if e.OutboundNAT != nil {
				e.OutboundNAT.Exceptions = append(e.OutboundNAT.Exceptions, o.Exceptions...)
			} else {
				e.OutboundNAT = o
			}
		case "route", "sdnroute":
			ds, _, err := str(settings, "destinationprefix")
			if err != nil || ds == "" {
				return e, dumpErr(file, at("DestinationPrefix"), "endpoint %s: %s policy without DestinationPrefix", e.ID, t)
			}
			p, err := ParsePrefix(ds)
			if err != nil {
				return e, dumpErr(file, at(ds), "endpoint %s: %s DestinationPrefix: %v", e.ID, t, err)
			}
			enc, err := boolean(settings, "needencap")
			if err != nil {
				return e, fail("NeedEncap", err)
			}
			e.Routes = append(e.Routes, EncapRoute{Dst: p, NeedEncap: enc, Line: at(ds)})
		}
	}
	return e, nil
}

func parseHNSPolicyList(file string, m map[string]json.RawMessage, ln int, at func(string) int) (HNSPolicyList, error) {
	p := HNSPolicyList{Line: ln}
	p.ID, _, _ = str(m, "id")
	refs, err := strList(file, m, "references", "References", at)
	if err != nil {
		return p, err
	}
	for _, r := range refs {
		id := r
		if i := strings.LastIndexByte(r, '/'); i >= 0 {
			id = r[i+1:]
		}
		p.Endpoints = append(p.Endpoints, strings.ToLower(id))
	}
	pols, err := objects(file, m, "policies", "Policies", at)
	if err != nil {
		return p, err
	}
	for i, pm := range pols {
		t, _, _ := str(pm, "type")
		if !strings.EqualFold(t, "ELB") {
			continue
		}
		var lb ELB
		vips, err := strList(file, pm, "vips", "VIPs", at)
		if err != nil {
			return p, err
		}
		for _, v := range vips {
			a, err := ParseAddr(v)
			if err != nil {
				return p, dumpErr(file, at(v), "policy list %s: Policies[%d].VIPs: %v", p.ID, i, err)
			}
			lb.VIPs = append(lb.VIPs, a)
		}
		for _, f := range []struct {
			key, field string
			dst        *int
		}{{"protocol", "Protocol", &lb.Protocol}, {"internalport", "InternalPort", &lb.InternalPort}, {"externalport", "ExternalPort", &lb.ExternalPort}} {
			if *f.dst, _, err = num(pm, f.key); err != nil {
				return p, dumpErr(file, at(f.field), "policy list %s: Policies[%d].%s: %v", p.ID, i, f.field, err)
			}
		}
		if lb.ILB, err = boolean(pm, "ilb"); err != nil {
			return p, dumpErr(file, at("ILB"), "policy list %s: ILB: %v", p.ID, err)
		}
		p.LBs = append(p.LBs, lb)
	}
	return p, nil
}
