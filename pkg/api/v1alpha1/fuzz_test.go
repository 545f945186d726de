package v1alpha1

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary documents to Parse. Parse must never panic, must report problems
// only as a positioned ErrorList, and whatever it accepts must be valid and survive a JSON
// round trip unchanged.
func FuzzParse(f *testing.F) {
	f.Add(ExampleYAML())
	for _, dir := range []string{"good", "bad"} {
		files, err := filepath.Glob(filepath.Join(specsDir, dir, "*"))
		if err != nil {
			f.Fatal(err)
		}
		for _, name := range files {
			if filepath.Ext(name) == ".out" {
				continue
			}
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, src, err := Parse("fuzz.yaml", data)
		if src == nil {
			t.Fatal("Parse returned no Source")
		}
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %v", err)
			}
			if c != nil {
				t.Fatal("Cluster returned together with errors")
			}
			for _, fe := range list {
				if fe.File != "fuzz.yaml" || fe.Line < 0 || fe.Column < 0 || fe.Message == "" {
					t.Fatalf("malformed error %#v", fe)
				}
			}
			return
		}
		if errs := Validate(c); len(errs) > 0 {
			t.Fatalf("accepted a cluster that does not validate: %v", errs)
		}
		j1 := mustJSON(t, c)
		c2, _, err := Parse("fuzz.json", j1)
		if err != nil {
			t.Fatalf("accepted cluster does not parse back from JSON: %v\n%s", err, j1)
		}
		if j2 := mustJSON(t, c2); !bytes.Equal(j1, j2) {
			t.Fatalf("JSON round trip differs:\n%s\n%s", j1, j2)
		}
	})
}
