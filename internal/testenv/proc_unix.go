//go:build !windows

package testenv

import (
	"os"
	"syscall"
)

// sysProcAttr puts the child in its own process group. On Linux the child is also killed when
// the test binary dies, so a crashed test leaves no kube-apiserver or etcd behind.
func sysProcAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(a)
	return a
}

func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
