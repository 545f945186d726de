package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func runExample(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"example"}, args...), strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestExampleYAMLIsTheEmbeddedFile(t *testing.T) {
	out, _, code := runExample(t)
	if code != cliutil.ExitOK || out != string(v1alpha1.ExampleYAML()) {
		t.Fatalf("exit %d, output differs from the embedded example", code)
	}
	if _, _, err := v1alpha1.Parse("stdout", []byte(out)); err != nil {
		t.Fatalf("printed example does not parse: %v", err)
	}
}

func TestExampleJSONIsDefaulted(t *testing.T) {
	out, _, code := runExample(t, "-o", "json")
	if code != cliutil.ExitOK {
		t.Fatalf("exit %d", code)
	}
	var c v1alpha1.Cluster
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	g := c.Spec.GatewayGroups[0]
	// kube-proxy's account is decided per node by the plan (LocalSystem unless the build needs
	// the restricted account), so the spec leaves it empty.
	if c.Spec.Windows.KubeProxyServiceAccount != "" || g.VIPsPerInstance != v1alpha1.MaxVIPsPerInstance {
		t.Errorf("defaults missing from JSON: %+v", c.Spec.Windows)
	}
	// The JSON form is itself a valid spec, and printing is deterministic.
	if _, _, err := v1alpha1.Parse("example.json", []byte(out)); err != nil {
		t.Errorf("JSON example does not parse: %v", err)
	}
	if again, _, _ := runExample(t, "-o", "json"); again != out {
		t.Errorf("two runs printed different JSON")
	}
}

func TestExampleBadFormat(t *testing.T) {
	out, errOut, code := runExample(t, "-o", "xml")
	if code != cliutil.ExitBadInput || out != "" || !strings.Contains(errOut, `unknown output format "xml"`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
