package diagnose

import (
	"bytes"
	"fmt"
)

// foldScanner finds every occurrence of a set of keys in a line, ASCII case-insensitively: an
// Aho-Corasick automaton (failure links resolved at build time, so a DFA) over byte classes in
// which an upper-case ASCII letter shares the class of its lower-case form. The scan is one table
// lookup per byte with no failure-link chasing and no per-line allocation; it replaced a
// per-state [256] trie (github.com/BobuSumisu/aho-corasick) that was case-sensitive, took ≈ 6 MiB
// for 300 keys and walked failure links on every mismatch (bench/README.md, diagnose).
//
// Keys marked exact match only in their own case: the klog severity markers ("]: E", ": W0")
// would otherwise make every "…: e0…" of a plain line a candidate.
type foldScanner struct {
	class  [256]uint8 // byte → class; 0 is every byte no key contains
	stride uint32     // classes per state row
	// trans[s+c] is the state after class c in state s; states are premultiplied by stride,
	// and those with output (a key ends there) come last, from firstOut on, so the scan loop
	// tests one comparison per byte.
	trans    []uint32
	firstOut uint32
	outs     [][]int32 // (state-firstOut)/stride → keys ending there, own key first
	keys     []string
	exact    []bool
}

// maxScannerClasses is the class limit of a uint8 class table.
const maxScannerClasses = 256

// foldASCII returns b with ASCII upper-case letters mapped to lower case (other bytes, UTF-8
// sequences included, unchanged).
func foldASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// newFoldScanner compiles keys (non-empty; exact[i] says key i is case-sensitive). Keys that
// fold to the same bytes must be merged by the caller.
func newFoldScanner(keys []string, exact []bool) (*foldScanner, error) {
	m := &foldScanner{keys: keys, exact: exact}
	// Byte classes: one per distinct folded byte of the keys, upper-case letters folded.
	var seen [256]bool
	for i, k := range keys {
		if k == "" {
			return nil, fmt.Errorf("prefilter key %d is empty", i)
		}
		for j := 0; j < len(k); j++ {
			seen[foldASCII(k[j])] = true
		}
	}
	n := 1
	for c := range 256 {
		if seen[c] {
			if n == maxScannerClasses {
				return nil, fmt.Errorf("prefilter keys use more than %d distinct bytes", maxScannerClasses-1)
			}
			m.class[c] = uint8(n)
			n++
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		m.class[c] = m.class[c+'a'-'A']
	}
	stride := n

	// The trie: goto[s*stride+c], -1 where absent; own[s] the key ending at s (-1: none).
	gotoT := make([]int32, stride)
	for i := range gotoT {
		gotoT[i] = -1
	}
	own := []int32{-1}
	for ki, k := range keys {
		s := int32(0)
		for j := 0; j < len(k); j++ {
			c := int(m.class[k[j]])
			next := gotoT[int(s)*stride+c]
			if next < 0 {
				next = int32(len(own))
				own = append(own, -1)
				for range stride {
					gotoT = append(gotoT, -1)
				}
				gotoT[int(s)*stride+c] = next
			}
			s = next
		}
		if own[s] >= 0 {
			return nil, fmt.Errorf("prefilter keys %q and %q fold to the same bytes", keys[own[s]], k)
		}
		own[s] = int32(ki)
	}
	states := len(own)

	// Breadth-first: failure links, complete transitions (the DFA) and outputs, which are a
	// state's own key followed by those of its failure state.
	delta := make([]int32, states*stride)
	fail := make([]int32, states)
	outs := make([][]int32, states)
	order := make([]int32, 0, states)
	for c := range stride {
		t := gotoT[c]
		if t < 0 {
			t = 0
		}
		delta[c] = t
		if t != 0 {
			fail[t] = 0
			order = append(order, t)
		}
	}
	if own[0] >= 0 {
		outs[0] = []int32{own[0]}
	}
	for q := 0; q < len(order); q++ {
		s := order[q]
		f := fail[s]
		if own[s] >= 0 {
			outs[s] = append(outs[s], own[s])
		}
		outs[s] = append(outs[s], outs[f]...)
		for c := range stride {
			t := gotoT[int(s)*stride+c]
			if t < 0 {
				delta[int(s)*stride+c] = delta[int(f)*stride+c]
				continue
			}
			delta[int(s)*stride+c] = t
			fail[t] = delta[int(f)*stride+c]
			order = append(order, t)
		}
	}

	// Renumber: states without output first (root is 0), then those with output.
	order = append([]int32{0}, order...)
	id := make([]uint32, states)
	next := uint32(0)
	for _, s := range order {
		if len(outs[s]) == 0 {
			id[s] = next
			next++
		}
	}
	m.firstOut = next * uint32(stride)
	for _, s := range order {
		if len(outs[s]) > 0 {
			id[s] = next
			m.outs = append(m.outs, outs[s])
			next++
		}
	}
	if uint64(states)*uint64(stride) > 1<<32-1 {
		return nil, fmt.Errorf("prefilter automaton too large: %d states", states)
	}
	m.stride = uint32(stride)
	m.trans = make([]uint32, states*stride)
	for s := range states {
		row := int(id[s]) * stride
		for c := range stride {
			m.trans[row+c] = id[delta[s*stride+c]] * uint32(stride)
		}
	}
	return m, nil
}

// appendMatches appends to dst the index of every key occurring in b (a key occurring twice is
// appended twice) and returns it.
func (m *foldScanner) appendMatches(dst []int, b []byte) []int {
	trans, first := m.trans, m.firstOut
	s := uint32(0)
	for i, c := range b {
		s = trans[s+uint32(m.class[c])]
		if s >= first {
			dst = m.appendOutputs(dst, s, b[:i+1])
		}
	}
	return dst
}

// appendOutputs appends the keys that end at the end of b in state s.
func (m *foldScanner) appendOutputs(dst []int, s uint32, b []byte) []int {
	for _, k := range m.outs[(s-m.firstOut)/m.stride] {
		if m.exact[k] && !bytes.HasSuffix(b, []byte(m.keys[k])) {
			continue
		}
		dst = append(dst, int(k))
	}
	return dst
}

// memory is the automaton's approximate size in bytes (transition table and outputs).
func (m *foldScanner) memory() int {
	n := 4*len(m.trans) + 256
	for _, o := range m.outs {
		n += 24 + 4*cap(o)
	}
	return n
}
