package verify

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// DumpError is a problem in a dump file, located by line.
type DumpError struct {
	File string
	Line int
	Msg  string
}

func (e *DumpError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

func dumpErr(file string, line int, format string, args ...any) *DumpError {
	return &DumpError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// RouteDump is a Linux routing table captured with `route -n` or `ip route`.
type RouteDump struct {
	File   string
	Format string // "route -n" or "ip route"
	Routes []Route
	// Partial is set when the dump elides lines ("..."): the dumped routes then override the
	// planned table instead of replacing it.
	Partial bool
	// Local are addresses from "local" routes (ip route show table all / table local).
	Local []Addr
	// Lines maps each route (by index) to its line.
	Lines []int
	Notes []string
}

func splitLines(data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		out = append(out, strings.TrimRight(sc.Text(), "\r"))
	}
	return out
}

// isPrompt recognises a captured shell prompt line such as "[root@master1 ~]# route -n".
func isPrompt(s string) bool {
	i := strings.IndexAny(s, "#$")
	if i <= 0 || i+1 >= len(s) || s[i+1] != ' ' {
		return false
	}
	cmd := strings.TrimSpace(s[i+1:])
	return strings.HasPrefix(cmd, "route") || strings.HasPrefix(cmd, "ip ") || strings.HasPrefix(cmd, "netstat")
}

func isElision(s string) bool {
	s = strings.TrimSpace(s)
	return s == "..." || s == "…" || s == "[...]"
}

// ParseRouteN parses the output of `route -n` (net-tools), including the `-e` layout. Lines
// that are just "..." mark the dump as partial (the seed's tables elide lines that way).
func ParseRouteN(file string, data []byte) (*RouteDump, error) {
	d := &RouteDump{File: file, Format: "route -n"}
	lines := splitLines(data)
	col := map[string]int{}
	ncol := 0
	seen := map[Prefix]map[int]int{}
	for i, raw := range lines {
		ln := i + 1
		s := strings.TrimSpace(raw)
		switch {
		case s == "":
			continue
		case isElision(s):
			d.Partial = true
			continue
		case isPrompt(s):
			continue
		case strings.HasPrefix(s, "Kernel IP routing table"):
			continue
		case strings.HasPrefix(s, "Destination"):
			f := strings.Fields(s)
			for j, name := range f {
				col[name] = j
			}
			for _, need := range []string{"Destination", "Gateway", "Genmask", "Flags", "Iface"} {
				if _, ok := col[need]; !ok {
					return nil, dumpErr(file, ln, "route -n header lacks column %q", need)
				}
			}
			ncol = len(f)
			continue
		}
		if ncol == 0 {
			return nil, dumpErr(file, ln, "expected the route -n header (Destination Gateway Genmask Flags ... Iface) before routes, got %q", clip(s))
		}
		f := strings.Fields(s)
		if len(f) != ncol {
			return nil, dumpErr(file, ln, "expected %d columns as in the header, got %d in %q", ncol, len(f), clip(s))
		}
		dst, err := ParseAddr(f[col["Destination"]])
		if err != nil {
			return nil, dumpErr(file, ln, "Destination: %v", err)
		}
		gw, err := ParseAddr(f[col["Gateway"]])
		if err != nil {
			return nil, dumpErr(file, ln, "Gateway: %v", err)
		}
		m, err := ParseAddr(f[col["Genmask"]])
		if err != nil {
			return nil, dumpErr(file, ln, "Genmask: %v", err)
		}
		l, ok := maskLen(m)
		if !ok {
			return nil, dumpErr(file, ln, "Genmask %s is not a contiguous netmask", m)
		}
		if dst&^mask(l) != 0 {
			return nil, dumpErr(file, ln, "Destination %s has bits outside Genmask %s", dst, m)
		}
		flags := f[col["Flags"]]
		for _, c := range flags {
			if !strings.ContainsRune("UGHRDMAC!", c) {
				return nil, dumpErr(file, ln, "Flags: unknown flag %q in %q (expected letters of UGHRDMAC!)", c, flags)
			}
		}
		if !strings.Contains(flags, "U") {
			d.Notes = append(d.Notes, fmt.Sprintf("%s:%d: route %s is not up (no U flag); ignored", file, ln, prefixOf(dst, l)))
			continue
		}
		if strings.Contains(flags, "G") != (gw != 0) {
			return nil, dumpErr(file, ln, "Flags %q and Gateway %s disagree (G means a gateway is set)", flags, gw)
		}
		metric := 0
		if j, ok := col["Metric"]; ok {
			metric, err = strconv.Atoi(f[j])
			if err != nil || metric < 0 {
				return nil, dumpErr(file, ln, "Metric: expected a non-negative integer, got %q", f[j])
			}
		}
		dev := f[col["Iface"]]
		r := Route{Dst: Prefix{Addr: dst, Len: l}, Via: gw, Dev: dev, Kind: devKind(dev), Metric: metric,
			Origin: fmt.Sprintf("%s:%d", file, ln)}
		switch {
		case strings.Contains(flags, "!"):
			r.Type, r.Dev, r.Kind = RouteUnreachable, "", DevNone
		case dev == "*" || dev == "-":
			r.Type, r.Dev, r.Kind = RouteBlackhole, "", DevNone
		}
		if err := d.add(r, ln, seen); err != nil {
			return nil, err
		}
	}
	if ncol == 0 {
		return nil, dumpErr(file, 1, "no route -n header found (expected \"Destination Gateway Genmask Flags Metric Ref Use Iface\")")
	}
	return d, nil
}

// add appends r unless another route for the same prefix and metric exists: the kernel
// cannot hold both, so the dump contradicts itself.
func (d *RouteDump) add(r Route, ln int, seen map[Prefix]map[int]int) error {
	bm := seen[r.Dst]
	if bm == nil {
		bm = map[int]int{}
		seen[r.Dst] = bm
	}
	if prev, ok := bm[r.Metric]; ok {
		return dumpErr(d.File, ln, "contradictory dump: a second route for %s with metric %d (first at line %d)", r.Dst, r.Metric, prev)
	}
	bm[r.Metric] = ln
	d.Routes = append(d.Routes, r)
	d.Lines = append(d.Lines, ln)
	return nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// ip route keywords that take one argument and do not matter to the model.
var ipRouteArgKeys = map[string]bool{
	"proto": true, "scope": true, "tos": true, "dsfield": true, "mtu": true, "advmss": true,
	"rtt": true, "rttvar": true, "reordering": true, "window": true, "cwnd": true, "initcwnd": true,
	"initrwnd": true, "ssthresh": true, "realms": true, "realm": true, "rto_min": true,
	"hoplimit": true, "features": true, "quickack": true, "congctl": true, "pref": true,
	"expires": true, "nhid": true, "weight": true, "error": true, "fastopen_no_cookie": true,
	"from": true, "iif": true, "uid": true, "mark": true, "cache": false,
}

// ip route flags without argument.
var ipRouteFlags = map[string]bool{
	"onlink": true, "linkdown": true, "dead": true, "pervasive": true, "offload": true,
	"trap": true, "notify": true, "rt_offload": true, "rt_trap": true, "rt_offload_failed": true,
	"lock": true, "cloned": true,
}

// ParseIPRoute parses `ip route` / `ip -4 route show table all` output. IPv6 lines and
// tables other than main and local are skipped with a note; local routes give the node's own
// addresses; a second route line starting with "nexthop" belongs to the multipath route above
// it (the first next hop is modelled).
func ParseIPRoute(file string, data []byte) (*RouteDump, error) {
	d := &RouteDump{File: file, Format: "ip route"}
	seen := map[Prefix]map[int]int{}
	lastMultipath := -1
	skipped6 := false
	for i, raw := range splitLines(data) {
		ln := i + 1
		s := strings.TrimSpace(raw)
		if s == "" {
			continue
		}
		if isElision(s) {
			d.Partial = true
			continue
		}
		if isPrompt(s) {
			continue
		}
		f := strings.Fields(s)
		if f[0] == "nexthop" {
			if lastMultipath < 0 {
				return nil, dumpErr(file, ln, "\"nexthop\" line without a multipath route above it")
			}
			var r Route
			if _, err := parseIPRouteOpts(&r, f[1:]); err != nil {
				return nil, dumpErr(file, ln, "%v", err)
			}
			mp := &d.Routes[lastMultipath]
			if mp.Via == 0 && mp.Dev == "" {
				mp.Via, mp.Dev, mp.Kind = r.Via, r.Dev, devKind(r.Dev)
				d.Notes = append(d.Notes, fmt.Sprintf("%s:%d: multipath route %s: the first next hop is modelled", file, ln, mp.Dst))
			}
			continue
		}
		lastMultipath = -1
		r := Route{Origin: fmt.Sprintf("%s:%d", file, ln)}
		typ := "unicast"
		switch f[0] {
		case "unicast", "local", "broadcast", "blackhole", "unreachable", "prohibit", "throw", "multicast", "anycast", "nat":
			typ = f[0]
			f = f[1:]
			if len(f) == 0 {
				return nil, dumpErr(file, ln, "route type %q without a destination", typ)
			}
		}
		if strings.Contains(f[0], ":") {
			if !skipped6 {
				d.Notes = append(d.Notes, fmt.Sprintf("%s:%d: IPv6 routes are not modelled; skipped", file, ln))
				skipped6 = true
			}
			continue
		}
		if f[0] == "default" {
			r.Dst = Prefix{}
		} else {
			p, a, err := parseIfacePrefix(f[0])
			if err != nil {
				return nil, dumpErr(file, ln, "destination: %v", err)
			}
			if a&^mask(p.Len) != 0 {
				return nil, dumpErr(file, ln, "destination %s has host bits set", f[0])
			}
			r.Dst = prefixOf(a, p.Len)
		}
		table, err := parseIPRouteOpts(&r, f[1:])
		if err != nil {
			return nil, dumpErr(file, ln, "%v", err)
		}
		r.Kind = devKind(r.Dev)
		switch typ {
		case "local":
			if r.Dst.Len == 32 {
				d.Local = append(d.Local, r.Dst.Addr)
			}
			continue
		case "broadcast", "multicast", "anycast", "nat", "throw":
			continue
		case "blackhole":
			r.Type, r.Kind = RouteBlackhole, DevNone
		case "unreachable", "prohibit":
			r.Type, r.Kind = RouteUnreachable, DevNone
		}
		if table != "" && table != "main" && table != "254" {
			if table != "local" {
				d.Notes = append(d.Notes, fmt.Sprintf("%s:%d: route in table %s skipped (policy routing is not modelled)", file, ln, table))
			}
			continue
		}
		if r.Type == RouteUnicast && r.Dev == "" && r.Via == 0 {
			// "default proto bird" followed by nexthop lines.
			lastMultipath = len(d.Routes)
		}
		if err := d.add(r, ln, seen); err != nil {
			return nil, err
		}
	}
	for _, r := range d.Routes {
		if r.Type == RouteUnicast && r.Dev == "" && r.Via == 0 {
			return nil, dumpErr(file, lineOfRoute(d, r), "route %s has neither via nor dev", r.Dst)
		}
	}
	return d, nil
}

func lineOfRoute(d *RouteDump, r Route) int {
	for i := range d.Routes {
		if d.Routes[i].Dst == r.Dst && d.Routes[i].Metric == r.Metric {
			return d.Lines[i]
		}
	}
	return 0
}

// parseIPRouteOpts reads the key/value part of an ip route line into r and returns the table.
func parseIPRouteOpts(r *Route, f []string) (string, error) {
	table := ""
	for j := 0; j < len(f); j++ {
		k := f[j]
		if ipRouteFlags[k] {
			continue
		}
		if j+1 >= len(f) {
			return "", fmt.Errorf("keyword %q without a value", k)
		}
		v := f[j+1]
		j++
		switch k {
		case "via":
			if v == "inet" && j+1 < len(f) {
				v = f[j+1]
				j++
			}
			a, err := ParseAddr(v)
			if err != nil {
				return "", fmt.Errorf("via: %v", err)
			}
			r.Via = a
		case "dev":
			r.Dev = v
		case "src":
			a, err := ParseAddr(v)
			if err != nil {
				return "", fmt.Errorf("src: %v", err)
			}
			r.Src = a
		case "metric", "priority":
			m, err := strconv.Atoi(v)
			if err != nil || m < 0 {
				return "", fmt.Errorf("metric: expected a non-negative integer, got %q", v)
			}
			r.Metric = m
		case "table":
			table = v
		case "proto":
			r.Proto = v
		default:
			if !ipRouteArgKeys[k] {
				return "", fmt.Errorf("unknown keyword %q", k)
			}
			// "mtu lock 1400": the lock flag sits between key and value.
			if v == "lock" && j+1 < len(f) {
				j++
			}
		}
	}
	return table, nil
}
