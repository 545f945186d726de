//go:build linux

package netns

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Keepalived is a keepalived (VRRP only) running in a namespace with its own pid files.
type Keepalived struct {
	NS         *NS
	ConfigPath string
	// PIDFile holds the parent's pid (what SIGHUP goes to); VRRPPIDFile the VRRP child's.
	PIDFile     string
	VRRPPIDFile string
	LogPath     string
	Proc        *Proc
}

// StartKeepalived runs keepalived in the foreground (-n) inside ns with the configuration at
// configPath, logging to dir/keepalived.log. It waits until the VRRP child runs (or keepalived
// reports it has nothing to run). Killed (whole process group) at cleanup.
func StartKeepalived(t testing.TB, ns *NS, configPath, dir string) *Keepalived {
	t.Helper()
	k := &Keepalived{
		NS:          ns,
		ConfigPath:  configPath,
		PIDFile:     filepath.Join(dir, "keepalived.pid"),
		VRRPPIDFile: filepath.Join(dir, "vrrp.pid"),
		LogPath:     filepath.Join(dir, "keepalived.log"),
	}
	// A SIGKILLed keepalived leaves its pid files; a restart must not be mistaken for running.
	_ = os.Remove(k.PIDFile)
	_ = os.Remove(k.VRRPPIDFile)
	// --vrrp: no checker process; -n: stay in the foreground so the process group is ours;
	// -l: log to stdout (our log file); -G: no syslog — without a /dev/log socket glibc's
	// syslog falls back to writing every line to /dev/console, a serial console on these VMs
	// that blocks keepalived for seconds when it logs a GARP per VIP. Distinct pid files.
	// --namespace is not used: "ip netns exec" already puts the process in ns.
	// chrt: keepalived runs with real-time priority, as the gateway DaemonSet runs it, so that
	// a busy test machine (an API server, parallel tests) cannot delay its adverts beyond the
	// peers' down timer (170 ms at advert 0.05 s) and cause a false takeover.
	k.Proc = ns.Start(t, k.LogPath, "chrt", "--rr", "10", "keepalived", "--vrrp", "-n", "-l", "-G",
		"-f", configPath, "-p", k.PIDFile, "-r", k.VRRPPIDFile)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pid, err := ReadPID(k.VRRPPIDFile); err == nil && pid > 0 {
			break
		}
		// With no vrrp_instance keepalived idles without a VRRP child and writes no pid file
		// until a reload gives it something to run.
		if log, _ := os.ReadFile(k.LogPath); strings.Contains(string(log), "has no configuration to run") {
			break
		}
		select {
		case <-k.Proc.Done():
			log, _ := os.ReadFile(k.LogPath)
			t.Fatalf("keepalived in %s exited at start: %s", ns.Name, tail(log, 2000))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("keepalived in %s wrote no pid file within 10s", ns.Name)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return k
}

// Kill SIGKILLs the parent and the VRRP child at once (process-group kill): no priority-0
// advert, no address cleanup — the host is gone as far as VRRP is concerned.
func (k *Keepalived) Kill() { k.Proc.Kill() }

// Reload sends SIGHUP to the parent.
func (k *Keepalived) Reload() error { return k.Proc.Signal(syscall.SIGHUP) }

// Log returns the end of the keepalived log, for failure messages.
func (k *Keepalived) Log() string {
	b, _ := os.ReadFile(k.LogPath)
	return tail(b, 4000)
}

// ReadPID reads a pid file.
func ReadPID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("pid file %s: %w", path, err)
	}
	return pid, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
