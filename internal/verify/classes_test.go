package verify

import "testing"

// Node classes are what makes verify scale: nodes that differ only in their own addresses must
// share one. Every Windows node's plan routes name its own pod gateway; when they were a table
// per node, each Windows node became a class of its own and 5,000 nodes needed 24 GB.
func TestClassCountIndependentOfNodeCount(t *testing.T) {
	classes := func(linux, windows int) int {
		m, err := Build(genInput(t, linux, windows, 4, 20))
		if err != nil {
			t.Fatal(err)
		}
		return NewVerifier(m, false).Run().NodeClasses
	}
	small, large := classes(40, 40), classes(160, 160)
	if small != large {
		t.Fatalf("node classes grow with the cluster: %d at 80 nodes, %d at 320 (each must be the same)", small, large)
	}
	if small > 20 {
		t.Fatalf("%d node classes for a generated cluster of 80 identical racks' nodes; expected at most 20", small)
	}
}
