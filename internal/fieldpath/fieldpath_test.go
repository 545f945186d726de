package fieldpath

import "testing"

func TestParent(t *testing.T) {
	for _, c := range [][2]string{
		{"spec.nodes[2].nics[0]", "spec.nodes[2].nics"},
		{"spec.nodes[2].nics", "spec.nodes[2]"},
		{"spec.nodes[2]", "spec.nodes"},
		{"spec", ""},
		{"", ""},
		{"services[1].after[0]", "services[1].after"},
	} {
		if got := Parent(c[0]); got != c[1] {
			t.Errorf("Parent(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}
