package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func runPlan(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(append([]string{"plan"}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestPlanExampleWritesBundle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errs := runPlan(t, "", "-d", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Cluster mylan", "node009  windows  100.100.126.216  10.160.11.0/24 (spec)  10.160.11.1  10.160.11.2",
		"win-gw on eth1", "VRIDs 188", "10.160.11.1/24", "Wrote 82 files to " + dir} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"plan.json", "cluster/runtimeclasses.yaml", "nodes/node009/cni/l2bridge.conf",
		"nodes/node009/README.md", "nodes/master1/keepalived/keepalived.conf",
		"nodes/master1/keepalived/keepalived.service.d/kubewin-vips.conf", "cluster/gateway-win-gw.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

func TestPlanJSONIsPlanFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errs := runPlan(t, "", "-d", dir, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	file, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	if out != string(file) {
		t.Error("-o json printed something other than plan.json")
	}
	var p struct {
		Nodes []struct {
			Name, OS, PodCIDR, Gateway, Endpoint string
			Exceptions                           []string
		}
		GatewayGroups []struct {
			Members []struct{ Node string }
			VRIDs   []int
			VIPs    []string
		}
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Nodes) != 12 || len(p.GatewayGroups) != 1 || len(p.GatewayGroups[0].VIPs) != 1 {
		t.Errorf("plan.json: %d nodes, %d groups", len(p.Nodes), len(p.GatewayGroups))
	}
}

func TestPlanFromStdinAndFile(t *testing.T) {
	spec := string(v1alpha1.ExampleYAML())
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if code, _, errs := runPlan(t, spec, "-f", "-", "-d", a); code != 0 {
		t.Fatalf("stdin: exit %d: %s", code, errs)
	}
	path := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runPlan(t, "", "-f", path, "-d", b); code != 0 {
		t.Fatalf("file: exit %d: %s", code, errs)
	}
	pa, _ := os.ReadFile(filepath.Join(a, "plan.json"))
	pb, _ := os.ReadFile(filepath.Join(b, "plan.json"))
	if len(pa) == 0 || !bytes.Equal(pa, pb) {
		t.Error("the same spec from stdin and from a file planned differently")
	}
}

func TestPlanBadInputWritesNothing(t *testing.T) {
	example := string(v1alpha1.ExampleYAML())
	mustReplace := func(s, old, new string) string {
		if !strings.Contains(s, old) {
			t.Fatalf("test setup: %q not in the example", old)
		}
		return strings.Replace(s, old, new, 1)
	}
	specBad := mustReplace(mustReplace(example, "    serviceCIDR: 10.176.0.0/12\n", "    serviceCIDR: 10.176.0.0/33\n    bogus: 1\n"),
		"    podCIDR: 10.160.11.0/24\n", "    podCIDR: 10.160.3.0/24\n")
	// Valid for the spec, impossible for the planner: node010's pod CIDR needs a second VRID
	// the range does not have.
	plannerBad := mustReplace(example, "vridRange: {first: 188, last: 255}", "vridRange: {first: 188, last: 188}") +
		"  - name: node010\n    os: windows\n    windowsBuild: 10.0.17763\n    podCIDR: 10.160.255.0/24\n" +
		"    nics:\n    - name: eth1\n      ip: 100.100.126.217\n      prefix: 23\n"

	tests := []struct {
		name, spec string
		args       []string
		wants      []string
	}{
		{"spec errors", specBad, nil, []string{"3 problems", "bad.yaml:19:18: spec.networking.serviceCIDR",
			"bad.yaml:20:5: spec.networking.bogus: unknown field", "spec.nodes[11].podCIDR", "expected"}},
		{"planner error", plannerBad, nil, []string{"bad.yaml:", "spec.gatewayGroups[0].vridRange", "node010"}},
		{"bad format", example, []string{"-o", "yaml"}, []string{`unknown output format "yaml"`}},
		{"missing file", "", []string{"-f", "/nonexistent/cluster.yaml"}, []string{"read cluster spec"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			// A previous bundle must survive a failed run untouched.
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, "plan.json"), []byte("previous"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := tt.args
			if args == nil || args[0] != "-f" {
				path := filepath.Join(dir, "bad.yaml")
				if err := os.WriteFile(path, []byte(tt.spec), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append([]string{"-f", path}, args...)
			}
			code, stdout, stderr := runPlan(t, "", append(args, "-d", out)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr: %s", code, stderr)
			}
			for _, w := range tt.wants {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if stdout != "" {
				t.Errorf("stdout on failure: %s", stdout)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if e.Name() != "out" && e.Name() != "bad.yaml" {
					t.Errorf("left behind %s", e.Name())
				}
			}
			if got, _ := os.ReadFile(filepath.Join(out, "plan.json")); string(got) != "previous" {
				t.Errorf("previous bundle changed to %q", got)
			}
		})
	}
}

// plan replaces the whole output directory, so it must not delete what a user keeps there.
func TestPlanRefusesForeignOutputDirectory(t *testing.T) {
	for _, tc := range []struct {
		name     string
		setup    func(t *testing.T, dir string)
		force    bool
		wantCode int
		wantErr  string
	}{
		{name: "missing directory", setup: func(t *testing.T, dir string) {}, wantCode: 0},
		{name: "empty directory", setup: func(t *testing.T, dir string) { mkdir(t, dir) }, wantCode: 0},
		{name: "previous bundle", setup: func(t *testing.T, dir string) {
			mkdir(t, dir)
			write(t, filepath.Join(dir, "plan.json"), "{}")
			write(t, filepath.Join(dir, "stale.txt"), "old")
		}, wantCode: 0},
		{name: "foreign files", setup: func(t *testing.T, dir string) {
			mkdir(t, dir)
			write(t, filepath.Join(dir, "notes.txt"), "keep me")
		}, wantCode: 2, wantErr: "is not empty and holds no previous kubewin bundle (no plan.json)"},
		{name: "foreign files with --force", setup: func(t *testing.T, dir string) {
			mkdir(t, dir)
			write(t, filepath.Join(dir, "notes.txt"), "keep me")
		}, force: true, wantCode: 0},
		{name: "a file", setup: func(t *testing.T, dir string) { write(t, dir, "x") },
			wantCode: 2, wantErr: "exists and is not a directory"},
		{name: "plan.json is a directory", setup: func(t *testing.T, dir string) { mkdir(t, filepath.Join(dir, "plan.json")) },
			wantCode: 2, wantErr: "no previous kubewin bundle"},
		{name: "symbolic link", setup: func(t *testing.T, dir string) {
			target := dir + "-target"
			mkdir(t, target)
			if err := os.Symlink(target, dir); err != nil {
				t.Fatal(err)
			}
		}, wantCode: 2, wantErr: "is a symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			tc.setup(t, dir)
			args := []string{"-d", dir}
			if tc.force {
				args = append(args, "--force")
			}
			code, _, errs := runPlan(t, "", args...)
			if code != tc.wantCode || !strings.Contains(errs, tc.wantErr) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", code, tc.wantCode, errs, tc.wantErr)
			}
			if tc.wantCode != 0 {
				if tc.name == "foreign files" {
					if data, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(data) != "keep me" {
						t.Fatalf("notes.txt was touched: %q, %v", data, err)
					}
				}
				return
			}
			if _, err := os.Stat(filepath.Join(dir, "plan.json")); err != nil {
				t.Fatalf("bundle not written: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "notes.txt")); !errors.Is(err, fs.ErrNotExist) && tc.force {
				t.Fatalf("--force kept notes.txt: %v", err)
			}
		})
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
