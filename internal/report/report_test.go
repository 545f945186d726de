package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/diagnose"
	"github.com/kubewin/kubewin/internal/nodestatus"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/verify"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func TestWriteHTMLDeterministicAndSelfContained(t *testing.T) {
	_, a := examplePage(t)
	_, b := examplePage(t)
	if !bytes.Equal(a, b) {
		t.Fatal("two pages of the same input differ")
	}
	// Nothing that a browser would fetch: no src/href to another document, no @import/url().
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)\ssrc\s*=`),
		regexp.MustCompile(`(?i)<link[^>]+href\s*=\s*"(?:https?:|//)`),
		regexp.MustCompile(`(?i)@import|url\(\s*[^#\s]`), // url(#id) is a reference inside the page
		regexp.MustCompile(`(?i)fetch\(|XMLHttpRequest|WebSocket`),
	} {
		if loc := re.FindIndex(a); loc != nil {
			t.Errorf("page refers to something outside itself: %q", a[loc[0]:min(len(a), loc[1]+40)])
		}
	}
}

// A finding whose text holds "</script>" must not end the data element (the page would break
// and the rest of the text would become markup).
func TestWriteHTMLEscapesData(t *testing.T) {
	pg, _ := examplePage(t)
	pg.Findings = append(pg.Findings, Finding{Source: "diagnose", ID: "X", Severity: string(diagnose.SevError),
		What: `</script><script>alert(1)</script>`, Fix: "<b>&"})
	var b strings.Builder
	if err := WriteHTML(&b, pg); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "</script>"); n != 2 {
		t.Errorf("%d </script> in the page, want 2 (the data and the script element)", n)
	}
}

func TestBuildAggregatesLargeClusters(t *testing.T) {
	pg, html := largePage(t, 500, 100)
	if len(pg.Windows) >= 100 || len(pg.Linux) > 10 {
		t.Errorf("500+100 nodes drawn as %d Linux and %d Windows boxes; want classes", len(pg.Linux), len(pg.Windows))
	}
	n := 0
	for _, w := range pg.Windows {
		n += len(w.Nodes)
	}
	if n != 100 {
		t.Errorf("Windows classes hold %d nodes, want 100", n)
	}
	if len(html) > 5<<20 {
		t.Errorf("page is %d bytes", len(html))
	}
}

// The live nodes (report --from-cluster): an unhealthy node and a rollout halted on a node are
// findings; healthy nodes and finished rollouts are not.
func TestBuildNodeFindings(t *testing.T) {
	c, _, err := v1alpha1.ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.New(c)
	if err != nil {
		t.Fatal(err)
	}
	in := verify.Input{Plan: p, Spec: c}
	runs, err := VerifyRuns(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	nodes := []nodestatus.NodeHealth{
		{Node: "ok", Managed: true, Healthy: true, Ready: true, Rollout: &nodestatus.RolloutState{Phase: "Succeeded", Current: "v2"}},
		{Node: "sick", Managed: true, Reason: "ServiceFailing", Message: "kubelet: exit 1"},
		{Node: "halted", Managed: true, Healthy: true, Ready: true, Rollout: &nodestatus.RolloutState{Rollout: "win/v2", Phase: "RolledBack",
			Reason: "gate flow-check: pod→service failed", NodeReason: "rolled back to v1", Current: "v1"}},
		{Node: "unmanaged"},
	}
	pg, err := Build(Input{Plan: p, Runs: runs, Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range pg.Findings {
		if f.Source == "status" || f.Source == "rollout" {
			got = append(got, f.Source+" "+f.ID+" "+f.Where+": "+f.What)
		}
	}
	want := []string{
		"status ServiceFailing node sick: kubelet: exit 1",
		"rollout RolloutRolledBack node halted: rollout win/v2 halted here (RolledBack, runs v1): gate flow-check: pod→service failed; node: rolled back to v1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("node findings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
