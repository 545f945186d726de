package gateway

import (
	"net/netip"
	"strings"
)

// KeepalivedAddress is one address a keepalived.conf puts on an interface while it is MASTER.
type KeepalivedAddress struct {
	Prefix netip.Prefix
	// Dev is the interface named by "dev" (empty: the instance's interface, which the
	// configurations kubewin renders always name explicitly).
	Dev string
	// Excluded: from virtual_ipaddress_excluded (held like a VIP, not listed in adverts).
	Excluded bool
}

// KeepalivedAddresses lists the entries of every virtual_ipaddress and
// virtual_ipaddress_excluded block of a keepalived.conf, in file order. It reads what
// render.KeepalivedConfig writes and any hand-written file in keepalived.conf(5)'s block syntax
// ("ADDR[/LEN] [dev IFACE] [scope S] ..." one per line, '!' and '#' start comments); entries it
// cannot read as an address are skipped. Why the controller reads the installed file: after a
// restart it must know what a dead keepalived left on the interface before the API server
// answers (if ever), and the file is exactly what that keepalived ran with.
func KeepalivedAddresses(conf []byte) []KeepalivedAddress {
	var out []KeepalivedAddress
	var stack []string // block keywords, innermost last
	for _, line := range strings.Split(string(conf), "\n") {
		if i := strings.IndexAny(line, "!#"); i >= 0 {
			line = line[:i]
		}
		toks := strings.Fields(strings.NewReplacer("{", " { ", "}", " } ").Replace(line))
		for i := 0; i < len(toks); i++ {
			switch t := toks[i]; t {
			case "{":
				kw := ""
				if i > 0 {
					kw = toks[i-1]
				}
				stack = append(stack, kw)
			case "}":
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			default:
				// An entry starts a line or follows a brace, and runs to the next brace.
				if i > 0 && toks[i-1] != "{" && toks[i-1] != "}" {
					continue
				}
				top := ""
				if len(stack) > 0 {
					top = stack[len(stack)-1]
				}
				if top != "virtual_ipaddress" && top != "virtual_ipaddress_excluded" {
					continue
				}
				end := i
				for end < len(toks) && toks[end] != "{" && toks[end] != "}" {
					end++
				}
				if a, ok := vipEntry(toks[i:end], top == "virtual_ipaddress_excluded"); ok {
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// vipEntry reads "ADDR[/LEN] ... dev IFACE ..." (the tokens of one entry, no braces).
func vipEntry(toks []string, excluded bool) (KeepalivedAddress, bool) {
	var p netip.Prefix
	if strings.Contains(toks[0], "/") {
		var err error
		if p, err = netip.ParsePrefix(toks[0]); err != nil {
			return KeepalivedAddress{}, false
		}
	} else {
		a, err := netip.ParseAddr(toks[0])
		if err != nil {
			return KeepalivedAddress{}, false
		}
		p = netip.PrefixFrom(a, a.BitLen()) // keepalived's default: a host address
	}
	a := KeepalivedAddress{Prefix: p, Excluded: excluded}
	for i := 1; i+1 < len(toks); i++ {
		if toks[i] == "dev" {
			a.Dev = toks[i+1]
			break
		}
	}
	return a, true
}
