package bundle

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/atomicfs"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/example from the current bundle")

const goldenDir = "../../testdata/golden/example"

// TestGoldenExampleBundle pins every byte `kubewin plan` writes for the embedded example.
func TestGoldenExampleBundle(t *testing.T) {
	files, err := Build(examplePlan(t))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := atomicfs.WriteTree(goldenDir, files); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := map[string][]byte{}
	err = filepath.WalkDir(goldenDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(goldenDir, p)
		want[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatalf("read golden bundle (run go test ./internal/bundle -run Golden -update): %v", err)
	}
	got := map[string][]byte{}
	for _, f := range files {
		got[f.Path] = f.Data
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("%s: in golden bundle, no longer rendered", name)
		}
	}
	for name, data := range got {
		w, ok := want[name]
		switch {
		case !ok:
			t.Errorf("%s: rendered, not in golden bundle", name)
		case !bytes.Equal(w, data):
			t.Errorf("%s differs from golden: %s (go test ./internal/bundle -run Golden -update)", name, firstDiff(w, data))
		}
	}
}

func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ": golden " + strings.TrimSpace(x) + " | now " + strings.TrimSpace(y)
		}
	}
	return "same lines, different bytes"
}
