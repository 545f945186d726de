//go:build !linux && !windows

package testenv

import "syscall"

func setPdeathsig(*syscall.SysProcAttr) {}
