//go:build !linux

// Command pause is the pod sandbox image of kubewin's end-to-end tests; it runs on linux only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "pause: linux only")
	os.Exit(1)
}
