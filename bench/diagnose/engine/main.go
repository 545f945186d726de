// Command engine runs the diagnose engine (internal/diagnose) behind a minimal main, without
// the rest of the kubewin CLI. run.sh measures it next to `kubewin diagnose` to separate the
// engine's memory from the baseline of the full CLI binary, whose other commands link large
// Kubernetes libraries that are paged in at start-up whatever the command.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/kubewin/kubewin/internal/diagnose"
)

func main() {
	cat, err := diagnose.Compile(diagnose.DefaultSignatures())
	if err != nil {
		fmt.Fprintln(os.Stderr, "engine:", err)
		os.Exit(2)
	}
	rep := diagnose.Scan(context.Background(), cat, os.Args[1:], os.Stdin, diagnose.Options{})
	if err := diagnose.WriteJSON(os.Stdout, rep); err != nil {
		fmt.Fprintln(os.Stderr, "engine:", err)
		os.Exit(2)
	}
}
