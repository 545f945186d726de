package verify

import "slices"

// lpm is a small longest-prefix-match map from prefixes to values (pod ranges to their
// nodes, L2Bridge subnets on a segment to their Windows node).
type lpm[T any] struct {
	byLen [33]map[Addr]T
	lens  []uint8
}

func (l *lpm[T]) set(p Prefix, v T) {
	m := l.byLen[p.Len]
	if m == nil {
		m = map[Addr]T{}
		l.byLen[p.Len] = m
		l.lens = append(l.lens, p.Len)
		slices.SortFunc(l.lens, func(a, b uint8) int { return int(b) - int(a) })
	}
	m[p.Addr] = v
}

func (l *lpm[T]) get(a Addr) (T, Prefix, bool) {
	for _, n := range l.lens {
		if v, ok := l.byLen[n][a&mask(n)]; ok {
			return v, Prefix{Addr: a & mask(n), Len: n}, true
		}
	}
	var zero T
	return zero, Prefix{}, false
}
