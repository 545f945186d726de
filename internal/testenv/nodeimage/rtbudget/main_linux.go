//go:build linux

package main

import (
	"fmt"
	"os"
	"syscall"
)

func main() {
	args := os.Args[1:]
	if dir, ok := bundleDir(args); ok {
		if err := grant(dir); err != nil {
			fmt.Fprintf(os.Stderr, "rtbudget (kubewin test workaround): %v\n", err)
			os.Exit(1)
		}
	}
	runc := os.Getenv(realRuncEnv)
	if runc == "" {
		runc = defaultRealRunc
	}
	err := syscall.Exec(runc, append([]string{runc}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "rtbudget (kubewin test workaround): exec %s: %v\n", runc, err)
	os.Exit(1)
}
