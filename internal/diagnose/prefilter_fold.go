package diagnose

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
)

// Case-insensitive confirmation at case-sensitive speed. A pattern compiled with (?i) loses Go's
// literal-prefix search (regexp only skips ahead with bytes.Index to a prefix it can compare
// exactly) and compares every letter through unicode.SimpleFold, which made confirmation the
// largest cost of a scan. Instead, a candidate line is lower-cased once (ASCII letters only, so
// every offset stays the same) and each pattern is rewritten for lower-cased text: its folded
// ASCII literals become plain lower-case literals. Captures are then read from the original line
// at the same offsets, so they keep their case.

// lowerPattern compiles pattern for ASCII-lower-cased input and returns what such a line must
// contain for it to match. need is nil when the pattern has a case-sensitive part that
// lower-casing would change (an explicit (?-i) with an upper-case letter, a class that is not
// closed under ASCII case): such a pattern is matched with (?i) on the original line instead.
func lowerPattern(pattern string) (re *regexp.Regexp, need *required, err error) {
	tree, err := syntax.Parse(pattern, syntax.Perl|syntax.FoldCase)
	if err != nil {
		return nil, nil, err
	}
	if !lowerTree(tree) {
		return nil, nil, nil
	}
	re, err = regexp.Compile(tree.String())
	if err != nil {
		return nil, nil, fmt.Errorf("rewritten for lower-cased lines: %w", err)
	}
	need = &required{}
	need.all, need.anyOf = requiredLiterals(tree)
	return re, need, nil
}

// required is what a lower-cased line must contain for a pattern to match it: every string of
// all and one string of each anyOf group. Checking it with bytes.Contains first skips most of
// the regexp runs that find nothing (a literal in the line that the pattern then rejects, such
// as `" not found` in a container's message for a pattern about nodes): Go's regexp tries every
// start position of a line when the pattern does not begin with a literal.
type required struct {
	all   [][]byte
	anyOf [][][]byte
}

// minRequired is the shortest literal worth a bytes.Contains.
const minRequired = 3

// requiredLiterals returns literals every match of a lowered tree contains (all) and groups of
// which every match contains at least one (anyOf): a literal of a concatenation is in every
// match; an alternation contributes one group holding the longest required literal of each of its
// branches (none when a branch requires nothing). Optional parts contribute nothing.
func requiredLiterals(re *syntax.Regexp) (all [][]byte, anyOf [][][]byte) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 && len(re.Rune) >= minRequired {
			return [][]byte{[]byte(string(re.Rune))}, nil
		}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			a, o := requiredLiterals(sub)
			all, anyOf = append(all, a...), append(anyOf, o...)
		}
	case syntax.OpAlternate:
		var group [][]byte
		for _, sub := range re.Sub {
			a, _ := requiredLiterals(sub)
			var best []byte
			for _, l := range a {
				if len(l) > len(best) {
					best = l
				}
			}
			if best == nil {
				return nil, nil
			}
			group = append(group, best)
		}
		return nil, [][][]byte{group}
	}
	return all, anyOf
}

// possible reports whether the lower-cased line holds what the pattern requires.
func (r *required) possible(lower []byte) bool {
	for _, l := range r.all {
		if !bytes.Contains(lower, l) {
			return false
		}
	}
	for _, g := range r.anyOf {
		found := false
		for _, l := range g {
			if bytes.Contains(lower, l) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// lowerTree rewrites tree in place for lower-cased input and reports whether it is equivalent
// there to the tree on the original input (for ASCII case differences).
func lowerTree(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			for _, r := range re.Rune {
				if r >= 'A' && r <= 'Z' {
					return false
				}
			}
			break
		}
		for _, r := range re.Rune {
			if r >= 0x80 {
				// A non-ASCII folded literal keeps its folding (it matches lower-case ASCII too).
				return true
			}
		}
		for i, r := range re.Rune {
			re.Rune[i] = rune(foldASCII(byte(r)))
		}
		re.Flags &^= syntax.FoldCase
	case syntax.OpCharClass:
		for c := 'A'; c <= 'Z'; c++ {
			if inClass(re.Rune, c) != inClass(re.Rune, c+'a'-'A') {
				return false
			}
		}
	}
	for _, sub := range re.Sub {
		if !lowerTree(sub) {
			return false
		}
	}
	return true
}

func inClass(ranges []rune, r rune) bool {
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i] <= r && r <= ranges[i+1] {
			return true
		}
	}
	return false
}

// lowerASCII writes b with ASCII upper-case letters lower-cased to dst[:0] and returns it.
func lowerASCII(dst, b []byte) []byte {
	dst = append(dst[:0], b...)
	for i, c := range dst {
		if c >= 'A' && c <= 'Z' {
			dst[i] = c + 'a' - 'A'
		}
	}
	return dst
}
