package main

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestBundleDir(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		dir  string
		ok   bool
	}{
		{"shim create", []string{"--root", "/run/containerd/runc/k8s.io", "--log", "/b/log.json", "--log-format", "json", "create", "--bundle", "/b", "--pid-file", "/b/init.pid", "abc"}, "/b", true},
		{"short flag", []string{"create", "-b", "/b", "abc"}, "/b", true},
		{"attached value", []string{"create", "--bundle=/b", "abc"}, "/b", true},
		{"short attached value", []string{"create", "-b=/b", "abc"}, "/b", true},
		{"single dash long", []string{"-root", "/r", "run", "-bundle", "/b", "abc"}, "/b", true},
		{"run defaults to cwd", []string{"--debug", "run", "abc"}, ".", true},
		{"create defaults to cwd", []string{"create", "--pid-file", "p", "abc"}, ".", true},
		{"global value looks like command", []string{"--root", "create", "start", "abc"}, "", false},
		{"global with equals", []string{"--root=/r", "--systemd-cgroup", "create", "--bundle", "/b", "x"}, "/b", true},
		{"after double dash ignored", []string{"create", "--", "--bundle", "/b"}, ".", true},
		{"start", []string{"--root", "/r", "start", "abc"}, "", false},
		{"delete", []string{"delete", "--force", "abc"}, "", false},
		{"state", []string{"state", "abc"}, "", false},
		{"no args", nil, "", false},
		{"only flags", []string{"--version"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, ok := bundleDir(tc.args)
			if dir != tc.dir || ok != tc.ok {
				t.Errorf("bundleDir(%q) = %q, %v; want %q, %v", tc.args, dir, ok, tc.dir, tc.ok)
			}
		})
	}
}

func TestRewriteConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    string // "" means unchanged
		old     int64
		wantErr bool
	}{
		{
			name: "negative set to zero, rest kept",
			in:   `{"ociVersion":"1.2.0","process":{"args":["/pause"],"oomScoreAdj":-998,"user":{"uid":0,"gid":0},"x-unknown":[1,{"a":"<&>"}]},"root":{"path":"rootfs"},"annotations":{"io.kubernetes.cri.container-type":"sandbox"}}`,
			want: `{"ociVersion":"1.2.0","process":{"args":["/pause"],"oomScoreAdj":0,"user":{"uid":0,"gid":0},"x-unknown":[1,{"a":"<&>"}]},"root":{"path":"rootfs"},"annotations":{"io.kubernetes.cri.container-type":"sandbox"}}`,
			old:  -998,
		},
		{name: "minus one", in: `{"process":{"oomScoreAdj":-1}}`, want: `{"process":{"oomScoreAdj":0}}`, old: -1},
		{name: "positive left alone", in: `{"process":{"oomScoreAdj":1000}}`, old: 1000},
		{name: "zero left alone", in: `{"process":{"oomScoreAdj":0}}`},
		{name: "no oomScoreAdj", in: `{"process":{"args":["sh"]}}`},
		{name: "null oomScoreAdj", in: `{"process":{"oomScoreAdj":null}}`},
		{name: "no process", in: `{"ociVersion":"1.2.0","root":{"path":"rootfs"}}`},
		{name: "null process", in: `{"process":null}`},
		{name: "not json", in: `{`, wantErr: true},
		{name: "process not an object", in: `{"process":[]}`, wantErr: true},
		{name: "oomScoreAdj not a number", in: `{"process":{"oomScoreAdj":"-5"}}`, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, old, changed, err := rewriteConfig([]byte(tc.in))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("rewriteConfig(%s) = %s, nil error; want an error", tc.in, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("rewriteConfig(%s): %v", tc.in, err)
			}
			if old != tc.old {
				t.Errorf("old = %d, want %d", old, tc.old)
			}
			if tc.want == "" {
				if changed || string(out) != tc.in {
					t.Errorf("rewriteConfig(%s) = %s, changed=%v; want it unchanged", tc.in, out, changed)
				}
				return
			}
			if !changed {
				t.Errorf("changed = false, want true")
			}
			var got, want any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("output %s: %v", out, err)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("rewriteConfig(%s) =\n%s\nwant\n%s", tc.in, out, tc.want)
			}
		})
	}
}
