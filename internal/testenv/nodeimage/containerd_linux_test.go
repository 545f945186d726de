//go:build linux

package nodeimage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/testenv"
)

// TestContainerdImportAndRun builds the pause and check images, imports them into a real
// containerd (from the test assets) and runs both with the real runc behind the runc wrapper.
func TestContainerdImportAndRun(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root to run a real containerd and runc; CI runs as root")
	}
	assets, err := testenv.Assets()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"containerd", "containerd-shim-runc-v2", "ctr"} {
		if _, err := os.Stat(filepath.Join(assets, name)); err != nil {
			t.Fatalf("the test assets in %s lack containerd (hack/kube-binaries/build.sh builds it): %v", assets, err)
		}
	}
	realRunc := os.Getenv(RealRuncEnv)
	if realRunc == "" {
		realRunc = DefaultRealRunc
	}
	if _, err := os.Stat(realRunc); err != nil {
		t.Fatalf("runc: %v (install Debian's runc or set %s)", err, RealRuncEnv)
	}
	ctr := filepath.Join(assets, "ctr")

	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	pause, err := BuildStatic(bin, PausePackage)
	if err != nil {
		t.Fatal(err)
	}
	check, err := BuildStatic(bin, CheckPackage)
	if err != nil {
		t.Fatal(err)
	}
	wrapDir, err := BuildRuncWrapper(tmp)
	if err != nil {
		t.Fatal(err)
	}
	const pauseRef, checkRef = "registry.k8s.io/pause:3.10.1", "kubewin.test/check:1"
	pauseTar, err := BuildImage(filepath.Join(tmp, "images"), pauseRef, map[string]string{"/pause": pause}, []string{"/pause"})
	if err != nil {
		t.Fatal(err)
	}
	checkTar, err := BuildImage(filepath.Join(tmp, "images"), checkRef, map[string]string{"/usr/local/bin/check": check}, []string{"check"})
	if err != nil {
		t.Fatal(err)
	}

	cd := startContainerd(t, tmp, assets, wrapDir, realRunc)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	for _, tarPath := range []string{pauseTar, checkTar} {
		if err := Import(ctx, ctr, cd.address, tarPath); err != nil {
			t.Fatal(err)
		}
	}
	out := cd.ctr(t, ctx, "images", "ls", "-q")
	for _, ref := range []string{pauseRef, checkRef} {
		if !containsLine(out, ref) {
			t.Errorf("ctr images ls -q lacks %s:\n%s", ref, out)
		}
	}

	// ctr's default cgroup is /k8s.io/<id>; a parent of the test's own leaves nothing behind.
	cgParent := fmt.Sprintf("kubewin-nodeimage-test-%d", os.Getpid())
	t.Cleanup(func() { removeCgroups(t, cgParent) })
	runArgs := func(id string) []string {
		return []string{"run", "--rm", "--runc-root", filepath.Join(tmp, "runc"), "--fifo-dir", filepath.Join(tmp, "fifo"), "--cgroup", "/" + cgParent + "/" + id}
	}

	// The check image runs to completion; runc is found through containerd's PATH (the wrapper).
	out = cd.ctr(t, ctx, append(runArgs("kubewin-check"), "--env", "KUBEWIN_CHECK=hello", checkRef, "kubewin-check")...)
	if !containsLine(out, "KUBEWIN_CHECK=hello") {
		t.Errorf("check output lacks KUBEWIN_CHECK=hello:\n%s", out)
	}
	t.Logf("check output:\n%s", out)
	wrapLog, _ := os.ReadFile(cd.wrapLog)
	if !strings.Contains(string(wrapLog), "argv: ") || !strings.Contains(string(wrapLog), " create ") {
		t.Errorf("runc wrapper was not used for create; its log:\n%s", wrapLog)
	}

	// The pause image runs until SIGTERM and then exits 0 (ctr run exits with the task's status).
	run := exec.CommandContext(ctx, ctr, append([]string{"-n", "k8s.io", "-a", cd.address}, append(runArgs("kubewin-pause"), pauseRef, "kubewin-pause")...)...)
	var runOut bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runOut
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	if err := waitFor(ctx, 30*time.Second, func() bool {
		tasks, _ := exec.CommandContext(ctx, ctr, "-n", "k8s.io", "-a", cd.address, "tasks", "ls").CombinedOutput()
		for _, l := range strings.Split(string(tasks), "\n") {
			if f := strings.Fields(l); len(f) >= 3 && f[0] == "kubewin-pause" && f[2] == "RUNNING" {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("pause task not running: %v\n%s", err, runOut.String())
	}
	time.Sleep(300 * time.Millisecond) // still running, not exited by itself
	select {
	case err := <-done:
		t.Fatalf("pause exited by itself: %v\n%s", err, runOut.String())
	default:
	}
	cd.ctr(t, ctx, "tasks", "kill", "-s", "SIGTERM", "kubewin-pause")
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("pause after SIGTERM: %v (want exit status 0)\n%s", err, runOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("pause did not exit within 30s of SIGTERM\n%s", runOut.String())
	}
}

type containerd struct {
	address string
	ctrPath string
	wrapLog string
}

// ctr runs ctr -n k8s.io against the test's containerd and returns its output; it fails the test
// on error.
func (c *containerd) ctr(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, c.ctrPath, append([]string{"-n", "k8s.io", "-a", c.address}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ctr %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// startContainerd starts containerd with everything under dir and registers its cleanup: stop
// containerd (SIGTERM, then SIGKILL), kill its shims and their containers, unmount everything
// under dir.
func startContainerd(t *testing.T, dir, assets, wrapDir, realRunc string) *containerd {
	t.Helper()
	c := &containerd{
		address: filepath.Join(dir, "containerd.sock"),
		ctrPath: filepath.Join(assets, "ctr"),
		wrapLog: filepath.Join(dir, "runcwrap.log"),
	}
	// Keep containerd off the host's directories: NRI would listen on /var/run/nri, the opt
	// plugin would create /opt/containerd, the CRI plugin would create /etc/cni/net.d.
	config := fmt.Sprintf(`version = 3
disabled_plugins = ["io.containerd.nri.v1.nri"]

[plugins.'io.containerd.internal.v1.opt']
  path = %q

[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dirs = [%q]
  conf_dir = %q
`, filepath.Join(dir, "opt"), filepath.Join(assets, "cni"), filepath.Join(dir, "cni", "net.d"))
	// The shims put their sockets into /run/containerd/s (fixed in containerd); remove the
	// directories afterwards if this test created them and they are empty again.
	var createdRunDirs []string
	for _, d := range []string{"/run/containerd", "/run/containerd/s"} {
		if _, err := os.Stat(d); errors.Is(err, os.ErrNotExist) {
			createdRunDirs = append([]string{d}, createdRunDirs...)
		}
	}
	configPath := filepath.Join(dir, "containerd.toml")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "containerd.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(assets, "containerd"),
		"--config", configPath,
		"--root", filepath.Join(dir, "root"),
		"--state", filepath.Join(dir, "state"),
		"--address", c.address,
		"--log-level", "debug")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The shim inherits this environment: the wrapper's directory comes first so the shim's
	// "runc" is the wrapper, and the assets directory provides containerd-shim-runc-v2.
	cmd.Env = append(os.Environ(),
		"PATH="+wrapDir+":"+assets+":"+os.Getenv("PATH"),
		RealRuncEnv+"="+realRunc,
		RuncWrapperLogEnv+"="+c.wrapLog)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			t.Logf("containerd did not stop within 15s of SIGTERM; killing it")
			_ = cmd.Process.Kill()
			<-exited
		}
		logFile.Close()
		if pids, err := KillShims(c.address); err != nil {
			t.Errorf("kill shims: %v", err)
		} else if len(pids) > 0 {
			t.Logf("killed leftover shim processes %v", pids)
		}
		if _, err := UnmountUnder(dir); err != nil {
			t.Errorf("unmount: %v", err)
		}
		for _, d := range createdRunDirs {
			_ = os.Remove(d) // fails, harmlessly, when not empty
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("containerd log (tail):\n%s", tail(b, 8000))
			w, _ := os.ReadFile(c.wrapLog)
			t.Logf("runc wrapper log:\n%s", w)
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = waitFor(ctx, 60*time.Second, func() bool {
		select {
		case <-exited:
			return true
		default:
		}
		return exec.CommandContext(ctx, c.ctrPath, "-a", c.address, "version").Run() == nil
	})
	select {
	case <-exited:
		t.Fatalf("containerd exited during start; see its log below")
	default:
	}
	if err != nil {
		t.Fatalf("containerd not ready: %v", err)
	}
	return c
}

// removeCgroups removes the cgroup name (and the cgroups below it) from every hierarchy, cgroup
// v1 and v2; the containers in them are gone by then.
func removeCgroups(t *testing.T, name string) {
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*/" + name)
	dirs = append(dirs, "/sys/fs/cgroup/"+name)
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.IsDir() {
				if err := os.Remove(filepath.Join(d, e.Name())); err != nil {
					t.Errorf("remove cgroup: %v", err)
				}
			}
		}
		if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("remove cgroup: %v", err)
		}
	}
}

func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

func containsLine(out, line string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}
