// Package drain groups log messages by template with the Drain algorithm (Pinjia He, Jieming
// Zhu, Zibin Zheng, Michael R. Lyu: "Drain: An Online Log Parsing Approach with Fixed Depth
// Tree", ICWS 2017), so that `kubewin diagnose` can rank the error lines no signature knows by
// how often their template occurs.
//
// A message is masked (variable tokens such as IPs, UUIDs, container ids, paths and durations
// become typed placeholders), split on white space, and routed through a fixed-depth prefix tree:
// first by its token count, then by its first Depth-3 tokens (a token with a digit goes to the
// "<*>" child). The leaf holds candidate clusters; the one whose template shares the most tokens
// position by position wins if that share reaches SimThreshold, and the positions where the
// template and the message differ become "<*>". Otherwise the message starts a new cluster.
// The behaviour follows the reference implementation in logpai/logparser
// (logparser/Drain/Drain.py: treeSearch, addSeqToPrefixTree, seqDist, fastMatch, getTemplate)
// and IBM's Drain3 (logpai/Drain3 drain3/drain.py), from which the bounded cluster count with
// least-recently-matched eviction comes.
//
// A Miner is not safe for concurrent use: the caller feeds it from one goroutine, in input order,
// which is also what makes its output deterministic (same messages in the same order give the
// same clusters, ids and templates).
package drain

import (
	"container/list"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Param is the wildcard Drain puts where a cluster's messages differ.
const Param = "<*>"

// Defaults of Config; see README.md for why.
const (
	DefaultDepth          = 5
	DefaultSimThreshold   = 0.7
	DefaultMaxChildren    = 100
	DefaultMaxClusters    = 4096
	DefaultMaxSampleBytes = 1024
)

// Config tunes a Miner. The zero value of a field selects its default.
type Config struct {
	// Depth of the prefix tree counted as Drain counts it: root, token-count layer, Depth-3
	// token layers, leaf. Values below 3 are taken as 3 (no token layer).
	Depth int
	// SimThreshold is the share of positions (0..1] at which a message must equal a cluster's
	// template to join it; "<*>" positions do not count as equal.
	SimThreshold float64
	// MaxChildren bounds the children of a token node; past it new tokens share a "<*>" child.
	MaxChildren int
	// MaxClusters bounds memory: when a new cluster would exceed it, the cluster matched least
	// recently is dropped (its messages are counted in Evicted).
	MaxClusters int
	// MaxSampleBytes bounds the stored sample message of a cluster (cut on a rune boundary).
	MaxSampleBytes int
	// Masks run before the built-in masks, in order (e.g. a dataset's own regexps).
	Masks []Mask
	// NoBuiltinMasks turns the built-in masks off, leaving only Masks.
	NoBuiltinMasks bool
}

// Cluster is one template with the number of messages it took.
type Cluster struct {
	ID       int
	Template string
	Count    int64
	Sample   string // the first message of the cluster, as given to Add (possibly cut)
}

// Evicted says how much the cluster cap dropped.
type Evicted struct {
	Clusters int
	Messages int64
}

// Miner mines templates from messages added one by one. Not safe for concurrent use.
type Miner struct {
	cfg     Config
	prefix  int // token layers of the tree: Depth-3
	mask    *masker
	root    map[int]*node // by token count
	lru     *list.List    // of *cluster, most recently matched first
	nextID  int
	evicted Evicted
	toks    []string // reused token buffer
}

type node struct {
	parent   *node
	key      string // key of this node in parent.children
	length   int    // token count, on the first-layer node only
	children map[string]*node
	clusters []*cluster // on leaves
}

type cluster struct {
	id       int
	tokens   []string
	template string // tokens joined by one space
	count    int64
	sample   string
	leaf     *node
	elem     *list.Element
}

// New returns a Miner with cfg's zero fields set to their defaults.
func New(cfg Config) *Miner {
	if cfg.Depth == 0 {
		cfg.Depth = DefaultDepth
	}
	if cfg.Depth < 3 {
		cfg.Depth = 3
	}
	if cfg.SimThreshold <= 0 {
		cfg.SimThreshold = DefaultSimThreshold
	}
	if cfg.MaxChildren <= 0 {
		cfg.MaxChildren = DefaultMaxChildren
	}
	if cfg.MaxClusters <= 0 {
		cfg.MaxClusters = DefaultMaxClusters
	}
	if cfg.MaxSampleBytes <= 0 {
		cfg.MaxSampleBytes = DefaultMaxSampleBytes
	}
	return &Miner{
		cfg:    cfg,
		prefix: cfg.Depth - 3,
		mask:   newMasker(cfg.Masks, !cfg.NoBuiltinMasks),
		root:   map[int]*node{},
		lru:    list.New(),
		nextID: 1,
	}
}

// Mask returns msg with the configured and built-in masks applied, as Add sees it.
func (m *Miner) Mask(msg string) string { return m.mask.apply(msg) }

// Add puts msg into the cluster it matches, or into a new one, and returns that cluster's id
// and its template after the update. Ids start at 1 and are never reused.
func (m *Miner) Add(msg string) (clusterID int, template string) {
	masked := m.mask.apply(msg)
	m.toks = appendFields(m.toks[:0], masked)
	toks := m.toks
	if c := m.search(toks); c != nil {
		c.count++
		if c.merge(toks) {
			c.template = strings.Join(c.tokens, " ")
		}
		m.lru.MoveToFront(c.elem)
		return c.id, c.template
	}
	c := m.newCluster(msg, toks)
	return c.id, c.template
}

// search descends the tree as logparser's treeSearch does and returns the best cluster of the
// leaf reached, or nil.
func (m *Miner) search(toks []string) *cluster {
	n := m.root[len(toks)]
	if n == nil {
		return nil
	}
	for i := 0; i < m.prefix && i < len(toks); i++ {
		if ch := n.children[toks[i]]; ch != nil {
			n = ch
		} else if ch := n.children[Param]; ch != nil {
			n = ch
		} else {
			return nil
		}
	}
	return m.fastMatch(n.clusters, toks)
}

// fastMatch picks the cluster with the highest similarity, ties going to the template with more
// parameters and then to the earlier cluster in the leaf (logparser fastMatch: strict ">"), and
// returns it if its similarity reaches the threshold. All templates of a leaf have len(toks)
// tokens, so similarities compare as counts of equal tokens; a template is left as soon as it
// can no longer reach the threshold or the best count, which changes no result.
func (m *Miner) fastMatch(cs []*cluster, toks []string) *cluster {
	n := len(toks)
	if n == 0 {
		if len(cs) > 0 && m.cfg.SimThreshold <= 1 {
			return cs[0] // an empty template equals an empty message: similarity 1
		}
		return nil
	}
	need := minSimilar(n, m.cfg.SimThreshold)
	var best *cluster
	bestSim, bestPar := -1, -1
	for _, c := range cs {
		sim, par, ok := 0, 0, true
		for i, t := range c.tokens {
			if t == Param {
				par++
			} else if t == toks[i] {
				sim++
			}
			if left := sim + n - 1 - i; left < need || left < bestSim {
				ok = false
				break
			}
		}
		if ok && (sim > bestSim || (sim == bestSim && par > bestPar)) {
			best, bestSim, bestPar = c, sim, par
		}
	}
	return best
}

// minSimilar returns the least number k of equal tokens out of n for which k/n reaches st,
// computed with the same float division as logparser's seqDist, or n+1 if none does.
func minSimilar(n int, st float64) int {
	for k := 0; k <= n; k++ {
		if float64(k)/float64(n) >= st {
			return k
		}
	}
	return n + 1
}

// seqDist returns the share of positions where the template equals the message (a "<*>" in the
// template does not count) and the number of "<*>" in the template. len(tmpl) == len(toks).
// An empty template equals an empty message. fastMatch computes the same with an early exit;
// the tests compare the two.
func seqDist(tmpl, toks []string) (float64, int) {
	if len(tmpl) == 0 {
		return 1, 0
	}
	sim, par := 0, 0
	for i, t := range tmpl {
		if t == Param {
			par++
			continue
		}
		if t == toks[i] {
			sim++
		}
	}
	return float64(sim) / float64(len(tmpl)), par
}

// merge turns the positions where toks differs from the template into "<*>"; it reports
// whether the template changed.
func (c *cluster) merge(toks []string) bool {
	changed := false
	for i, t := range c.tokens {
		if t != Param && t != toks[i] {
			c.tokens[i] = Param
			changed = true
		}
	}
	return changed
}

func (m *Miner) newCluster(msg string, toks []string) *cluster {
	if m.lru.Len() >= m.cfg.MaxClusters {
		m.evictOldest()
	}
	// One copy of the masked text backs all tokens, so the cluster does not pin the caller's
	// buffer (msg may be a slice of a large read buffer).
	joined := strings.Join(toks, " ")
	tokens := make([]string, len(toks))
	off := 0
	for i, t := range toks {
		tokens[i] = joined[off : off+len(t)]
		off += len(t) + 1
	}
	c := &cluster{
		id:       m.nextID,
		tokens:   tokens,
		template: joined,
		count:    1,
		sample:   strings.Clone(cut(msg, m.cfg.MaxSampleBytes)),
	}
	m.nextID++
	c.elem = m.lru.PushFront(c)
	m.insert(c)
	return c
}

// insert adds c to the leaf for its template, creating nodes as logparser's addSeqToPrefixTree
// does: a token with a digit goes to the "<*>" child; once a node has MaxChildren-1 token
// children the last place is taken by "<*>", which takes every further new token.
func (m *Miner) insert(c *cluster) {
	toks := c.tokens
	n := m.root[len(toks)]
	if n == nil {
		n = &node{length: len(toks), children: map[string]*node{}}
		m.root[len(toks)] = n
	}
	for i := 0; i < m.prefix && i < len(toks); i++ {
		t := toks[i]
		if ch := n.children[t]; ch != nil {
			n = ch
			continue
		}
		key := t
		_, hasParam := n.children[Param]
		switch {
		case hasDigit(t):
			key = Param
		case hasParam && len(n.children) >= m.cfg.MaxChildren:
			key = Param
		case !hasParam && len(n.children)+1 >= m.cfg.MaxChildren:
			key = Param
		}
		ch := n.children[key]
		if ch == nil {
			ch = &node{parent: n, key: key, children: map[string]*node{}}
			n.children[key] = ch
		}
		n = ch
	}
	n.clusters = append(n.clusters, c)
	c.leaf = n
}

// evictOldest drops the least recently matched cluster and the tree nodes left empty, so the
// tree stays bounded by MaxClusters too.
func (m *Miner) evictOldest() {
	e := m.lru.Back()
	c := e.Value.(*cluster)
	m.lru.Remove(e)
	m.evicted.Clusters++
	m.evicted.Messages += c.count
	n := c.leaf
	for i, x := range n.clusters {
		if x == c {
			n.clusters = append(n.clusters[:i], n.clusters[i+1:]...)
			break
		}
	}
	for n != nil && len(n.clusters) == 0 && len(n.children) == 0 {
		if n.parent == nil {
			delete(m.root, n.length)
			break
		}
		delete(n.parent.children, n.key)
		n = n.parent
	}
}

// Clusters returns the live clusters by count, highest first, then by first appearance.
func (m *Miner) Clusters() []Cluster {
	out := make([]Cluster, 0, m.lru.Len())
	for e := m.lru.Front(); e != nil; e = e.Next() {
		c := e.Value.(*cluster)
		out = append(out, Cluster{ID: c.id, Template: c.template, Count: c.count, Sample: c.sample})
	}
	// Ids grow with first appearance, so they break count ties in first-seen order.
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Len returns the number of live clusters.
func (m *Miner) Len() int { return m.lru.Len() }

// Evicted returns how many clusters, and messages in them, the cluster cap has dropped.
func (m *Miner) Evicted() Evicted { return m.evicted }

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			return true
		}
	}
	return false
}

// appendFields appends the white-space separated fields of s to dst, splitting where
// strings.Fields does (unicode.IsSpace) without allocating a new slice each call.
func appendFields(dst []string, s string) []string {
	start := -1
	for i := 0; i < len(s); {
		var space bool
		size := 1
		if c := s[i]; c < utf8.RuneSelf {
			space = c == ' ' || c >= '\t' && c <= '\r' // unicode.IsSpace's ASCII set
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
		}
		if space {
			if start >= 0 {
				dst = append(dst, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
		i += size
	}
	if start >= 0 {
		dst = append(dst, s[start:])
	}
	return dst
}

// cut returns s shortened to at most n bytes on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
