package check

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/kubewin/kubewin/internal/check/templates"
)

// KStmt is one keepalived.conf statement: a keyword, its arguments and an optional block.
type KStmt struct {
	Key      string
	Args     []string
	Line     int
	HasBlock bool
	Block    []*KStmt
}

// KeepalivedConf is a parsed keepalived.conf.
type KeepalivedConf struct {
	File         string
	RouterID     string
	RouterIDLine int
	// VRRPVersion is global_defs vrrp_version (keepalived's default is 2).
	VRRPVersion     int
	VRRPVersionLine int
	Instances       []*VRRPInstance
	Stmts           []*KStmt
	// Globals are the statements of global_defs.
	Globals []*KStmt
	// CutWords are words a '#' or '!' cut short: keepalived starts a comment there even inside
	// a word, so "auth_pass lvs#Win" sets the password "lvs".
	CutWords []KCut
}

// KCut is a word cut short by a comment character.
type KCut struct {
	Line int
	// Kept is the part keepalived reads; Dropped the rest of the line from the comment
	// character on.
	Kept, Dropped string
}

// VRRPInstance is one vrrp_instance block.
type VRRPInstance struct {
	Name string
	Line int

	State     string
	StateLine int
	Interface string
	// VRID is virtual_router_id (0 when missing or not a number; VRIDRaw keeps the text).
	VRID     int
	VRIDRaw  string
	VRIDLine int
	Priority int
	// PriorityLine is 0 when priority is not set (keepalived's default is 100).
	PriorityLine  int
	PriorityRaw   string
	Nopreempt     bool
	NopreemptLine int
	// AdvertInt in seconds; AdvertRaw as written.
	AdvertInt  float64
	AdvertRaw  string
	AdvertLine int
	// Version is the VRRP version in force for the instance (instance "version" overrides
	// global_defs vrrp_version).
	Version  int
	AuthType string
	AuthPass string
	AuthLine int

	UnicastSrc   string
	UnicastPeers []string
	// VIPs are the virtual_ipaddress entries, the addresses VRRP adverts carry; Excluded are
	// the virtual_ipaddress_excluded entries, held and moved like VIPs but never advertised.
	VIPs     []KVIP
	Excluded []KVIP
}

// AllVIPs returns the addresses the instance holds: VIPs, then Excluded. keepalived adds and
// removes both on every state change, so a gateway VIP is a gateway whichever block it is in;
// only what goes into an advert (VIPs) differs.
func (in *VRRPInstance) AllVIPs() []KVIP {
	all := make([]KVIP, 0, len(in.VIPs)+len(in.Excluded))
	return append(append(all, in.VIPs...), in.Excluded...)
}

// KVIP is one virtual_ipaddress or virtual_ipaddress_excluded line.
type KVIP struct {
	Raw    string
	Prefix netip.Prefix
	Valid  bool
	Dev    string
	Line   int
}

// ktoken is a keepalived token with its line.
type ktoken struct {
	text string
	line int
	// nl is true for the synthetic end-of-line token.
	nl bool
}

func lexKeepalived(data []byte) ([]ktoken, []KCut, error) {
	var toks []ktoken
	var cuts []KCut
	line := 1
	s := string(data)
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\n':
			toks = append(toks, ktoken{line: line, nl: true})
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#' || c == '!':
			j := i
			for j < len(s) && s[j] != '\n' {
				j++
			}
			if i > 0 && !strings.ContainsRune(" \t\r\n{}", rune(s[i-1])) && len(toks) > 0 && !toks[len(toks)-1].nl {
				cuts = append(cuts, KCut{Line: line, Kept: toks[len(toks)-1].text, Dropped: strings.TrimRight(s[i:j], " \t\r")})
			}
			i = j
		case c == '{' && isTemplateSpan(s, i, false):
			// a template statement or comment ({% for h in hosts %}): the renderer leaves
			// nothing (its lines are dropped, trim_blocks)
			sp, _ := templates.At(s, i)
			line += strings.Count(s[i:sp.End], "\n")
			i = sp.End
		case (c == '{' || c == '}') && !isTemplateSpan(s, i, true):
			toks = append(toks, ktoken{text: string(c), line: line})
			i++
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' && s[j] != '\n' {
				j++
			}
			if j >= len(s) || s[j] != '"' {
				return toks, cuts, fmt.Errorf("line %d: unterminated quoted string", line)
			}
			toks = append(toks, ktoken{text: s[i+1 : j], line: line})
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n{}\"", rune(s[j])) && !(s[j] == '#' || s[j] == '!') ||
				j < len(s) && isTemplateSpan(s, j, true) {
				if sp, ok := templates.At(s, j); ok && sp.Kind == templates.Expr {
					// a placeholder ({{ LB_IF }}) is one word with what it is glued to
					j = sp.End
					continue
				}
				j++
			}
			if j == i {
				// A quote inside a word or similar: take the byte as a word of its own.
				j = i + 1
			}
			toks = append(toks, ktoken{text: s[i:j], line: line})
			i = j
		}
	}
	return toks, cuts, nil
}

// isTemplateSpan reports whether a template span starts at s[i]: an expression when expr,
// else a statement or comment.
func isTemplateSpan(s string, i int, expr bool) bool {
	if s[i] != '{' {
		return false
	}
	sp, ok := templates.At(s, i)
	return ok && (sp.Kind == templates.Expr) == expr
}

// parseKeepaliveStmts builds the statement tree.
func parseKeepaliveStmts(toks []ktoken) ([]*KStmt, error) {
	var root []*KStmt
	stack := []*[]*KStmt{&root}
	var owners []*KStmt
	var cur *KStmt
	for _, t := range toks {
		switch {
		case t.nl:
			cur = nil
		case t.text == "{":
			if cur == nil {
				// "{" on its own line opens a block for the previous statement.
				list := *stack[len(stack)-1]
				if len(list) == 0 || list[len(list)-1].HasBlock {
					return root, fmt.Errorf("line %d: '{' without a statement", t.line)
				}
				cur = list[len(list)-1]
			}
			cur.HasBlock = true
			owners = append(owners, cur)
			stack = append(stack, &cur.Block)
			cur = nil
		case t.text == "}":
			if len(stack) == 1 {
				return root, fmt.Errorf("line %d: '}' without a matching '{'", t.line)
			}
			stack = stack[:len(stack)-1]
			owners = owners[:len(owners)-1]
			cur = nil
		default:
			if cur == nil {
				cur = &KStmt{Key: t.text, Line: t.line}
				*stack[len(stack)-1] = append(*stack[len(stack)-1], cur)
			} else {
				cur.Args = append(cur.Args, t.text)
			}
		}
	}
	if len(owners) > 0 {
		o := owners[len(owners)-1]
		return root, fmt.Errorf("line %d: block of %q is not closed", o.Line, o.Key)
	}
	return root, nil
}

// ParseKeepalived parses keepalived.conf text. Errors carry the line in their message.
func ParseKeepalived(file string, data []byte) (*KeepalivedConf, error) {
	toks, cuts, err := lexKeepalived(data)
	if err != nil {
		return nil, err
	}
	stmts, err := parseKeepaliveStmts(toks)
	if err != nil {
		return nil, err
	}
	kc := &KeepalivedConf{File: file, Stmts: stmts, VRRPVersion: 2, CutWords: cuts}
	for _, st := range stmts {
		if st.Key == "global_defs" {
			kc.Globals = append(kc.Globals, st.Block...)
			for _, g := range st.Block {
				switch g.Key {
				case "router_id":
					if len(g.Args) > 0 {
						kc.RouterID, kc.RouterIDLine = g.Args[0], g.Line
					}
				case "vrrp_version":
					if len(g.Args) > 0 {
						v, err := strconv.Atoi(g.Args[0])
						if err != nil || (v != 2 && v != 3) {
							return nil, fmt.Errorf("line %d: vrrp_version %q: expected 2 or 3", g.Line, g.Args[0])
						}
						kc.VRRPVersion, kc.VRRPVersionLine = v, g.Line
					}
				}
			}
		}
	}
	for _, st := range stmts {
		if st.Key != "vrrp_instance" {
			continue
		}
		in, err := parseInstance(st, kc.VRRPVersion)
		if err != nil {
			return nil, err
		}
		kc.Instances = append(kc.Instances, in)
	}
	return kc, nil
}

func parseInstance(st *KStmt, version int) (*VRRPInstance, error) {
	in := &VRRPInstance{Line: st.Line, Version: version, Priority: 100, AdvertInt: 1}
	if len(st.Args) > 0 {
		in.Name = st.Args[0]
	}
	for _, s := range st.Block {
		arg := ""
		if len(s.Args) > 0 {
			arg = s.Args[0]
		}
		switch s.Key {
		case "state":
			in.State, in.StateLine = strings.ToUpper(arg), s.Line
		case "interface":
			in.Interface = arg
		case "virtual_router_id":
			in.VRIDRaw, in.VRIDLine = arg, s.Line
			if v, err := strconv.Atoi(arg); err == nil {
				in.VRID = v
			}
		case "priority":
			// keepalived warns about a bad priority and uses 100; the rule reports it.
			v, err := strconv.Atoi(arg)
			if err != nil {
				v = -1
			}
			in.Priority, in.PriorityRaw, in.PriorityLine = v, arg, s.Line
		case "nopreempt":
			in.Nopreempt, in.NopreemptLine = true, s.Line
		case "advert_int":
			f, err := strconv.ParseFloat(arg, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: advert_int %q is not a number", s.Line, arg)
			}
			in.AdvertInt, in.AdvertRaw, in.AdvertLine = f, arg, s.Line
		case "version":
			v, err := strconv.Atoi(arg)
			if err != nil || (v != 2 && v != 3) {
				return nil, fmt.Errorf("line %d: version %q: expected 2 or 3", s.Line, arg)
			}
			in.Version = v
		case "authentication":
			in.AuthLine = s.Line
			for _, a := range s.Block {
				if len(a.Args) == 0 {
					continue
				}
				switch a.Key {
				case "auth_type":
					in.AuthType = strings.ToUpper(a.Args[0])
				case "auth_pass":
					in.AuthPass = a.Args[0]
				}
			}
		case "unicast_src_ip":
			in.UnicastSrc = arg
		case "unicast_peer":
			for _, p := range s.Block {
				in.UnicastPeers = append(in.UnicastPeers, p.Key)
			}
		case "virtual_ipaddress", "virtual_ipaddress_excluded":
			for _, v := range s.Block {
				vip := KVIP{Raw: v.Key, Line: v.Line}
				vip.Prefix, vip.Valid = ParseVIP(v.Key)
				for i := 0; i+1 < len(v.Args); i++ {
					if v.Args[i] == "dev" {
						vip.Dev = v.Args[i+1]
					}
				}
				if s.Key == "virtual_ipaddress" {
					in.VIPs = append(in.VIPs, vip)
				} else {
					in.Excluded = append(in.Excluded, vip)
				}
			}
		}
	}
	return in, nil
}

// ParseVIP reads a virtual_ipaddress address. Without a prefix keepalived takes the whole
// address, /32 for IPv4 and /128 for IPv6 (parse_ipaddress in vrrp_ipaddress.c picks the family
// by a ':' in the text); like keepalived's inet_pton, it accepts no zone.
func ParseVIP(s string) (netip.Prefix, bool) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p, err == nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, a.BitLen()), true
}
