package verify

import (
	"strconv"
	"strings"
)

// KeepalivedDump is keepalived's state dump: the file keepalived writes on SIGUSR1
// (/tmp/keepalived.data), captured from a gateway member. Only the VRRP Topology section
// matters to the model.
type KeepalivedDump struct {
	File      string
	RouterID  string
	Instances []VRRPState
}

// VRRPState is one vrrp_instance as the member sees it.
type VRRPState struct {
	Name      string
	State     string // MASTER, BACKUP, FAULT, INIT, STOP
	VRID      int
	Interface string
	Priority  int
	Preempt   bool
	VIPs      []VIPState
	Line      int
}

// VIPState is one virtual_ipaddress line.
type VIPState struct {
	Addr Addr
	Len  uint8
	Dev  string
	Line int
}

var vrrpStates = map[string]bool{"MASTER": true, "BACKUP": true, "FAULT": true, "INIT": true, "STOP": true, "DELETED": true}

// ParseKeepalived parses a keepalived.data dump.
func ParseKeepalived(file string, data []byte) (*KeepalivedDump, error) {
	d := &KeepalivedDump{File: file}
	section := ""
	var cur *VRRPState
	list := "" // "vip" while reading the lines under "Virtual IP (n):"
	sawTopology := false
	finish := func() error {
		if cur == nil {
			return nil
		}
		if cur.State == "" {
			return dumpErr(file, cur.Line, "VRRP instance %s has no State line", cur.Name)
		}
		if cur.VRID == 0 {
			return dumpErr(file, cur.Line, "VRRP instance %s has no Virtual Router ID line", cur.Name)
		}
		d.Instances = append(d.Instances, *cur)
		cur = nil
		return nil
	}
	for i, raw := range splitLines(data) {
		ln := i + 1
		s := strings.TrimSpace(raw)
		if s == "" {
			continue
		}
		if strings.HasPrefix(s, "------<") {
			if err := finish(); err != nil {
				return nil, err
			}
			section = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, "------<"), ">------"))
			if section == "VRRP Topology" {
				sawTopology = true
			}
			list = ""
			continue
		}
		key, val, hasEq := strings.Cut(s, " = ")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if section == "Global definitions" && hasEq && key == "Router ID" {
			d.RouterID = val
			continue
		}
		if section != "VRRP Topology" {
			continue
		}
		if hasEq && key == "VRRP Instance" {
			if err := finish(); err != nil {
				return nil, err
			}
			cur = &VRRPState{Name: val, Line: ln}
			list = ""
			continue
		}
		if cur == nil {
			continue
		}
		if strings.HasPrefix(s, "Virtual IP (") {
			list = "vip"
			continue
		}
		if list == "vip" && !hasEq && !strings.HasSuffix(s, ":") {
			f := strings.Fields(s)
			p, a, err := parseIfacePrefix(f[0])
			if err != nil {
				return nil, dumpErr(file, ln, "virtual IP of %s: %v", cur.Name, err)
			}
			v := VIPState{Addr: a, Len: p.Len, Line: ln}
			for j := 1; j+1 < len(f); j++ {
				if f[j] == "dev" {
					v.Dev = f[j+1]
				}
			}
			if v.Dev == "" {
				v.Dev = cur.Interface
			}
			cur.VIPs = append(cur.VIPs, v)
			continue
		}
		list = ""
		if !hasEq {
			continue
		}
		switch key {
		case "State":
			if !vrrpStates[val] {
				return nil, dumpErr(file, ln, "State of %s: expected MASTER, BACKUP, FAULT, INIT or STOP, got %q", cur.Name, val)
			}
			cur.State = val
		case "Virtual Router ID":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 255 {
				return nil, dumpErr(file, ln, "Virtual Router ID of %s: expected 1-255, got %q", cur.Name, val)
			}
			cur.VRID = n
		case "Interface":
			cur.Interface = val
		case "Priority":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > 255 {
				return nil, dumpErr(file, ln, "Priority of %s: expected 0-255, got %q", cur.Name, val)
			}
			cur.Priority = n
		case "Preempt":
			cur.Preempt = val == "enabled"
		}
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if !sawTopology {
		return nil, dumpErr(file, 1, "no \"------< VRRP Topology >------\" section (expected keepalived's SIGUSR1 dump, /tmp/keepalived.data)")
	}
	for _, in := range d.Instances {
		for _, v := range in.VIPs {
			if v.Dev == "" {
				return nil, dumpErr(file, v.Line, "virtual IP %s of %s names no device and the instance has no Interface line", v.Addr, in.Name)
			}
		}
	}
	return d, nil
}
