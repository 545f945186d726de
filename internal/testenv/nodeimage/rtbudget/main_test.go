package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestBundleDir(t *testing.T) {
	for _, tc := range []struct {
		args []string
		dir  string
		ok   bool
	}{
		{[]string{"--root", "/run/r", "--log", "/l.json", "--log-format", "json", "create", "--bundle", "/b", "--pid-file", "/p", "id"}, "/b", true},
		{[]string{"--root=/run/r", "run", "-b=/b2", "id"}, "/b2", true},
		{[]string{"create", "id"}, ".", true},
		{[]string{"--root", "/run/r", "start", "id"}, "", false},
		{[]string{"--log", "create", "delete", "id"}, "", false}, // "create" is --log's value
		{nil, "", false},
	} {
		dir, ok := bundleDir(tc.args)
		if dir != tc.dir || ok != tc.ok {
			t.Errorf("bundleDir(%q) = %q, %v; want %q, %v", tc.args, dir, ok, tc.dir, tc.ok)
		}
	}
}

// Containers that do not start with chrt or kubewin gateway exec are left alone; such a container
// without a cgroupfs path is refused with the file named.
func TestGrantSelects(t *testing.T) {
	dir := t.TempDir()
	write := func(doc string) {
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"process":{"args":["/pause"]},"linux":{"cgroupsPath":"kubepods.slice:cri:x"}}`)
	if err := grant(dir); err != nil {
		t.Errorf("non-chrt container: %v", err)
	}
	write(`{"process":{"args":["chrt","--rr","10","keepalived"]},"linux":{"cgroupsPath":"kubepods.slice:cri:x"}}`)
	if err := grant(dir); err == nil {
		t.Error("chrt container with a systemd cgroup path: no error")
	}
	write(`{"process":{"args":["kubewin","gateway","exec","--rt-priority","10","--","keepalived"]},"linux":{"cgroupsPath":"kubepods.slice:cri:x"}}`)
	if err := grant(dir); err == nil {
		t.Error("kubewin gateway exec container with a systemd cgroup path: no error (not selected)")
	}
	write(`{"process":{"args":["kubewin","gateway","init"]},"linux":{"cgroupsPath":"kubepods.slice:cri:x"}}`)
	if err := grant(dir); err != nil {
		t.Errorf("kubewin gateway init container: %v", err)
	}
	write(`{not json`)
	if err := grant(dir); err == nil {
		t.Error("bad config.json: no error")
	}
}
