//go:build linux

// Command pause is the pod sandbox ("pause") image of kubewin's end-to-end tests, which have no
// image registry: it blocks until SIGTERM or SIGINT, reaps the zombie children it inherits as a
// pid namespace's init, and exits 0. Test infrastructure only; built by nodeimage.BuildStatic.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every exited child without blocking.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
