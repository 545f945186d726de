package loghub

import "testing"

func TestGroupingAccuracy(t *testing.T) {
	cases := []struct {
		name          string
		truth, parsed []string
		want          float64
	}{
		{"exact", []string{"a", "a", "b"}, []string{"x", "x", "y"}, 1},
		{"names do not matter", []string{"a", "b"}, []string{"b", "a"}, 1},
		{"split group is wrong for all its messages", []string{"a", "a", "b"}, []string{"x", "y", "z"}, 1.0 / 3},
		{"merged groups are wrong", []string{"a", "a", "b"}, []string{"x", "x", "x"}, 0},
		{"partly merged", []string{"a", "b", "c", "c"}, []string{"x", "x", "y", "y"}, 0.5},
		{"empty", nil, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := GroupingAccuracy(c.truth, c.parsed); got != c.want {
				t.Errorf("GA = %v, want %v", got, c.want)
			}
		})
	}
}
