package winnode

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeProgram(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256([]byte(content))
	return hex.EncodeToString(s[:])
}

// The rows of MemHost's table for a running program's file: renamed while it runs (the hold
// follows the file), never replaced or deleted; a service without its program does not start.
func TestMemHostProgramFilesInUse(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	exe, aside, next := filepath.Join(dir, "kubelet.exe"), filepath.Join(dir, "kubelet.exe.prev-a"), filepath.Join(dir, "kubelet.exe.new")
	writeProgram(t, exe, "v1")
	writeProgram(t, next, "v2")
	h := NewMemHost()
	if err := h.InstallService(ctx, ServiceConfig{Name: "kubelet", Binary: `C:\k\kube-log-runner.exe`}); err != nil {
		t.Fatal(err)
	}
	h.SetImages("kubelet", exe)
	if err := h.StartService(ctx, "kubelet"); err != nil {
		t.Fatal(err)
	}
	if err := h.RenameFile(ctx, next, exe); err == nil || !strings.Contains(err.Error(), "ERROR_ACCESS_DENIED") {
		t.Fatalf("replacing a running program: %v, want access denied", err)
	}
	if err := h.RemoveFile(ctx, exe); err == nil {
		t.Fatal("deleting a running program succeeded")
	}
	if err := h.RenameFile(ctx, exe, aside); err != nil {
		t.Fatalf("renaming a running program aside: %v", err)
	}
	if h.Held(aside) != "service kubelet" || h.Held(exe) != "" {
		t.Fatalf("after the rename the process holds %q (aside) and %q (name)", h.Held(aside), h.Held(exe))
	}
	// The name is free: the new program takes it while the old one runs from the aside file.
	if err := h.RenameFile(ctx, next, exe); err != nil {
		t.Fatal(err)
	}
	if err := h.RemoveFile(ctx, aside); err == nil {
		t.Fatal("deleting the renamed running program succeeded")
	}
	if err := h.StopService(ctx, "kubelet"); err != nil {
		t.Fatal(err)
	}
	if err := h.RemoveFile(ctx, aside); err != nil {
		t.Fatalf("deleting a program nothing runs: %v", err)
	}
	// A pod's shim outside the SCM.
	h.HoldFile(exe, "shim of pod p")
	if err := h.RemoveFile(ctx, exe); err == nil {
		t.Fatal("deleting a file a shim runs from succeeded")
	}
	h.ReleaseFile(exe)
	// Without its program the service does not start.
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	err := h.StartService(ctx, "kubelet")
	if err == nil || !strings.Contains(err.Error(), "ERROR_PATH_NOT_FOUND") {
		t.Fatalf("start without the program: %v", err)
	}
	if st, _ := h.ServiceStatus(ctx, "kubelet"); st.State != ServiceStopped || st.ExitCode != errorPathNotFound {
		t.Fatalf("status %+v", st)
	}
}

func TestMemHostFailImage(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	exe := filepath.Join(dir, "kubelet.exe")
	bad := writeProgram(t, exe, "broken kubelet")
	h := NewMemHost()
	if err := h.InstallService(ctx, ServiceConfig{Name: "kubelet"}); err != nil {
		t.Fatal(err)
	}
	h.SetImages("kubelet", exe)
	h.FailImage(bad, 1, "unknown flag --foo")
	if err := h.StartService(ctx, "kubelet"); err == nil || !strings.Contains(err.Error(), "unknown flag") {
		t.Fatalf("start of a failing program: %v", err)
	}
	if h.Held(exe) != "" {
		t.Fatal("a program that exited holds its file")
	}
	writeProgram(t, exe, "good kubelet")
	if err := h.StartService(ctx, "kubelet"); err != nil {
		t.Fatalf("start of another program: %v", err)
	}
}

// wusa's and DISM's exit codes, per case, and a restart completing what waited for it.
func TestMemHostInstallers(t *testing.T) {
	dir := t.TempDir()
	type step struct {
		argv func(msu, cab string) []string
		want uint32
		// installed after the step (and after a restart when reboot is set)
		installed []string
		reboot    bool
	}
	install := func(msu, _ string) []string { a, _ := InstallCommand(msu); return a }
	uninstall := func(msu, _ string) []string { a, _ := UninstallCommand("KB5000001", msu); return a }
	dismAdd := func(_, cab string) []string { a, _ := InstallCommand(cab); return a }
	dismRemove := func(_, cab string) []string { a, _ := UninstallCommand("KB5000001", cab); return a }
	for _, tc := range []struct {
		name  string
		pkg   UpdatePackage
		steps []step
	}{
		{"no restart needed", UpdatePackage{KB: "KB5000001"}, []step{
			{install, ExitSuccess, []string{"KB5000001"}, false},
			{install, ExitAlreadyInstalled, []string{"KB5000001"}, false},
			{uninstall, ExitSuccess, nil, false},
			{uninstall, ExitAlreadyUninstalled, nil, false},
		}},
		{"restart needed", UpdatePackage{KB: "KB5000001", NeedsReboot: true}, []step{
			{install, ExitRebootRequired, nil, false},
			{install, ExitAlreadyInstalled, []string{"KB5000001"}, true},
			{uninstall, ExitRebootRequired, []string{"KB5000001"}, false},
			{uninstall, ExitAlreadyUninstalled, nil, true},
		}},
		{"not applicable", UpdatePackage{KB: "KB5000001", NotApplicable: true}, []step{
			{install, ExitNotApplicable, nil, false},
		}},
		{"wusa restarting by itself", UpdatePackage{KB: "KB5000001", NeedsReboot: true}, []step{
			{func(msu, _ string) []string { return []string{WusaPath, msu, "/quiet"} }, ExitRebootInitiated, []string{"KB5000001"}, false},
		}},
		{"DISM", UpdatePackage{KB: "KB5000001", NeedsReboot: true}, []step{
			{dismAdd, ExitRebootRequired, []string{"KB5000001"}, true},
			{dismAdd, ExitSuccess, []string{"KB5000001"}, false},
			{dismRemove, ExitRebootRequired, nil, true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			h := NewMemHost()
			msu, cab := filepath.Join(dir, tc.name+".msu"), filepath.Join(dir, tc.name+".cab")
			h.AddUpdatePackage(writeProgram(t, msu, "msu "+tc.name), tc.pkg)
			h.AddUpdatePackage(writeProgram(t, cab, "cab "+tc.name), tc.pkg)
			for i, s := range tc.steps {
				code, err := h.RunInstaller(ctx, s.argv(msu, cab))
				if err != nil || code != s.want {
					t.Fatalf("step %d %v: exit %d (%#x), %v; want %d (%#x)", i, s.argv(msu, cab), code, code, err, s.want, s.want)
				}
				if s.reboot {
					h.Reboot()
				}
				if got := h.InstalledUpdates(); !slices.Equal(got, s.installed) {
					t.Fatalf("step %d: installed %v, want %v", i, got, s.installed)
				}
			}
		})
	}
}

// A restart keeps files and services: the automatic service holds its program again, the
// manual one stays stopped, and what is on disk is what was there.
func TestMemHostRestartKeepsFilesAndServices(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	ctrd, kubelet := filepath.Join(dir, "containerd.exe"), filepath.Join(dir, "kubelet.exe")
	writeProgram(t, ctrd, "containerd")
	writeProgram(t, kubelet, "kubelet")
	h := NewMemHost()
	for _, c := range []ServiceConfig{{Name: "containerd", StartType: StartAutomatic}, {Name: "kubelet", StartType: StartManual, DependsOn: []string{"containerd"}}} {
		if err := h.InstallService(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	h.SetImages("containerd", ctrd)
	h.SetImages("kubelet", kubelet)
	if err := h.StartService(ctx, "kubelet"); err != nil {
		t.Fatal(err)
	}
	h.HoldFile(filepath.Join(dir, "shim.exe"), "shim")
	if err := h.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if h.State("containerd") != ServiceRunning || h.State("kubelet") != ServiceStopped {
		t.Fatalf("after a restart containerd %s, kubelet %s", h.State("containerd"), h.State("kubelet"))
	}
	if h.Held(ctrd) == "" || h.Held(kubelet) != "" || h.Held(filepath.Join(dir, "shim.exe")) != "" {
		t.Fatalf("holds after a restart: containerd %q kubelet %q shim %q", h.Held(ctrd), h.Held(kubelet), h.Held(filepath.Join(dir, "shim.exe")))
	}
	if b, err := os.ReadFile(kubelet); err != nil || string(b) != "kubelet" {
		t.Fatalf("kubelet.exe after a restart: %q %v", b, err)
	}
}

func TestInstallCommands(t *testing.T) {
	for _, tc := range []struct {
		pkg, kb       string
		install, un   string
		wantErrSubstr string
	}{
		{pkg: `C:\k\updates\windows10.0-kb5040437-x64.msu`, kb: "KB5040437",
			install: WusaPath + ` C:\k\updates\windows10.0-kb5040437-x64.msu /quiet /norestart`,
			un:      WusaPath + ` /uninstall /kb:5040437 /quiet /norestart`},
		{pkg: `C:\k\updates\ssu.CAB`, kb: "KB5040438",
			install: DismPath + ` /Online /Add-Package /PackagePath:C:\k\updates\ssu.CAB /Quiet /NoRestart`,
			un:      DismPath + ` /Online /Remove-Package /PackagePath:C:\k\updates\ssu.CAB /Quiet /NoRestart`},
		{pkg: `C:\k\updates\x.exe`, kb: "KB1", wantErrSubstr: ".msu (wusa) or a .cab"},
		{pkg: `C:\k\updates\x.msu`, kb: "KBx", install: WusaPath + ` C:\k\updates\x.msu /quiet /norestart`, wantErrSubstr: "not a KB number"},
	} {
		in, err := InstallCommand(tc.pkg)
		if tc.install != "" && (err != nil || strings.Join(in, " ") != tc.install) {
			t.Errorf("InstallCommand(%s) = %q, %v; want %q", tc.pkg, in, err, tc.install)
		}
		un, err2 := UninstallCommand(tc.kb, tc.pkg)
		switch {
		case tc.wantErrSubstr != "":
			if (err == nil || !strings.Contains(err.Error(), tc.wantErrSubstr)) && (err2 == nil || !strings.Contains(err2.Error(), tc.wantErrSubstr)) {
				t.Errorf("%s %s: errors %v / %v, want %q", tc.pkg, tc.kb, err, err2, tc.wantErrSubstr)
			}
		case err2 != nil || strings.Join(un, " ") != tc.un:
			t.Errorf("UninstallCommand(%s, %s) = %q, %v; want %q", tc.kb, tc.pkg, un, err2, tc.un)
		}
	}
}

// The exit codes are the documented numbers (see their constants).
func TestInstallerExitCodeValues(t *testing.T) {
	for _, tc := range []struct {
		got, want uint32
	}{{ExitRebootRequired, 3010}, {ExitRebootInitiated, 1641}, {ExitAlreadyInstalled, 2359302}, {ExitAlreadyUninstalled, 2359303}, {ExitNotApplicable, 2149842967}} {
		if tc.got != tc.want {
			t.Errorf("exit code %d, want %d", tc.got, tc.want)
		}
	}
}

// The command lines are built from a revision's URL and KB (the orchestrator's annotation): for
// any input they are either refused or name the installer by absolute path, stay quiet, never
// restart by themselves, and pass the package or KB as one argument.
func FuzzInstallCommands(f *testing.F) {
	for _, seed := range [][2]string{
		{`C:\k\updates\windows10.0-kb5040437-x64.msu`, "KB5040437"},
		{`C:\k\updates\ssu.cab`, "KB1"},
		{"/tmp/a b.MSU", "kb12"},
		{`C:\x.msu /quiet`, "KB5 /norestart"},
		{"", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pkg, kb string) {
		for _, argv := range func() [][]string {
			var out [][]string
			if a, err := InstallCommand(pkg); err == nil {
				out = append(out, a)
			}
			if a, err := UninstallCommand(kb, pkg); err == nil {
				out = append(out, a)
			}
			return out
		}() {
			if argv[0] != WusaPath && argv[0] != DismPath {
				t.Fatalf("installer %q", argv[0])
			}
			if !slices.ContainsFunc(argv, func(a string) bool { return strings.EqualFold(a, "/norestart") }) ||
				!slices.ContainsFunc(argv, func(a string) bool { return strings.EqualFold(a, "/quiet") }) {
				t.Fatalf("%q lacks /quiet or /norestart", argv)
			}
			if argv[0] == WusaPath && argv[1] == "/uninstall" && strings.Trim(strings.TrimPrefix(argv[2], "/kb:"), "0123456789") != "" {
				t.Fatalf("wusa /uninstall with %q", argv[2])
			}
			if argv[0] == WusaPath && argv[1] != "/uninstall" && argv[1] != pkg {
				t.Fatalf("wusa installs %q, not %q", argv[1], pkg)
			}
		}
	})
}
