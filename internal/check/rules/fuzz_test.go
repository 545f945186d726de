package rules

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func examplePlanF(f *testing.F) (*v1alpha1.Cluster, *plan.Plan) {
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		f.Fatal(err)
	}
	p, err := plan.New(c)
	if err != nil {
		f.Fatal(err)
	}
	return c, p
}

// FuzzCheck runs the whole pipeline (recognition, parsers, every rule) on an arbitrary file
// and an arbitrary kubelet command line, with the example spec: it must produce findings, not
// panics (a rule panic would surface as an "internal error" finding, which fails the fuzz).
func FuzzCheck(f *testing.F) {
	names := []string{"f.conf", "f.json", "config.toml", "f.yaml", "start.ps1", "f.cmd", "kubelet.flags", "keepalived.conf", "m.yaml"}
	seeds, _ := filepath.Glob(seedDir + "/*.*")
	for i, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(uint8(i), data, goodKubelet)
		}
	}
	f.Add(uint8(7), []byte(goodKeepalived), "")
	f.Add(uint8(8), []byte(goodWinDeployment), "kubelet.exe –v=2 --feature-gates=\"A=true\"")
	dir := f.TempDir()
	spec, examplePlanned := examplePlanF(f)
	f.Fuzz(func(t *testing.T, sel uint8, data []byte, kubelet string) {
		name := names[int(sel)%len(names)]
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		in := check.Input{Spec: spec, Plan: examplePlanned, KubeletFlags: []string{kubelet}}
		if name == "m.yaml" {
			in.Manifests = []string{p}
		} else {
			in.Files = []string{p}
		}
		ctx, _, err := check.Load(in)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		rep := check.Run(ctx, All(), check.Options{})
		for _, fd := range rep.Findings {
			if fd.Location.File == "(kubewin)" {
				t.Fatalf("%s: %s", fd.RuleID, fd.Message)
			}
		}
	})
}
