package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildVersionAndCommit(t *testing.T) {
	withVCS := func(rev, modified string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/kubewin/kubewin", Version: "(devel)"}}
		if rev != "" {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "vcs.revision", Value: rev})
		}
		if modified != "" {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "vcs.modified", Value: modified})
		}
		return bi
	}
	installed := &debug.BuildInfo{Main: debug.Module{Path: "github.com/kubewin/kubewin", Version: "v0.3.0"}}
	for _, tc := range []struct {
		name                    string
		version, commit         string
		bi                      *debug.BuildInfo
		wantVersion, wantCommit string
	}{
		{"release build stamps both", "v1.2.3", "0123abcd", withVCS("ffff", "true"), "v1.2.3", "0123abcd"},
		{"go install module@version", "", "", installed, "v0.3.0", "unknown"},
		{"go build in a clean checkout", "", "", withVCS("abc123", "false"), "devel", "abc123"},
		{"go build with local changes", "", "", withVCS("abc123", "true"), "devel", "abc123-dirty"},
		{"-buildvcs=false", "", "", withVCS("", ""), "devel", "unknown"},
		{"no build info", "", "", nil, "devel", "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := buildVersion(tc.version, tc.bi); got != tc.wantVersion {
				t.Errorf("buildVersion = %q, want %q", got, tc.wantVersion)
			}
			if got := buildCommit(tc.commit, tc.bi); got != tc.wantCommit {
				t.Errorf("buildCommit = %q, want %q", got, tc.wantCommit)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"version", "-o", "json"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("version -o json exited %d: %s", code, errOut.String())
	}
	var v versionInfo
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("version -o json: %v\n%s", err, out.String())
	}
	if v.GoVersion != runtime.Version() || v.Platform != runtime.GOOS+"/"+runtime.GOARCH || v.Version == "" || v.Commit == "" {
		t.Errorf("version -o json = %+v", v)
	}
	out.Reset()
	if code := run([]string{"version"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("version exited %d: %s", code, errOut.String())
	}
	if want := "(commit " + v.Commit + ", " + runtime.Version(); !strings.Contains(out.String(), want) {
		t.Errorf("version text %q does not contain %q", out.String(), want)
	}
}
