package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/binaries"
	"github.com/kubewin/kubewin/internal/binaries/binariestest"
	"github.com/kubewin/kubewin/internal/cliutil"
)

func mirrorOpts(s *binariestest.Server, dir string) mirrorOptions {
	return mirrorOptions{
		official: binaries.Official{Kubernetes: binariestest.Kubernetes, Containerd: binariestest.Containerd, CNI: binariestest.CNI,
			KubernetesURL: s.URL + "/k8s", ContainerdURL: s.URL + "/containerd", CNIURL: s.URL + "/cni"},
		oses: []string{"linux", "windows"}, arch: "amd64", output: "text", dir: dir,
	}
}

// kubewin mirror against the release layouts served on loopback: stdout is the mirror's
// SHA256SUMS, -o json its files; a version that is not published is bad input (2), a download
// that does not match its checksum a failure (1), and neither writes the directory.
func TestMirrorCommand(t *testing.T) {
	s := binariestest.Serve(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "mirror")
	var out, errOut bytes.Buffer
	if err := runMirror(ctx, streams{out: &out, err: &errOut}, mirrorOpts(s, dir), s.Client()); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(dir, binaries.SumsFile))
	if err != nil || out.String() != string(sums) || strings.Count(string(sums), "\n") != 19 {
		t.Errorf("stdout %q, SHA256SUMS %q %v", out.String(), sums, err)
	}
	if !strings.Contains(errOut.String(), "19 files checked against the published checksums") {
		t.Errorf("stderr %q", errOut.String())
	}
	o := mirrorOpts(s, filepath.Join(t.TempDir(), "json"))
	o.oses, o.output = []string{"windows"}, "json"
	out.Reset()
	if err := runMirror(ctx, streams{out: &out, err: &errOut}, o, s.Client()); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Dir   string
		Files []binaries.File
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Dir != o.dir || len(res.Files) != 9 || res.Files[0].Name != "cni/host-local.exe" || len(res.Files[0].Checked) != 2 {
		t.Errorf("-o json: %+v %v\n%s", res, err, out.String())
	}

	o = mirrorOpts(s, filepath.Join(t.TempDir(), "absent"))
	o.official.Containerd = "2.1.5"
	if err := runMirror(ctx, streams{out: &out, err: &errOut}, o, s.Client()); cliutil.CodeOf(err) != cliutil.ExitBadInput || !strings.Contains(err.Error(), "containerd-2.1.5-linux-amd64.tar.gz.sha256sum: 404") {
		t.Errorf("unpublished version: %v (exit %d)", err, cliutil.CodeOf(err))
	}
	s.Set("/cni/v1.7.1/cni-plugins-windows-amd64-v1.7.1.tgz", []byte("not the published archive"))
	o = mirrorOpts(s, filepath.Join(t.TempDir(), "tampered"))
	if err := runMirror(ctx, streams{out: &out, err: &errOut}, o, s.Client()); cliutil.CodeOf(err) != cliutil.ExitFindings || !strings.Contains(err.Error(), "has sha256") {
		t.Errorf("checksum mismatch: %v (exit %d)", err, cliutil.CodeOf(err))
	}
	for _, d := range []string{"absent", "tampered"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(o.dir), d)); err == nil {
			t.Errorf("%s written", d)
		}
	}
}

// Input errors end the command before anything is downloaded (no server: any download would
// fail with exit 1, not 2).
func TestMirrorCommandBadInput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	for _, args := range [][]string{
		{"mirror", dir},
		{"mirror", "--kubernetes", "latest", dir},
		{"mirror", "--cni", "1.7", dir},
		{"mirror", "--kubernetes", "v1.33.1", "--os", "darwin", dir},
		{"mirror", "--kubernetes", "v1.33.1", "--os", "windows", "--arch", "arm64", dir},
		{"mirror", "--kubernetes", "v1.33.1", "--kubernetes-release-url", "http://dl.example/release", dir},
		{"mirror", "--kubernetes", "v1.33.1", "-o", "yaml", dir},
		{"mirror", "--kubernetes", "v1.33.1"},
	} {
		var out, errOut bytes.Buffer
		if code := run(args, nil, &out, &errOut); code != cliutil.ExitBadInput {
			t.Errorf("%v: exit %d, stderr %s", args, code, errOut.String())
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("a refused mirror wrote its directory")
	}
}
