//go:build linux

package nodeimage

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRuncWrapperBinary runs the built wrapper in front of a fake "real runc" (a shell script
// recording its arguments and the bundle's config.json) and checks the rewrite and the exec.
func TestRuncWrapperBinary(t *testing.T) {
	tmp := t.TempDir()
	binDir, err := BuildRuncWrapper(tmp)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(binDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "runc" {
		t.Fatalf("%s holds %v, want only runc", binDir, ents)
	}
	fake := filepath.Join(tmp, "fake-runc")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$FAKE_OUT/args\"\nif [ -f \"$FAKE_BUNDLE/config.json\" ]; then cp \"$FAKE_BUNDLE/config.json\" \"$FAKE_OUT/config.json\"; fi\nexit 7\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name    string
		args    func(bundle string) []string
		adj     string
		wantAdj float64
	}{
		{"create negative", func(b string) []string {
			return []string{"--root", "/run/x", "--log", "/dev/null", "--log-format", "json", "create", "--bundle", b, "--pid-file", b + "/init.pid", "id1"}
		}, "-998", 0},
		{"run short flag positive", func(b string) []string { return []string{"run", "-b", b, "id2"} }, "500", 500},
		{"state untouched", func(b string) []string { return []string{"state", "id3"} }, "-998", -998},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bundle, out := t.TempDir(), t.TempDir()
			config := `{"ociVersion":"1.2.0","process":{"args":["/pause"],"oomScoreAdj":` + tc.adj + `},"root":{"path":"rootfs"}}`
			if err := os.WriteFile(filepath.Join(bundle, "config.json"), []byte(config), 0o600); err != nil {
				t.Fatal(err)
			}
			args := tc.args(bundle)
			log := filepath.Join(out, "wrap.log")
			cmd := exec.Command(filepath.Join(binDir, "runc"), args...)
			cmd.Env = append(os.Environ(), RealRuncEnv+"="+fake, RuncWrapperLogEnv+"="+log, "FAKE_OUT="+out, "FAKE_BUNDLE="+bundle)
			b, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
				t.Fatalf("wrapper: %v (want the fake runc's exit status 7)\n%s", err, b)
			}
			gotArgs, err := os.ReadFile(filepath.Join(out, "args"))
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.Join(args, "\n") + "\n"; string(gotArgs) != want {
				t.Errorf("real runc got args\n%s\nwant\n%s", gotArgs, want)
			}
			data, err := os.ReadFile(filepath.Join(out, "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			process := doc["process"].(map[string]any)
			if got := process["oomScoreAdj"]; got != tc.wantAdj {
				t.Errorf("oomScoreAdj = %v, want %v", got, tc.wantAdj)
			}
			if doc["ociVersion"] != "1.2.0" || doc["root"].(map[string]any)["path"] != "rootfs" {
				t.Errorf("config lost fields: %s", data)
			}
			if st, err := os.Stat(filepath.Join(bundle, "config.json")); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("config.json mode after rewrite: %v %v", st.Mode(), err)
			}
			logData, _ := os.ReadFile(log)
			if !strings.Contains(string(logData), "argv: "+strings.Join(args, " ")) {
				t.Errorf("wrapper log lacks the argv:\n%s", logData)
			}
		})
	}
}
