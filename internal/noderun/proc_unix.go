//go:build unix

package noderun

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup puts the child in a process group of its own, so stopping a service reaches
// everything it forked (a shell wrapper and its payload) and never the supervisor itself.
// Processes that detach into their own group on purpose (containerd shims) are left alone,
// which is what keeps containers running across a containerd restart.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminateGroup asks the whole process group to exit.
func terminateGroup(p *os.Process) error {
	return signalGroup(p, syscall.SIGTERM)
}

// killGroup kills whatever is left of the process group.
func killGroup(p *os.Process) error {
	return signalGroup(p, syscall.SIGKILL)
}

func signalGroup(p *os.Process, sig syscall.Signal) error {
	// The group id is the leader's pid (Setpgid with Pgid 0).
	err := syscall.Kill(-p.Pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // already gone
	}
	return err
}

// groupAlive reports whether any member of the process group still exists. The leader may
// have exited while a child it forked is still shutting down.
func groupAlive(p *os.Process) bool {
	err := syscall.Kill(-p.Pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// exitSignal names the signal that ended the process, or "".
func exitSignal(ps *os.ProcessState) string {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}
