package rules

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/atomicfs"
	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// kubewin must pass its own checks: the bundle rendered for the example cluster, checked with
// the example spec, has no error-severity finding.
func TestRenderedExampleBundlePassesCheck(t *testing.T) {
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatal(err)
	}
	files, err := render.Render(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := atomicfs.WriteTree(dir, files); err != nil {
		t.Fatal(err)
	}
	var configs, manifests []string
	for _, f := range files {
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		switch {
		case f.Path == "plan.json":
		case strings.HasPrefix(f.Path, "cluster/") && strings.HasSuffix(f.Path, ".yaml"):
			manifests = append(manifests, path)
		default:
			configs = append(configs, path)
		}
	}
	ctx, bad, err := check.Load(check.Input{UseExample: true, Files: configs, Manifests: manifests})
	if err != nil || bad {
		t.Fatalf("Load: %v (spec bad %v)", err, bad)
	}
	rep := check.Run(ctx, All(), check.Options{})
	for _, f := range rep.Findings {
		if f.Severity == check.Error {
			t.Errorf("%s %s at %s: %s", f.RuleID, f.Name, f.Location, f.Message)
		}
	}
	// The bundle's node configuration was recognised, not skipped.
	if len(ctx.KubeletConfigs) == 0 || len(ctx.KubeProxyConfigs) == 0 || len(ctx.CNIConfs) == 0 || len(ctx.Keepalived) == 0 ||
		len(ctx.Containerd) == 0 || len(ctx.Objects) == 0 || len(ctx.CommandLines) < 3 || len(ctx.Sysctls) == 0 || len(ctx.Modules) == 0 {
		t.Errorf("bundle inputs not recognised: %+v", rep.Inputs)
	}
	if testing.Verbose() {
		var b strings.Builder
		_ = check.WriteText(&b, rep, false)
		t.Log(b.String())
	}
}
