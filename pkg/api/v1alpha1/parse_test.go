package v1alpha1

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the expected-error files under testdata/specs/bad")

// TestBadSpecs parses every file under testdata/specs/bad and compares the full error report
// with the .out file beside it (regenerate with -update).
func TestBadSpecs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(specsDir, "bad", "*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".out") {
			continue
		}
		n++
		name := filepath.ToSlash(strings.TrimPrefix(f, specsDir+string(filepath.Separator)))
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c, _, err := Parse(name, data)
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Parse(%s) = %v, want errors", name, err)
			}
			if c != nil {
				t.Errorf("Parse returned a Cluster together with errors")
			}
			for _, fe := range list {
				if fe.File != name || fe.Line <= 0 {
					t.Errorf("error without position: %#v", fe)
				}
			}
			got := []byte(list.Error() + "\n")
			golden := strings.TrimSuffix(f, filepath.Ext(f)) + ".out"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("errors differ from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
	if n < 10 {
		t.Fatalf("found %d bad specs, want at least 10", n)
	}
}

func TestExampleParsesClean(t *testing.T) {
	c, src, err := ParseExample()
	if err != nil {
		t.Fatalf("example: %v", err)
	}
	if src.File != ExampleFile {
		t.Errorf("source file = %q", src.File)
	}
	if c.Metadata.Name != "mylan" || len(c.Spec.Nodes) != 12 || c.Spec.Nodes[11].OS != OSWindows {
		t.Errorf("unexpected example content: %s, %d nodes", c.Metadata.Name, len(c.Spec.Nodes))
	}
	if line, col := src.Locate("spec.nodes[11].windowsBuild"); line != lineOf(t, string(ExampleYAML()), "windowsBuild: 10.0.20348") || col != 19 {
		t.Errorf("Locate(windowsBuild) = %d:%d", line, col)
	}
}

func TestGoodSpecsParseClean(t *testing.T) {
	for _, f := range goodSpecs(t) {
		if _, _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// Parsing is deterministic and JSON is a faithful second syntax: parse -> JSON -> parse -> JSON
// yields the same bytes, and so does going through YAML.
func TestRoundTrip(t *testing.T) {
	inputs := map[string][]byte{ExampleFile: ExampleYAML()}
	for _, f := range goodSpecs(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = data
	}
	for name, data := range inputs {
		c1, _, err := Parse(name, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		j1 := mustJSON(t, c1)
		c2, _, err := Parse(name+".json", j1)
		if err != nil {
			t.Fatalf("%s as JSON: %v", name, err)
		}
		if j2 := mustJSON(t, c2); !bytes.Equal(j1, j2) {
			t.Errorf("%s: JSON round trip differs:\n%s\n%s", name, j1, j2)
		}
		y, err := yaml.JSONToYAML(j1)
		if err != nil {
			t.Fatal(err)
		}
		c3, _, err := Parse(name+".yaml", y)
		if err != nil {
			t.Fatalf("%s as YAML: %v", name, err)
		}
		if !reflect.DeepEqual(c1, c3) {
			t.Errorf("%s: YAML round trip differs", name)
		}
		again, _, _ := Parse(name, data)
		if !bytes.Equal(mustJSON(t, again), j1) {
			t.Errorf("%s: parsing twice gives different results", name)
		}
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The positional decoder must decode every field of Cluster exactly as encoding/json does;
// filling every field by reflection keeps it honest when types.go grows.
func TestDecoderCoversEveryField(t *testing.T) {
	var want Cluster
	fill(reflect.ValueOf(&want).Elem(), 1)
	data := mustJSON(t, want)
	got, _, errs, _ := decodeDocument("all.json", data)
	if len(errs) > 0 {
		t.Fatalf("decode: %v", errs)
	}
	if !reflect.DeepEqual(&want, got) {
		t.Errorf("decoded value differs\nwant %s\ngot  %s", data, mustJSON(t, got))
	}
}

// fill sets every field to a non-zero value derived from seed.
func fill(v reflect.Value, seed int) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), seed+i)
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), seed)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fill(s.Index(0), seed)
		fill(s.Index(1), seed+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, seed)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, seed+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", seed))
	case reflect.Int:
		v.SetInt(int64(seed))
	case reflect.Bool:
		v.SetBool(true)
	default:
		panic("fill: unsupported kind " + v.Kind().String())
	}
}

func TestLocateFallsBackToParent(t *testing.T) {
	_, src, err := ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	doc := string(ExampleYAML())
	cases := []struct {
		path string
		at   string
	}{
		{"spec.nodes[11]", "name: node009"},
		{"spec.nodes[11].labels[x]", "name: node009"},                  // labels absent: falls back to the node
		{"spec.gatewayGroups[0].members[1].priority", "priority: 140"}, // scalar value position
		{"spec.gatewayGroups[0].members", "members:"},                  // key position for lists
		{"spec.nope.deeper[3]", "spec:"},
		{"", "apiVersion"},
	}
	for _, c := range cases {
		line, _ := src.Locate(c.path)
		if want := lineOf(t, doc, c.at); line != want {
			t.Errorf("Locate(%q) line = %d, want %d", c.path, line, want)
		}
	}
	var nilSource *Source
	if l, c := nilSource.Locate("spec"); l != 0 || c != 0 {
		t.Errorf("nil Source located something")
	}
}

func TestAnnotate(t *testing.T) {
	_, src, err := ParseExample()
	if err != nil {
		t.Fatal(err)
	}
	in := ErrorList{
		NewFieldError("spec.nodes[11].podCIDR", "overlaps a Calico block", "a free range"),
		NewFieldError("metadata.name", "taken", ""),
		{File: "other.yaml", Line: 3, Column: 1, Field: "x", Message: "already placed"},
	}
	out := src.Annotate(in)
	if in[0].Line != 0 || in[0].File != "" {
		t.Errorf("Annotate modified its input")
	}
	want := fmt.Sprintf("<example>:%d:9: metadata.name: taken\n<example>:%d:14: spec.nodes[11].podCIDR: overlaps a Calico block (expected a free range)\nother.yaml:3:1: x: already placed",
		lineOf(t, string(ExampleYAML()), "name: mylan"), lineOf(t, string(ExampleYAML()), "podCIDR: 10.160.11.0/24"))
	if got := out.Error(); got != want {
		t.Errorf("Annotate =\n%s\nwant\n%s", got, want)
	}
	var nilSource *Source
	if got := nilSource.Annotate(in); len(got) != 3 || got[0].Line != 0 && got[0].File != "other.yaml" {
		t.Errorf("nil Source Annotate = %v", got)
	}
}

func TestErrorFormatting(t *testing.T) {
	cases := []struct {
		e    FieldError
		want string
	}{
		{FieldError{File: "cluster.yaml", Line: 12, Column: 7, Field: "spec.nodes[3].nics[0].prefix", Message: "33 is out of range", Expected: "0-32"},
			"cluster.yaml:12:7: spec.nodes[3].nics[0].prefix: 33 is out of range (expected 0-32)"},
		{FieldError{File: "c.yaml", Line: 2, Message: "syntax error: x"}, "c.yaml:2: syntax error: x"},
		{FieldError{File: "c.yaml", Field: "spec", Message: "m"}, "c.yaml: spec: m"},
		{FieldError{Field: "spec", Message: "m"}, "spec: m"},
	}
	for _, c := range cases {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
	var empty ErrorList
	if empty.Err() != nil {
		t.Errorf("empty list Err() is not nil")
	}
	list := ErrorList{{Line: 5, Field: "b", Message: "m"}, {Line: 5, Field: "a", Message: "m"}, {Line: 1, Field: "z", Message: "m"}}
	list.Sort()
	if list[0].Field != "z" || list[1].Field != "a" || list[2].Field != "b" {
		t.Errorf("Sort order: %v", list)
	}
	b, err := json.Marshal(FieldError{File: "f", Line: 1, Column: 2, Field: "x", Message: "m", Expected: "e"})
	if err != nil || string(b) != `{"file":"f","line":1,"column":2,"field":"x","message":"m","expected":"e"}` {
		t.Errorf("JSON = %s, %v", b, err)
	}
}

func TestLoad(t *testing.T) {
	if _, _, err := Load(filepath.Join(specsDir, "does-not-exist.yaml")); err == nil || !strings.Contains(err.Error(), "read cluster spec") {
		t.Errorf("Load(missing) = %v", err)
	}
	_, src, err := Load(filepath.Join(specsDir, "bad", "networking.yaml"))
	var list ErrorList
	if !errors.As(err, &list) || src == nil || !strings.HasSuffix(list[0].File, "networking.yaml") {
		t.Errorf("Load(bad) = %v, %v", src, err)
	}
}

// Parse applies defaults: the planner relies on every optional field being set.
func TestParseAppliesDefaults(t *testing.T) {
	c, _, err := Load(filepath.Join(specsDir, "good", "flannel-hostgw.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Spec
	if s.KubernetesVersion != DefaultKubernetesVersion || s.LinuxCNI.Flannel == nil || s.LinuxCNI.Flannel.Backend != "host-gw" ||
		s.Windows.HNSNetworkName != "cbr0" || s.Nodes[0].ClusterNIC != "eth0" || s.Nodes[1].Role != RoleWorker {
		t.Errorf("defaults not applied: %+v", s)
	}
}

// Merge keys reuse a mapping's whole subtree; merging a large template many times is stopped by
// the same budget as nested aliases.
func TestMergeBombIsCutOff(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: kubewin.io/v1alpha1\nkind: Cluster\nmetadata: {name: m}\nspec:\n  nodes:\n  - &t\n    name: t\n    os: linux\n    nics:\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "    - {name: n%d, ip: 10.0.%d.%d, prefix: 8}\n", i, i/250, i%250+1)
	}
	for i := range 200 {
		fmt.Fprintf(&b, "  - {<<: *t, name: n%d}\n", i)
	}
	_, _, err := Parse("merge.yaml", []byte(b.String()))
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 || !strings.Contains(list[0].Message, "reuses more than") {
		t.Fatalf("Parse = %v", err)
	}
}
