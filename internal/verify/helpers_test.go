package verify

import (
	"errors"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// example returns the embedded example spec and its real plan.
func example(t testing.TB) (*v1alpha1.Cluster, *plan.Plan) {
	t.Helper()
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatalf("parse example: %v", err)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatalf("plan example: %v", err)
	}
	return c, p
}

func build(t testing.TB, c *v1alpha1.Cluster, p *plan.Plan, ds *DumpSet) *Model {
	t.Helper()
	m, err := Build(Input{Plan: p, Spec: c, Dumps: ds})
	if err != nil {
		t.Fatalf("build model: %v", err)
	}
	return m
}

func run(t testing.TB, m *Model) *Report {
	t.Helper()
	return NewVerifier(m, false).Run()
}

// dumpSet parses NODE=testdata-relative-path dumps.
func dumpSet(t testing.TB, specs ...string) *DumpSet {
	t.Helper()
	if len(specs) == 0 {
		return nil
	}
	ds := &DumpSet{}
	for _, s := range specs {
		node, rel, _ := strings.Cut(s, "=")
		f, err := ParseDump(node, rel, readTestdata(t, rel))
		if err != nil {
			t.Fatalf("dump %s: %v", s, err)
		}
		ds.Files = append(ds.Files, f)
	}
	return ds
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
