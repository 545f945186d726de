// Command kubewin plans, renders, checks, verifies and diagnoses Windows (and Linux) worker
// nodes joining an existing Kubernetes cluster whose control plane and CNI run on Linux.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/kubewin/kubewin/internal/cliutil"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the CLI with explicit streams so tests can drive it in-process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if cliutil.ShouldPrint(err) {
		fmt.Fprintf(stderr, "kubewin: %v\n", err)
	}
	return cliutil.CodeOf(err)
}
