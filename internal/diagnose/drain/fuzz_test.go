package drain

import (
	"strings"
	"testing"
)

// FuzzAdd feeds the lines of one input to two miners with small limits (so eviction and the
// max-children rule run) and checks: no panic; every template has as many tokens as the masked
// message and differs from it only by "<*>"; both miners agree (determinism); the cluster list
// is ordered and accounts for every message.
func FuzzAdd(f *testing.F) {
	for _, s := range kubewinCorpus() {
		f.Add(s)
	}
	f.Add(strings.Join(kubewinCorpus(), "\n"))
	for _, s := range []string{
		"", "\n\n", "a b c\na b d\na x y\n7 b c", "\xff\xfe \x00", "\u00a0\u2003x",
		"[::1]:80 ::ffff:1.2.3.4 fe80::%eth0 1.2.3.4/33 2001:db8::/64",
		`"\"\\"" '' '\'' \\?\ C:\ c:/`, "0x 0xg 1.2.3.4.5.6 5m0s0 1h1h1h",
		"E1128 16:50:47.123456    1 x.go:1] y\nE1128 16:50:47.123456    2 x.go:2] z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		msgs := strings.Split(in, "\n")
		if len(msgs) > 64 {
			msgs = msgs[:64]
		}
		cfg := Config{Depth: 5, MaxChildren: 3, MaxClusters: 4, MaxSampleBytes: 16}
		a, b := New(cfg), New(cfg)
		for _, msg := range msgs {
			id, tmpl := a.Add(msg)
			id2, tmpl2 := b.Add(msg)
			if id != id2 || tmpl != tmpl2 {
				t.Fatalf("same input, different result: (%d,%q) vs (%d,%q)", id, tmpl, id2, tmpl2)
			}
			toks := strings.Fields(a.Mask(msg))
			tt := strings.Fields(tmpl)
			if len(tt) != len(toks) || strings.Join(tt, " ") != tmpl {
				t.Fatalf("template %q has %d tokens, masked message %q has %d", tmpl, len(tt), toks, len(toks))
			}
			for i := range tt {
				if tt[i] != Param && tt[i] != toks[i] {
					t.Fatalf("template token %d is %q, message token %q", i, tt[i], toks[i])
				}
			}
		}
		cs := a.Clusters()
		if len(cs) > cfg.MaxClusters || len(cs) != a.Len() {
			t.Fatalf("%d clusters, Len %d, cap %d", len(cs), a.Len(), cfg.MaxClusters)
		}
		total := a.Evicted().Messages
		for i, c := range cs {
			total += c.Count
			if len(c.Sample) > cfg.MaxSampleBytes {
				t.Fatalf("sample of %d bytes", len(c.Sample))
			}
			if i > 0 && (cs[i-1].Count < c.Count || cs[i-1].Count == c.Count && cs[i-1].ID >= c.ID) {
				t.Fatalf("clusters out of order at %d: %+v", i, cs)
			}
		}
		if total != int64(len(msgs)) {
			t.Fatalf("counts and evictions add up to %d, want %d", total, len(msgs))
		}
	})
}
