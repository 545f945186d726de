package discover

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestSetCoversFields finds every field path the sources add candidates for and checks that
// set stores it (set panics on an unknown path).
func TestSetCoversFields(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`r\.(?:add|addCIDRs)\("([a-zA-Z.]+)"`)
	seen := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			seen[m[1]] = true
		}
	}
	if len(seen) < 15 {
		t.Fatalf("found only %d field paths: %v", len(seen), seen)
	}
	for path := range seen {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("set(%q) panics: %v", path, p)
				}
			}()
			r := &reader{res: &Result{Cluster: newCluster()}}
			r.set(path, "1")
		}()
	}
}
