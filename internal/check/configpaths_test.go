package check

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubewin/kubewin/internal/platform"
)

var pathCorpus = []string{
	"", "/", "/var/log/pods", "/var/log//pods/", "/var/log/../pods", "var/log/pods", "./x", "..",
	`C:\var\log\pods`, `C:/var/log/pods`, `C:\var\log\..\pods`, `C:\var\\log`, `C:\var\log\`, `C:var`, `C:`, `c:\`,
	`\var\log`, `\\server\share\pods`, `\\server\share`, `\\server\share\a\..\b`, `D:\k\pods\.`,
}

// The Windows rules as pkg/util/filesystem applies them in a Windows kubelet.
func TestWindowsPathRules(t *testing.T) {
	for _, tc := range []struct {
		path       string
		abs, clean bool
	}{
		{`C:\var\log\pods`, true, true},
		{`C:/var/log/pods`, true, true}, // Clean turns / into \, ToSlash turns it back
		{`C:\var\log\..\pods`, true, false},
		{`C:\var\\log`, true, false},
		{`C:\var\log\`, true, false},
		{`C:var`, false, true},
		{`C:`, false, false},
		{`\var\log`, true, true},
		{`/var/log/pods`, true, true},
		{`\\server\share\pods`, true, true},
		{`\\server\share\a\..\b`, true, false},
		{`var\log`, false, true},
		{``, false, false},
	} {
		if got := isAbsWindows(tc.path); got != tc.abs {
			t.Errorf("isAbsWindows(%q) = %v, want %v", tc.path, got, tc.abs)
		}
		if got := isPathCleanWindows(tc.path); got != tc.clean {
			t.Errorf("isPathCleanWindows(%q) = %v, want %v", tc.path, got, tc.clean)
		}
	}
}

// On the host the test runs on, the rules for that OS equal path/filepath's: the Linux rules on
// Linux, the Windows rules when the tests run on Windows. Windows cannot run here; that branch is
// compiled (GOOS=windows go vet) and TestWindowsPathRules pins the Windows results.
func TestPathRulesMatchHostFilepath(t *testing.T) {
	abs, clean := isAbsLinux, isPathCleanLinux
	hostAbs := filepath.IsAbs
	if runtime.GOOS == "windows" {
		abs, clean = isAbsWindows, isPathCleanWindows
		// pkg/util/filesystem.IsAbs on Windows also takes \x and /x as absolute.
		hostAbs = func(p string) bool {
			return filepath.IsAbs(p) || strings.HasPrefix(p, `\`) || strings.HasPrefix(p, "/")
		}
	}
	for _, p := range pathCorpus {
		if got, want := abs(p), hostAbs(p); got != want {
			t.Errorf("%s: IsAbs(%q) = %v, filepath says %v", runtime.GOOS, p, got, want)
		}
		if got, want := clean(p), filepath.ToSlash(filepath.Clean(p)) == filepath.ToSlash(p); got != want {
			t.Errorf("%s: IsPathClean(%q) = %v, filepath says %v", runtime.GOOS, p, got, want)
		}
	}
}

func TestShowHiddenMetricsVersion(t *testing.T) {
	v, err := platform.ParseVersion("1.37")
	if err != nil {
		t.Fatal(err)
	}
	fld := field.NewPath("showHiddenMetricsForVersion")
	if err := showHiddenMetricsError("1.36", v, fld); err != nil {
		t.Errorf("1.36 on 1.37: %v", err)
	}
	if err := showHiddenMetricsError("", v, fld); err != nil {
		t.Errorf("empty: %v", err)
	}
	err = showHiddenMetricsError("1.35", v, fld)
	if err == nil || !strings.Contains(err.Error(), "'1.36'") {
		t.Errorf("1.35 on 1.37: %v", err)
	}
}
