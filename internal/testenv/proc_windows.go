package testenv

import (
	"os"
	"syscall"
)

// The harness runs kube-apiserver and etcd on Linux only; this file keeps the package compiling
// for GOOS=windows vet. Nothing here is executed on Windows.
func sysProcAttr() *syscall.SysProcAttr { return nil }

func terminate(p *os.Process) error { return p.Kill() }
