package diagnose

import (
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

// lowerPattern compiles pattern for ASCII-lower-cased input. ok is false when the pattern has a
// case-sensitive part that lower-casing would change (an explicit (?-i) with an upper-case letter,
// a class that is not closed under ASCII case): such a pattern is matched with (?i) on the
// original line instead.
func lowerPattern(pattern string) (re *regexp.Regexp, ok bool, err error) {
	tree, err := syntax.Parse(pattern, syntax.Perl|syntax.FoldCase)
	if err != nil {
		return nil, false, err
	}
	if !lowerTree(tree) {
		return nil, false, nil
	}
	re, err = regexp.Compile(tree.String())
	if err != nil {
		return nil, false, fmt.Errorf("rewritten for lower-cased lines: %w", err)
	}
	return re, true, nil
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
