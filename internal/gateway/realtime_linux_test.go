//go:build linux

package gateway_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/gateway"
)

// execRealtimeHelper, when set, makes this test binary exec the command in it with
// gateway.ExecRealtime (the way `kubewin gateway exec` starts keepalived) instead of testing.
const execRealtimeHelper = "KUBEWIN_TEST_EXEC_REALTIME"

func TestMain(m *testing.M) {
	if cmd := os.Getenv(execRealtimeHelper); cmd != "" {
		err := gateway.ExecRealtime(10, []string{"sh", "-c", cmd}, os.Stderr)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// TestExecRealtime: the exec'd command (standing in for keepalived) runs SCHED_RR 10 where the
// kernel allows it, and SCHED_OTHER at nice -20 with one line saying so where it refuses — a
// cgroup-v1 cpu cgroup without real-time budget, as a pod's cgroup is on kernels with RT group
// scheduling, where `chrt --rr` fails. The policy is what the kernel reports for the command's
// own process (chrt -p), after the exec.
func TestExecRealtime(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (CAP_SYS_NICE) and a cgroup")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	report := `chrt -p $$; echo "nice $(nice)"`
	run := func(t *testing.T, cgroup string) (string, string) {
		script := `exec "$0"`
		if cgroup != "" {
			script = `echo $$ > "$1/cgroup.procs" && exec "$0"`
		}
		cmd := exec.Command("sh", "-c", script, self, cgroup)
		cmd.Env = append(os.Environ(), execRealtimeHelper+"="+report)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
		}
		return stdout.String(), stderr.String()
	}

	t.Run("real-time allowed", func(t *testing.T) {
		out, errOut := run(t, "")
		if !strings.Contains(out, "policy: SCHED_RR") || !strings.Contains(out, "priority: 10") || !strings.Contains(out, "nice 0") {
			t.Errorf("want SCHED_RR 10 at nice 0, got:\n%s", out)
		}
		if errOut != "" {
			t.Errorf("stderr %q, want nothing", errOut)
		}
	})

	t.Run("no real-time budget", func(t *testing.T) {
		root := "/sys/fs/cgroup/cpu"
		if _, err := os.Stat(filepath.Join(root, "cpu.rt_runtime_us")); err != nil {
			t.Skipf("no cgroup-v1 cpu hierarchy with RT group scheduling (%v)", err)
		}
		dir := filepath.Join(root, fmt.Sprintf("kubewin-test-%d", os.Getpid()))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := os.Remove(dir); err != nil {
				t.Error(err)
			}
		})
		// chrt itself fails there: what the DaemonSet's keepalived container did before.
		if out, err := exec.Command("sh", "-c", `echo $$ > "$0/cgroup.procs" && exec chrt --rr 10 true`, dir).CombinedOutput(); err == nil {
			t.Fatalf("chrt --rr 10 succeeded in a cgroup without RT budget: %s", out)
		}
		out, errOut := run(t, dir)
		if !strings.Contains(out, "policy: SCHED_OTHER") || !strings.Contains(out, "nice -20") {
			t.Errorf("want SCHED_OTHER at nice -20, got:\n%s", out)
		}
		if !strings.Contains(errOut, "SCHED_RR 10 refused") || !strings.Contains(errOut, "nice -20") {
			t.Errorf("stderr %q does not state the fallback", errOut)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		if err := gateway.ExecRealtime(0, []string{"true"}, os.Stderr); err == nil {
			t.Error("priority 0 accepted")
		}
		if err := gateway.ExecRealtime(10, nil, os.Stderr); err == nil {
			t.Error("empty command accepted")
		}
		if err := gateway.ExecRealtime(10, []string{"/nonexistent/keepalived"}, os.Stderr); err == nil {
			t.Error("missing command accepted")
		}
	})
}
