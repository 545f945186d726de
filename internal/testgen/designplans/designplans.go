// Package designplans plans testgen.DesignClusters for the tests that need every kind of host
// effect (render's and join's parity tests). It is a package of its own because internal/plan's
// own tests import testgen, which therefore cannot import plan.
package designplans

import (
	"fmt"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/testgen"
)

// Plans returns the plan of each of testgen.DesignClusters, by design name.
func Plans() (map[string]*plan.Plan, error) {
	cs, err := testgen.DesignClusters()
	if err != nil {
		return nil, err
	}
	out := map[string]*plan.Plan{}
	for name, c := range cs {
		p, err := plan.New(c)
		if err != nil {
			return nil, fmt.Errorf("plan design %s: %w", name, err)
		}
		out[name] = p
	}
	return out, nil
}
