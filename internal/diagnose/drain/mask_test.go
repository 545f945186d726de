package drain

import (
	"net/netip"
	"regexp"
	"strings"
	"testing"
)

func TestDefaultMasks(t *testing.T) {
	const (
		uid   = "3f2a1b4c-1d2e-4f5a-8b9c-0d1e2f3a4b5c"
		cid   = "4d3c2b1a0f9e8d7c6b5a4d3c2b1a0f9e8d7c6b5a4d3c2b1a0f9e8d7c6b5a4d3c"
		klogH = "E1128 16:50:47.123456    1234 "
	)
	cases := []struct {
		name, in, want string
	}{
		{"klog header, call site kept", klogH + `pod_workers.go:1301] "Error syncing pod, skipping"`,
			`<KLOG> pod_workers.go:1301] "Error syncing pod, skipping"`},
		{"klog header only at the start", `x E1128 16:50:47.123456 1`, `x E1128 <NUM>:<NUM>:<NUM> <NUM>`},
		{"structured values", `pod="kube-system/coredns-5d78c9869d-x7k2p" podUID="` + uid + `"`,
			`pod=<QUOTED> podUID=<QUOTED>`},
		{"escaped quotes inside err", `err="failed to \"StartContainer\" for \"kube-proxy\" with x"`,
			`err="failed to <QUOTED> for <QUOTED> with x"`},
		{"prose in quotes stays", `"Failed to stop sandbox" podSandboxID=1`, `"Failed to stop sandbox" podSandboxID=<NUM>`},
		{"single quotes", `image 'registry.k8s.io/pause:3.10' not found`, `image <QUOTED> not found`},
		{"uuid", `orphaned pod ` + uid + ` found`, `orphaned pod <UUID> found`},
		{"uuid inside a token", `pod=kube-proxy-x_kube-system(` + uid + `)`, `pod=kube-proxy-x_kube-system(<UUID>)`},
		{"container id", `container ` + cid + ` not found`, `container <ID> not found`},
		{"image digest", `sha256:` + cid, `sha256:<ID>`},
		{"short container id", `container 4d3c2b1a0f9e exited`, `container <HEX> exited`},
		{"hex counter", `0000000e Created and 8 hex letters deadbeef`, `<HEX> Created and <NUM> hex letters deadbeef`},
		{"ip list", `10.11.10.1,10.11.10.2 "GET`, `<IP> "GET`},
		{"host and port", `dial registry.k8s.io:443 and node-1.corp.example:10250: x`, `dial <HOST> and <HOST>: x`},
		{"a bare host name stays", `label kubernetes.io/hostname on v1.Service`, `label kubernetes.io/hostname on v1.Service`},
		{"ipv4 with port", `dial tcp 10.96.0.1:443: i/o timeout`, `dial tcp <IP>: i/o timeout`},
		{"ipv4 cidr", `route 10.244.1.0/24 exists`, `route <IP> exists`},
		{"ipv6 bracketed with port", `dial [fe80::1%eth0]:443 failed`, `dial <IP> failed`},
		{"ipv6 full", `addr 2001:0db8:85a3:0000:0000:8a2e:0370:7334 down`, `addr <IP> down`},
		{"ipv6 compressed", `addr 2001:db8::8a2e:370:7334 down`, `addr <IP> down`},
		{"ipv6 cidr", `pod CIDR fd00:10:244:1::/64 set`, `pod CIDR <IP> set`},
		{"ipv6 loopback", `listen ::1 ok`, `listen <IP> ok`},
		{"ipv4-mapped ipv6", `peer ::ffff:10.1.2.3 ok`, `peer <IP> ok`},
		{"C++ scope is no address", `std::vector Foo::bar`, `std::vector Foo::bar`},
		{"mac", `adapter 00-15-5D-01-02-03 and 00:15:5d:01:02:03`, `adapter <MAC> and <MAC>`},
		{"url", `Get https://10.0.0.1:6443/api/v1/nodes/win-1?timeout=10s: refused`, `Get <URL>: refused`},
		{"windows path", `open C:\var\lib\kubelet\config.yaml: denied`, `open <PATH>: denied`},
		{"windows device path", `mount \\?\Volume{1234}\ failed`, `mount <PATH> failed`},
		{"unix path", `stat /var/lib/kubelet/pods/` + uid + `/volumes: no such file`, `stat <PATH>: no such file`},
		{"one segment is no path", `GET /healthz and kube-system/coredns`, `GET /healthz and kube-system/coredns`},
		{"durations", `back-off 5m0s, took 1.5s, 300ms, 2h45m0s, 12µs`, `back-off <DUR>, took <DUR>, <DUR>, <DUR>, <DUR>`},
		{"hex code", `failed (0x803b0013)`, `failed (<HEX>)`},
		{"numbers", `exit code 137 after 3 restarts, version 1.2.3`, `exit code <NUM> after <NUM> restarts, version <NUM>`},
		{"digits inside words stay", `node-e1 v1 k8s IPv4 E1128`, `node-e1 v1 k8s IPv4 E1128`},
		{"timestamps", `at 2026-11-28T16:50:47.123Z and 2026-11-28 16:50:47`, `at <TS> and <TS>`},
		{"nothing to mask", `connection refused`, `connection refused`},
	}
	m := New(Config{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := m.Mask(c.in); got != c.want {
				t.Errorf("Mask(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

func TestConfiguredMasks(t *testing.T) {
	blk := Mask{Re: regexp.MustCompile(`blk_-?\d+`), Replacement: Param}
	cases := []struct {
		name, in, want string
		cfg            Config
	}{
		{"extra masks run before the built-in ones", "blk_-123 from 10.0.0.1:50010",
			"<*> from <IP>", Config{Masks: []Mask{blk}}},
		{"built-in masks off", "blk_-123 from 10.0.0.1:50010",
			"<*> from 10.0.0.1:50010", Config{Masks: []Mask{blk}, NoBuiltinMasks: true}},
		{"nil regexp is ignored", "a 1", "a 1", Config{Masks: []Mask{{}}, NoBuiltinMasks: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := New(c.cfg).Mask(c.in); got != c.want {
				t.Errorf("Mask(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// maskRef is what a span reported by scanMasks must be, per placeholder: the regular
// expression each matcher's comment states (anchored), and whether \b must hold at its ends.
// IP spans are checked with net/netip instead.
func maskRef() map[string]struct {
	re         *regexp.Regexp
	start, end bool
} {
	type ref = struct {
		re         *regexp.Regexp
		start, end bool
	}
	re := func(p string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + p + `)$`) }
	return map[string]ref{
		phKLOG:   {re(`[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+`), true, true},
		keep:     {re(`[\w.-]+\.go:\d+\]`), true, false},
		phTS:     {re(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?`), true, false},
		phURL:    {re(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>\\]*[^\s"'<>\\.,:;)\]]`), true, false},
		phQuoted: {re(`\\?"[^"\s\\]+\\?"|'[^'\s]+'`), false, false},
		phUUID:   {re(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`), false, false},
		phID:     {re(`[0-9a-fA-F]{64}`), true, true},
		phMAC:    {re(`[0-9a-fA-F]{2}(?:[:-][0-9a-fA-F]{2}){5}`), true, true},
		phPath:   {re(`(?:[A-Za-z]:[\\/]|\\\\[?.]\\)(?:[^\s"'<>|*?]*[^\s"'<>|*?.,:;)])?|(?:\.{1,2})?(?:/[\w.@%+~=-]+){2,}/?`), false, false},
		phDur:    {re(`(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+`), true, true},
		phHex:    {re(`0[xX][0-9a-fA-F]+|[0-9a-fA-F]{8,}`), true, true},
		phHost:   {re(`(?:[\w-]+\.)+[A-Za-z][\w-]*:\d{1,5}`), true, true},
		phNum:    {re(`\d+(?:\.\d+)*`), true, true},
	}
}

// validIPSpan reports whether span is an address as the IP matchers take it: [v6%zone]:port,
// v4/prefix:port (or a comma-separated list of those), v6%zone/prefix.
func validIPSpan(span string) bool {
	if strings.HasPrefix(span, "[") {
		k := strings.IndexByte(span, ']')
		if k < 0 {
			return false
		}
		rest := span[k+1:]
		if rest != "" && !regexp.MustCompile(`^:\d{1,5}$`).MatchString(rest) {
			return false
		}
		ip, err := netip.ParseAddr(span[1:k])
		return err == nil && ip.Is6()
	}
	if strings.Contains(span, ",") {
		for _, part := range strings.Split(span, ",") {
			if !regexp.MustCompile(`^[\d.]+(?:/\d{1,2})?(?::\d{1,5})?$`).MatchString(part) || !validIPSpan(part) {
				return false
			}
		}
		return true
	}
	addr := span
	if k := strings.IndexByte(addr, '/'); k >= 0 {
		if !regexp.MustCompile(`^/\d{1,3}(?::\d{1,5})?$`).MatchString(addr[k:]) {
			return false
		}
		addr = addr[:k]
	} else if strings.Count(addr, ":") == 1 { // v4:port
		k := strings.IndexByte(addr, ':')
		if !regexp.MustCompile(`^:\d{1,5}$`).MatchString(addr[k:]) {
			return false
		}
		addr = addr[:k]
	}
	_, err := netip.ParseAddr(addr)
	return err == nil
}

// FuzzMask checks the built-in masks: every span is what its placeholder promises (maskRef),
// spans are ordered and disjoint, apply rebuilds from them, and no all-digit word survives.
func FuzzMask(f *testing.F) {
	for _, s := range kubewinCorpus() {
		f.Add(s)
	}
	for _, s := range []string{"", "1", "::", "[::1]:99999x", "1.2.3.4:65536", "0x", "12345678-1234-1234-1234-123456789abcX",
		"E1128 16:50:47.1 1", "a.go:1]", `\\?\`, "C:\\", "../a/b/", "2026-11-28 16:50:47+01:00", "5m0s5", "1.2.3.", "1.2.3.4,5.6.7.8:9,1.1.1", "a.b:1 a.:1 .b:1 a.1:1 a.b:123456"} {
		f.Add(s)
	}
	refs := maskRef()
	allDigits := regexp.MustCompile(`^\d+$`)
	f.Fuzz(func(t *testing.T, s string) {
		last := 0
		var b strings.Builder
		scanMasks(s, func(start, end int, ph string) {
			if start < last || end <= start || end > len(s) {
				t.Fatalf("span [%d,%d) after %d in %q", start, end, last, s)
			}
			span := s[start:end]
			if ph == phIP {
				if !validIPSpan(span) {
					t.Fatalf("IP span %q is no address (in %q)", span, s)
				}
			} else {
				r, ok := refs[ph]
				if !ok {
					t.Fatalf("unknown placeholder %q", ph)
				}
				if !r.re.MatchString(span) || (r.start && !boundaryAt(s, start)) || (r.end && !boundaryAt(s, end)) {
					t.Fatalf("%q span %q at [%d,%d) breaks its pattern %s (in %q)", ph, span, start, end, r.re, s)
				}
			}
			b.WriteString(s[last:start])
			if ph == keep {
				b.WriteString(span)
			} else {
				b.WriteString(ph)
			}
			last = end
		})
		b.WriteString(s[last:])
		got := newMasker(nil, true).apply(s)
		if got != b.String() {
			t.Fatalf("apply = %q, spans give %q", got, b.String())
		}
		for _, w := range strings.Fields(got) {
			if allDigits.MatchString(w) {
				t.Fatalf("number %q survives in %q (from %q)", w, got, s)
			}
		}
	})
}
