package report

import (
	"fmt"
	"strings"

	"github.com/kubewin/kubewin/internal/verify"
)

// ScenarioSet returns the scenarios a page precomputes when the user names none: the normal
// state, each gateway member down on its own, and every member of a group down at once (the
// outage that cuts the group's Windows pod CIDRs off).
func ScenarioSet(in verify.Input) []string {
	var out []string
	for _, g := range in.Plan.GatewayGroups {
		var all []string
		for _, m := range g.Members {
			out = append(out, "gateway-down="+m.Node)
			all = append(all, m.Node)
		}
		if len(all) > 1 {
			out = append(out, "gateway-down="+strings.Join(all, ","))
		}
	}
	return out
}

// VerifyRuns runs verify on in for the normal state and for each scenario (each on a fresh
// model, so scenarios do not accumulate).
func VerifyRuns(in verify.Input, scenarios []string) ([]Run, error) {
	runs := make([]Run, 0, 1+len(scenarios))
	m, err := verify.Build(in)
	if err != nil {
		return nil, fmt.Errorf("verify model: %w", err)
	}
	runs = append(runs, Run{Name: "normal", Label: "normal", Report: verify.NewVerifier(m, false).Run()})
	for _, s := range scenarios {
		sc, err := verify.ParseScenario(s)
		if err != nil {
			return nil, err
		}
		m, err := verify.Build(in)
		if err != nil {
			return nil, fmt.Errorf("verify model: %w", err)
		}
		v := verify.NewVerifier(m, false)
		if err := v.Apply(sc); err != nil {
			return nil, fmt.Errorf("scenario %s: %w", s, err)
		}
		runs = append(runs, Run{Name: s, Label: strings.ReplaceAll(s, ",", ", "), Report: v.Run()})
	}
	return runs, nil
}
