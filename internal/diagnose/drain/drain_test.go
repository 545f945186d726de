package drain

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// raw is a Config with the built-in masks off, so the cases below exercise the tree alone.
func raw(c Config) Config { c.NoBuiltinMasks = true; return c }

// addAll feeds msgs and returns the cluster id each got.
func addAll(m *Miner, msgs ...string) []int {
	ids := make([]int, len(msgs))
	for i, s := range msgs {
		ids[i], _ = m.Add(s)
	}
	return ids
}

type tc struct {
	Template string
	Count    int64
}

func summary(m *Miner) []tc {
	var out []tc
	for _, c := range m.Clusters() {
		out = append(out, tc{c.Template, c.Count})
	}
	return out
}

// TestDrainTree checks the behaviour the Drain paper and logparser's Drain.py define, case by
// case (see the package comment for the functions named).
func TestDrainTree(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		msgs []string
		want []tc
	}{
		{"variable position becomes <*>", raw(Config{}),
			[]string{"open file a failed", "open file b failed"},
			[]tc{{"open file <*> failed", 2}}},
		{"token count splits clusters", raw(Config{}),
			[]string{"open file a failed", "open file a b failed"},
			[]tc{{"open file a failed", 1}, {"open file a b failed", 1}}},
		{"first token routes: different first tokens never meet", raw(Config{}),
			[]string{"open file a failed", "close file a failed"},
			[]tc{{"open file a failed", 1}, {"close file a failed", 1}}},
		{"a first token with a digit goes to the <*> branch", raw(Config{}),
			[]string{"7 apples fell down", "8 apples fell down"},
			[]tc{{"<*> apples fell down", 2}}},
		{"similarity at the threshold joins", raw(Config{SimThreshold: 0.5}),
			[]string{"a b c d", "a b e f"},
			[]tc{{"a b <*> <*>", 2}}},
		{"similarity below the threshold does not", raw(Config{SimThreshold: 0.6}),
			[]string{"a b c d", "a b e f"},
			[]tc{{"a b c d", 1}, {"a b e f", 1}}},
		{"<*> in a template is not counted as similar", raw(Config{Depth: 4, SimThreshold: 0.5}),
			[]string{"a b c d", "a x y d", "a q r s"},
			// after the first two the template is "a <*> <*> d": "a q r s" shares 1 of 4.
			[]tc{{"a <*> <*> d", 2}, {"a q r s", 1}}},
		{"depth 4 routes on the first token only", raw(Config{Depth: 4, SimThreshold: 0.5}),
			[]string{"a b c d", "a x c d"},
			[]tc{{"a <*> c d", 2}}},
		{"depth 5 routes on two tokens", raw(Config{Depth: 5, SimThreshold: 0.5}),
			[]string{"a b c d", "a x c d"},
			[]tc{{"a b c d", 1}, {"a x c d", 1}}},
		{"max children: the last place goes to <*>, which takes every new token", raw(Config{MaxChildren: 3}),
			[]string{"a x y z", "b x y z", "c x y z", "d x y z"},
			[]tc{{"<*> x y z", 2}, {"a x y z", 1}, {"b x y z", 1}}},
		{"empty messages share one cluster", raw(Config{}),
			[]string{"", "  ", "\t"},
			[]tc{{"", 3}}},
		{"white space runs do not matter", raw(Config{}),
			[]string{"a  b\tc", "a b c"},
			[]tc{{"a b c", 2}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := New(c.cfg)
			addAll(m, c.msgs...)
			if got := summary(m); !reflect.DeepEqual(got, c.want) {
				t.Errorf("clusters\n got %v\nwant %v", got, c.want)
			}
		})
	}
}

func TestFastMatchTies(t *testing.T) {
	// logparser's fastMatch: highest similarity; on a tie the template with more <*>; on a
	// full tie the earlier cluster of the leaf (strict ">").
	t.Run("more parameters win", func(t *testing.T) {
		m := New(raw(Config{SimThreshold: 0.5}))
		plain, _ := m.Add("a b c d")
		param, _ := m.Add("a p q r") // 1 of 4 with "a b c d": new cluster
		if again, tmpl := m.Add("a p s t"); again != param || tmpl != "a p <*> <*>" {
			t.Fatalf("setup: got %d %q", again, tmpl)
		}
		// "a p c k": 2 of 4 with "a b c d" (no <*>) and with "a p <*> <*>" (two <*>).
		if got, _ := m.Add("a p c k"); got != param {
			t.Errorf("went to %d, want %d (more parameters; %d has none)", got, param, plain)
		}
	})
	t.Run("earlier cluster wins a full tie", func(t *testing.T) {
		m := New(raw(Config{SimThreshold: 0.75}))
		first, _ := m.Add("a b c d")
		second, _ := m.Add("a b x y") // 2 of 4 < 0.75: new cluster
		if first == second {
			t.Fatal("setup: should be two clusters")
		}
		// "a b c y": 3 of 4 with both, no <*> in either.
		if got, _ := m.Add("a b c y"); got != first {
			t.Errorf("went to %d, want the earlier %d", got, first)
		}
	})
}

func TestAddReturnsCurrentTemplate(t *testing.T) {
	m := New(raw(Config{Depth: 4, SimThreshold: 0.5}))
	id1, t1 := m.Add("disk sda full")
	id2, t2 := m.Add("disk sdb full")
	if id1 != 1 || id2 != 1 || t1 != "disk sda full" || t2 != "disk <*> full" {
		t.Errorf("got (%d,%q) (%d,%q)", id1, t1, id2, t2)
	}
	id3, _ := m.Add("something else entirely here")
	if id3 != 2 {
		t.Errorf("second cluster id = %d, want 2", id3)
	}
}

func TestClustersOrder(t *testing.T) {
	m := New(raw(Config{Depth: 4, SimThreshold: 0.5}))
	addAll(m, "b one", "a one", "c one", "c two x", "a two", "c three y z")
	// counts: "b one" 1, "a <*>" 2, "c one" 1, "c two x" 1, "c three y z" 1
	want := []Cluster{
		{ID: 2, Template: "a <*>", Count: 2, Sample: "a one"},
		{ID: 1, Template: "b one", Count: 1, Sample: "b one"},
		{ID: 3, Template: "c one", Count: 1, Sample: "c one"},
		{ID: 4, Template: "c two x", Count: 1, Sample: "c two x"},
		{ID: 5, Template: "c three y z", Count: 1, Sample: "c three y z"},
	}
	if got := m.Clusters(); !reflect.DeepEqual(got, want) {
		t.Errorf("Clusters()\n got %+v\nwant %+v", got, want)
	}
}

func TestSample(t *testing.T) {
	m := New(Config{MaxSampleBytes: 8})
	m.Add("héllo wörld 1")
	m.Add("héllo wörld 2")
	c := m.Clusters()[0]
	// "héllo wö" is 10 bytes; 8 bytes end inside "ö" (bytes 7-8), so the cut backs off to 7.
	if c.Sample != "héllo w" || c.Count != 2 {
		t.Errorf("sample %q count %d", c.Sample, c.Count)
	}
}

// countNodes returns the tree's nodes, to check that eviction keeps the tree bounded.
func countNodes(m *Miner) int {
	var walk func(n *node) int
	walk = func(n *node) int {
		k := 1
		for _, ch := range n.children {
			k += walk(ch)
		}
		return k
	}
	total := 0
	for _, n := range m.root {
		total += walk(n)
	}
	return total
}

func TestMaxClustersEvictsLeastRecentlyMatched(t *testing.T) {
	m := New(raw(Config{MaxClusters: 2}))
	a, _ := m.Add("alpha one two")
	b, _ := m.Add("beta three")
	m.Add("alpha one two") // a is now the most recent
	c, _ := m.Add("gamma four five six")
	want := []tc{{"alpha one two", 2}, {"gamma four five six", 1}}
	if got := summary(m); !reflect.DeepEqual(got, want) {
		t.Fatalf("after eviction\n got %v\nwant %v", got, want)
	}
	if got := m.Evicted(); got != (Evicted{Clusters: 1, Messages: 1}) {
		t.Errorf("Evicted() = %+v", got)
	}
	// b's branch was pruned: "beta three" starts a new cluster with a new id.
	b2, _ := m.Add("beta three")
	if b2 == b || b2 <= c || a == c {
		t.Errorf("ids a=%d b=%d c=%d b again=%d", a, b, c, b2)
	}
	if m.Len() != 2 {
		t.Errorf("Len() = %d, want 2", m.Len())
	}
}

func TestMaxClustersBoundsTree(t *testing.T) {
	const capN = 50
	m := New(Config{MaxClusters: capN})
	for i := 0; i < 5000; i++ {
		// distinct first words and lengths: every message is its own template.
		m.Add(fmt.Sprintf("w%cx%c%s tail", 'a'+i%26, 'a'+(i/26)%26, strings.Repeat(" y", i%7)))
	}
	if m.Len() > capN {
		t.Errorf("Len() = %d > cap %d", m.Len(), capN)
	}
	// Each live cluster needs at most Depth-2 nodes (length node + Depth-3 token nodes).
	if n := countNodes(m); n > capN*(DefaultDepth-2) {
		t.Errorf("%d tree nodes for %d clusters: eviction does not prune", n, m.Len())
	}
	ev := m.Evicted()
	var live int64
	for _, c := range m.Clusters() {
		live += c.Count
	}
	if live+ev.Messages != 5000 {
		t.Errorf("live %d + evicted %d messages != 5000", live, ev.Messages)
	}
}

func TestDeterministic(t *testing.T) {
	msgs := kubewinCorpus()
	run := func() ([]Cluster, []int) {
		m := New(Config{MaxClusters: 8})
		return m.Clusters(), addAll(m, msgs...)
	}
	c1, ids1 := run()
	for i := 0; i < 5; i++ {
		c2, ids2 := run()
		if !reflect.DeepEqual(c1, c2) || !reflect.DeepEqual(ids1, ids2) {
			t.Fatalf("run %d differs", i)
		}
	}
}

func TestMessageNotPinned(t *testing.T) {
	// The miner keeps copies: changing the caller's buffer afterwards changes nothing.
	buf := []byte("disk sda full")
	m := New(raw(Config{}))
	m.Add(string(buf))
	copy(buf, "XXXX")
	if c := m.Clusters()[0]; c.Template != "disk sda full" || c.Sample != "disk sda full" {
		t.Errorf("cluster changed with the caller's buffer: %+v", c)
	}
}

func TestFieldsMatchesStrings(t *testing.T) {
	for _, s := range []string{"", " ", "a", " a  b ", "a\u00a0b\u2003c", "x\ty\nz", "\xffa b\xfe"} {
		if got, want := appendFields(nil, s), strings.Fields(s); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("appendFields(%q) = %q, want %q", s, got, want)
		}
	}
}

// refFastMatch is logparser's fastMatch written plainly over seqDist (float similarity, no
// early exit): the reference fastMatch must agree with.
func refFastMatch(cs []*cluster, toks []string, st float64) *cluster {
	var best *cluster
	bestSim, bestPar := -1.0, -1
	for _, c := range cs {
		sim, par := seqDist(c.tokens, toks)
		if sim > bestSim || (sim == bestSim && par > bestPar) {
			best, bestSim, bestPar = c, sim, par
		}
	}
	if best != nil && bestSim >= st {
		return best
	}
	return nil
}

func TestFastMatchEqualsReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	vocab := []string{"a", "b", "c", Param}
	words := func(n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[r.IntN(len(vocab))]
		}
		return w
	}
	for trial := 0; trial < 20000; trial++ {
		n := r.IntN(7)
		st := []float64{0.1, 0.2, 0.39, 0.4, 0.5, 0.6, 0.7, 1, 1.5}[r.IntN(9)]
		cs := make([]*cluster, r.IntN(6))
		for i := range cs {
			cs[i] = &cluster{id: i, tokens: words(n)}
		}
		toks := words(n)
		m := New(Config{SimThreshold: st})
		got, want := m.fastMatch(cs, toks), refFastMatch(cs, toks, st)
		if got != want {
			t.Fatalf("st %v leaf %v message %v: fastMatch picked %v, reference %v", st, cs, toks, got, want)
		}
	}
}
