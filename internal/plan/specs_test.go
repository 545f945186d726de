package plan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Every spec the validator accepts in testdata/specs/good must plan.
func TestGoodSpecsPlan(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "specs", "good", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no good specs found: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c, _, err := v1alpha1.Parse(f, data)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if _, err := New(c); err != nil {
				t.Fatalf("plan: %v", err)
			}
		})
	}
}
