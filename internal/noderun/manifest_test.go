//go:build unix

// The cases use Unix absolute paths ("/bin/a"), which filepath.IsAbs rightly rejects on
// Windows, so they are built for Unix only.

package noderun

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const validManifest = `{
  "apiVersion": "kubewin.io/v1alpha1",
  "kind": "NodeServices",
  "services": [
    {
      "name": "containerd",
      "path": "/usr/local/bin/containerd",
      "args": ["--config", "/etc/containerd/config.toml"],
      "logFile": "/var/log/kubewin/containerd.log"
    },
    {
      "name": "kubelet",
      "path": "/usr/local/bin/kubelet",
      "env": ["KUBELET_X=1"],
      "after": ["containerd"],
      "waitFiles": ["/etc/kubernetes/kubelet.conf"],
      "logFile": "/var/log/kubewin/kubelet.log"
    }
  ]
}
`

func TestParseManifestValid(t *testing.T) {
	m, err := ParseManifest("services.json", []byte(validManifest))
	if err != nil {
		t.Fatalf("ParseManifest: %v", err)
	}
	want := &Manifest{
		APIVersion: ManifestAPIVersion,
		Kind:       ManifestKind,
		Services: []Service{
			{Name: "containerd", Path: "/usr/local/bin/containerd", Args: []string{"--config", "/etc/containerd/config.toml"}, LogFile: "/var/log/kubewin/containerd.log"},
			{Name: "kubelet", Path: "/usr/local/bin/kubelet", Env: []string{"KUBELET_X=1"}, After: []string{"containerd"},
				WaitFiles: []string{"/etc/kubernetes/kubelet.conf"}, LogFile: "/var/log/kubewin/kubelet.log"},
		},
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("got %+v\nwant %+v", m, want)
	}
}

// manifestWith wraps service objects (JSON text, starting on line 5) in a valid header.
func manifestWith(services string) string {
	return `{
  "apiVersion": "kubewin.io/v1alpha1",
  "kind": "NodeServices",
  "services": [
` + services + `
  ]
}`
}

func TestParseManifestErrors(t *testing.T) {
	const a = `    {"name": "a", "path": "/bin/a", "logFile": "/log/a"}`
	tests := []struct {
		name      string
		doc       string
		field     string
		line      int
		msg       string
		allFields []string // every field reported, when more than one
	}{
		{
			name:  "unknown top-level field",
			doc:   "{\n  \"apiVersion\": \"kubewin.io/v1alpha1\",\n  \"spec\": {}\n}",
			field: "spec", line: 3, msg: "unknown field",
		},
		{
			name:  "unknown service field",
			doc:   manifestWith(a + ",\n" + `    {"name": "b", "path": "/bin/b", "logFile": "/log/b",` + "\n" + `     "command": "/bin/b"}`),
			field: "services[1].command", line: 7, msg: "unknown field",
		},
		{
			name:  "field name in other case",
			doc:   manifestWith(`    {"Name": "a", "path": "/bin/a", "logFile": "/log/a"}`),
			field: "services[0].Name", line: 5, msg: "unknown field",
		},
		{
			name:  "duplicate key",
			doc:   manifestWith(`    {"name": "a", "name": "b", "path": "/bin/a", "logFile": "/log/a"}`),
			field: "services[0].name", line: 5, msg: "field given twice",
		},
		{
			name:  "duplicate service name",
			doc:   manifestWith(a + ",\n" + `    {"name": "a", "path": "/bin/b", "logFile": "/log/b"}`),
			field: "services[1].name", line: 6, msg: `duplicate service name "a" (also services[0])`,
		},
		{
			name:  "name not a DNS label",
			doc:   manifestWith(`    {"name": "Kube_let", "path": "/bin/a", "logFile": "/log/a"}`),
			field: "services[0].name", line: 5, msg: "expected a DNS label",
		},
		{
			name:  "missing name",
			doc:   manifestWith(`    {"path": "/bin/a", "logFile": "/log/a"}`),
			field: "services[0].name", line: 5, msg: "got nothing",
		},
		{
			name:  "unknown after",
			doc:   manifestWith(`    {"name": "a", "path": "/bin/a", "logFile": "/log/a", "after": ["containerd"]}`),
			field: "services[0].after[0]", line: 5, msg: `unknown service "containerd"`,
		},
		{
			name:  "after itself",
			doc:   manifestWith(`    {"name": "a", "path": "/bin/a", "logFile": "/log/a", "after": ["a"]}`),
			field: "services[0].after[0]", line: 5, msg: "cannot come after itself",
		},
		{
			name: "dependency cycle",
			doc: manifestWith(`    {"name": "a", "path": "/bin/a", "logFile": "/log/a", "after": ["c"]},
    {"name": "b", "path": "/bin/b", "logFile": "/log/b", "after": ["a"]},
    {"name": "c", "path": "/bin/c", "logFile": "/log/c", "after": ["b"]}`),
			field: "services[0].after", line: 5, msg: "dependency cycle a -> c -> b -> a",
		},
		{
			name:  "relative path",
			doc:   manifestWith(`    {"name": "a", "path": "bin/a", "logFile": "/log/a"}`),
			field: "services[0].path", line: 5, msg: `got relative path "bin/a"`,
		},
		{
			name:  "missing log file",
			doc:   manifestWith(`    {"name": "a", "path": "/bin/a"}`),
			field: "services[0].logFile", line: 5, msg: "absolute path of the log file, got nothing",
		},
		{
			name: "shared log file",
			doc: manifestWith(a + ",\n" +
				`    {"name": "b", "path": "/bin/b", "logFile": "/log/a"}`),
			field: "services[1].logFile", line: 6, msg: `already used by service "a"`,
		},
		{
			name: "relative wait file",
			doc: manifestWith(`    {"name": "a", "path": "/bin/a", "logFile": "/log/a",
     "waitFiles": ["/ok", "kubelet.conf"]}`),
			field: "services[0].waitFiles[1]", line: 6, msg: `relative path "kubelet.conf"`,
		},
		{
			name:  "bad env",
			doc:   manifestWith(`    {"name": "a", "path": "/bin/a", "logFile": "/log/a", "env": ["=x"]}`),
			field: "services[0].env[0]", line: 5, msg: `expected KEY=VALUE, got "=x"`,
		},
		{
			name:  "wrong type",
			doc:   manifestWith(`    {"name": "a", "path": "/bin/a", "logFile": "/log/a", "args": "--v=2"}`),
			field: "services[0].args", line: 5, msg: `expected an array, got the string "--v=2"`,
		},
		{
			name:  "null in a list",
			doc:   manifestWith(`    {"name": "a", "path": "/bin/a", "logFile": "/log/a", "args": ["-v", null]}`),
			field: "services[0].args[1]", line: 5, msg: "expected a string, got null",
		},
		{
			name:  "wrong api version",
			doc:   "{\"apiVersion\": \"v1\", \"kind\": \"NodeServices\"}",
			field: "apiVersion", line: 1, msg: `expected "kubewin.io/v1alpha1", got "v1"`,
		},
		{
			name:  "missing kind",
			doc:   "{\"apiVersion\": \"kubewin.io/v1alpha1\"}",
			field: "kind", line: 0, msg: `expected "NodeServices", got ""`,
		},
		{
			name:  "syntax error",
			doc:   "{\n  \"apiVersion\": \"kubewin.io/v1alpha1\",\n  \"kind\" \"NodeServices\"\n}",
			field: "", line: 3, msg: "invalid JSON",
		},
		{
			name:  "truncated",
			doc:   manifestWith(a)[:60],
			field: "kind", line: 3, msg: "unexpected end of file",
		},
		{
			name:  "empty file",
			doc:   "",
			field: "", line: 1, msg: "unexpected end of file",
		},
		{
			name:  "not an object",
			doc:   `["services"]`,
			field: "", line: 1, msg: "expected an object, got an array",
		},
		{
			name:  "second document",
			doc:   "{\"apiVersion\": \"kubewin.io/v1alpha1\", \"kind\": \"NodeServices\"}\n{}",
			field: "", line: 2, msg: "unexpected an object after the top-level object",
		},
		{
			name:      "several problems at once",
			doc:       manifestWith(`    {"name": "a", "path": "a", "logFile": "b", "after": ["x"]}`),
			field:     "services[0].path",
			line:      5,
			msg:       "relative",
			allFields: []string{"services[0].path", "services[0].logFile", "services[0].after[0]"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseManifest("/etc/services.json", []byte(tc.doc))
			if err == nil {
				t.Fatal("ParseManifest accepted the document")
			}
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Fatalf("error %v (%T) is not a *ManifestError", err, err)
			}
			if me.File != "/etc/services.json" || me.Field != tc.field || me.Line != tc.line || !strings.Contains(me.Msg, tc.msg) {
				t.Fatalf("got file %q field %q line %d msg %q\nwant file /etc/services.json field %q line %d msg containing %q",
					me.File, me.Field, me.Line, me.Msg, tc.field, tc.line, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "/etc/services.json") {
				t.Errorf("error text %q does not start with the file", err)
			}
			if tc.allFields != nil {
				var got []string
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					got = append(got, e.(*ManifestError).Field)
				}
				if !reflect.DeepEqual(got, tc.allFields) {
					t.Errorf("fields %v, want %v", got, tc.allFields)
				}
			}
		})
	}
}

func TestLoadManifestMissing(t *testing.T) {
	_, err := LoadManifest(filepath.Join(t.TempDir(), "services.json"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v, want an fs.ErrNotExist error", err)
	}
}

func TestWriteManifestRoundTripAndDeterministic(t *testing.T) {
	m, err := ParseManifest("in", []byte(validManifest))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "services.json")
	if err := WriteManifest(p, m); err != nil {
		t.Fatalf("WriteManifest: %v", err)
	}
	first, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteManifest(p, m); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(p)
	if string(first) != string(second) {
		t.Fatalf("two writes differ:\n%s\n%s", first, second)
	}
	want := `{
  "apiVersion": "kubewin.io/v1alpha1",
  "kind": "NodeServices",
  "services": [
    {
      "name": "containerd",
      "path": "/usr/local/bin/containerd",
      "args": [
        "--config",
        "/etc/containerd/config.toml"
      ],
      "logFile": "/var/log/kubewin/containerd.log"
    },
    {
      "name": "kubelet",
      "path": "/usr/local/bin/kubelet",
      "env": [
        "KUBELET_X=1"
      ],
      "after": [
        "containerd"
      ],
      "waitFiles": [
        "/etc/kubernetes/kubelet.conf"
      ],
      "logFile": "/var/log/kubewin/kubelet.log"
    }
  ]
}
`
	if string(first) != want {
		t.Fatalf("written manifest:\n%s\nwant:\n%s", first, want)
	}
	back, err := LoadManifest(p)
	if err != nil {
		t.Fatalf("LoadManifest of written file: %v", err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Fatalf("round trip changed the manifest: %+v", back)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only services.json (no temp files left)", len(entries))
	}
}

func TestWriteManifestRejectsInvalid(t *testing.T) {
	p := filepath.Join(t.TempDir(), "services.json")
	m := &Manifest{APIVersion: ManifestAPIVersion, Kind: ManifestKind, Services: []Service{{Name: "a", Path: "rel", LogFile: "/l"}}}
	err := WriteManifest(p, m)
	var me *ManifestError
	if !errors.As(err, &me) || me.Field != "services[0].path" || me.File != p {
		t.Fatalf("got %v, want a ManifestError for services[0].path in %s", err, p)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("an invalid manifest was written (stat: %v)", err)
	}
}

// FuzzLoadManifest feeds arbitrary bytes to the manifest parser behind LoadManifest (which
// is os.ReadFile plus ParseManifest; the file system is left out so the fuzzer spends its time
// in the parser, not in fsync).
func FuzzLoadManifest(f *testing.F) {
	f.Add([]byte(validManifest))
	f.Add([]byte(manifestWith(`    {"name": "a", "path": "/bin/a", "logFile": "/log/a", "after": ["a"]}`)))
	f.Add([]byte(`{"apiVersion": "kubewin.io/v1alpha1", "kind": "NodeServices", "services": null}`))
	f.Add([]byte(`{"services": [{"name": 1}]}`))
	f.Add([]byte(`{"a":`))
	f.Add([]byte(``))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "/var/lib/kubewin/services.json"
		m, err := ParseManifest(file, data)
		if err != nil {
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Fatalf("error %v (%T) is not a *ManifestError", err, err)
			}
			if me.File != file || me.Line < 0 || me.Line > bytes.Count(data, []byte("\n"))+1 {
				t.Fatalf("error %q points outside the document", err)
			}
			return
		}
		// Whatever is accepted must survive a write and a reload unchanged.
		out, err := marshalManifest(m)
		if err != nil {
			t.Fatalf("encode an accepted manifest: %v", err)
		}
		back, err := ParseManifest(file, out)
		if err != nil {
			t.Fatalf("reload of a written manifest: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(normalize(back), normalize(m)) {
			t.Fatalf("round trip changed the manifest:\n%+v\n%+v", m, back)
		}
	})
}

// normalize treats an empty list like a missing one; omitempty drops empty lists on write.
func normalize(m *Manifest) *Manifest {
	c := *m
	c.Services = nil
	for _, s := range m.Services {
		for _, l := range []*[]string{&s.Args, &s.Env, &s.After, &s.WaitFiles} {
			if len(*l) == 0 {
				*l = nil
			}
		}
		c.Services = append(c.Services, s)
	}
	return &c
}
