package check_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/check/rules"
)

const seeds = "../../testdata/check/seeds"

// seedReport checks a mix of seed inputs: findings with files, lines, columns, flags, fields,
// nodes, objects and findings without a file.
func seedReport(t *testing.T) *check.Report {
	t.Helper()
	in := check.Input{
		UseExample: true,
		Files: []string{filepath.Join(seeds, "seed000-kubelet-2.7.cmd"), filepath.Join(seeds, "seed000-l2bridge.conf"),
			filepath.Join(seeds, "seed000-keepalived.conf"), filepath.Join(seeds, "seed002-kubeletstart.ps1")},
		Manifests:    []string{filepath.Join(seeds, "seed001-iis-hyperv.yaml"), filepath.Join(seeds, "seed002-deployment-v1beta2.yaml")},
		KubeletFlags: []string{`c:\k\kubelet.exe –v=2 --resolv-conf=/etc/resolv.conf`},
	}
	ctx, bad, err := check.Load(in)
	if err != nil || bad {
		t.Fatalf("Load: %v %v", err, bad)
	}
	ign, err := check.ParseIgnore([]string{"KW1107,kw1118"}, rules.All())
	if err != nil {
		t.Fatal(err)
	}
	return check.Run(ctx, rules.All(), check.Options{Ignore: ign, Threshold: check.Error})
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../../testdata/check/sarif-2.1.0-subset.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSARIFValidAgainstSchema(t *testing.T) {
	rep := seedReport(t)
	var out bytes.Buffer
	if err := check.WriteSARIF(&out, rep); err != nil {
		t.Fatal(err)
	}
	schema := compileSchema(t)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Fatalf("SARIF output does not validate: %v", err)
	}

	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID                   string `json:"id"`
						DefaultConfiguration struct {
							Level string `json:"level"`
						} `json:"defaultConfiguration"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation *struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region *struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("version %q runs %d", log.Version, len(log.Runs))
	}
	run := log.Runs[0]
	if len(run.Tool.Driver.Rules) != len(rules.All()) || len(run.Results) != len(rep.Findings) {
		t.Fatalf("%d rules, %d results; want %d, %d", len(run.Tool.Driver.Rules), len(run.Results), len(rules.All()), len(rep.Findings))
	}
	levels := map[string]bool{}
	withRegion := 0
	for i, r := range run.Results {
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("result %d: ruleIndex %d is %s, not %s", i, r.RuleIndex, run.Tool.Driver.Rules[r.RuleIndex].ID, r.RuleID)
		}
		f := rep.Findings[i]
		want := map[check.Severity]string{check.Error: "error", check.Warning: "warning", check.Info: "note"}[f.Severity]
		if r.Level != want {
			t.Errorf("result %d: level %s for severity %s", i, r.Level, f.Severity)
		}
		levels[r.Level] = true
		for _, l := range r.Locations {
			if l.PhysicalLocation != nil && l.PhysicalLocation.Region != nil {
				withRegion++
				if l.PhysicalLocation.Region.StartLine != f.Location.Line {
					t.Errorf("result %d: line %d, finding line %d", i, l.PhysicalLocation.Region.StartLine, f.Location.Line)
				}
			}
		}
	}
	if !levels["error"] || !levels["warning"] || !levels["note"] || withRegion == 0 {
		t.Errorf("the test input should exercise every level and regions: %v, %d regions", levels, withRegion)
	}
}

// The validator must reject what the standard rejects, or the test above proves nothing.
func TestSARIFSchemaRejectsInvalidLogs(t *testing.T) {
	schema := compileSchema(t)
	for name, doc := range map[string]string{
		"wrong version":      `{"version": "2.0.0", "runs": []}`,
		"no runs":            `{"version": "2.1.0"}`,
		"unknown level":      `{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "level": "fatal"}]}]}`,
		"result no message":  `{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "a"}]}]}`,
		"driver no name":     `{"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]}`,
		"line zero":          `{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a"}, "region": {"startLine": 0}}}]}]}]}`,
		"unknown property":   `{"version": "2.1.0", "runs": [], "extra": 1}`,
		"rule without id":    `{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x", "rules": [{"name": "n"}]}}}]}`,
		"physical w/o place": `{"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"message": {"text": "m"}, "locations": [{"physicalLocation": {}}]}]}]}`,
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if schema.Validate(inst) == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestJSONOutputIsDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if err := check.WriteJSON(&a, seedReport(t)); err != nil {
		t.Fatal(err)
	}
	if err := check.WriteJSON(&b, seedReport(t)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two runs over the same input gave different JSON")
	}
	var rep struct {
		KubernetesVersion string `json:"kubernetesVersion"`
		Threshold         string `json:"threshold"`
		Failed            bool   `json:"failed"`
		Findings          []struct {
			Rule     string `json:"rule"`
			Severity string `json:"severity"`
			Ignored  bool   `json:"ignored"`
			Location struct {
				File string `json:"file"`
				Line int    `json:"line"`
			} `json:"location"`
			Message, Why, Fix string
		} `json:"findings"`
	}
	if err := json.Unmarshal(a.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.KubernetesVersion != "v1.37.1" || rep.Threshold != "error" || !rep.Failed || len(rep.Findings) == 0 {
		t.Fatalf("report header: %+v", rep)
	}
	ignored := 0
	for _, f := range rep.Findings {
		if f.Message == "" || f.Why == "" || f.Fix == "" {
			t.Errorf("incomplete finding %+v", f)
		}
		if f.Rule == "KW1107" || f.Rule == "KW1118" {
			if !f.Ignored || f.Severity != "info" {
				t.Errorf("--ignore did not downgrade %s: %+v", f.Rule, f)
			}
			ignored++
		}
	}
	if ignored == 0 {
		t.Error("no ignored finding in the test input")
	}
}

func TestTextOutput(t *testing.T) {
	rep := seedReport(t)
	var plain, color bytes.Buffer
	if err := check.WriteText(&plain, rep, false); err != nil {
		t.Fatal(err)
	}
	if err := check.WriteText(&color, rep, true); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(plain.Bytes(), []byte("\x1b[")) {
		t.Error("colour escape codes without a terminal")
	}
	if !bytes.Contains(color.Bytes(), []byte("\x1b[31m")) {
		t.Error("no colour on a terminal")
	}
	s := plain.String()
	for _, want := range []string{"\nnode node009\n", "KW1105 removed-flag", "found: --network-plugin was removed", "why:", "fix:", "ref:", "(downgraded by --ignore)", "failing at --severity=error"} {
		if !strings.Contains(s, want) {
			t.Errorf("text output lacks %q", want)
		}
	}
	// Grouped: every group header appears once.
	seen := map[string]bool{}
	for _, line := range strings.Split(s, "\n") {
		if line != "" && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "kubewin check") && !strings.Contains(line, "error(s)") {
			if seen[line] {
				t.Errorf("group %q appears twice", line)
			}
			seen[line] = true
		}
	}
}

func TestListAndExplain(t *testing.T) {
	var b bytes.Buffer
	all := rules.All()
	if err := check.WriteList(&b, all); err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if !strings.Contains(b.String(), r.ID) {
			t.Errorf("--list lacks %s", r.ID)
		}
	}
	r, ok := check.FindRule(all, "kw1103")
	if !ok {
		t.Fatal("FindRule is not case-insensitive")
	}
	b.Reset()
	if err := check.WriteExplain(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"KW1103 resolv-conf-on-windows", "severity:  error", "why:", "fix:", "reference:"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("--explain lacks %q:\n%s", want, b.String())
		}
	}
	if _, err := check.ParseIgnore([]string{"KW9999"}, all); err == nil {
		t.Error("unknown --ignore ID accepted")
	}
}
