// Command gen writes the benchmark input for bench/diagnose/run.sh: a deterministic klog mix of
// the given size, and the literal set of the signature catalogue (one per line) for rg -F -f.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/kubewin/kubewin/bench/diagnose/mixgen"
	"github.com/kubewin/kubewin/internal/diagnose"
)

func main() {
	out := flag.String("out", "", "log file to write")
	lits := flag.String("literals", "", "file to write the prefilter literal set to")
	size := flag.Int64("size", 1<<30, "bytes of log to write")
	seed := flag.Int64("seed", 1, "generator seed")
	flag.Parse()
	if err := run(*out, *lits, *size, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(2)
	}
}

func run(out, lits string, size, seed int64) error {
	cat, err := diagnose.Compile(diagnose.DefaultSignatures())
	if err != nil {
		return err
	}
	if lits != "" {
		if err := os.WriteFile(lits, []byte(strings.Join(cat.Literals(), "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	if out == "" {
		return nil
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := mixgen.Write(f, size, seed, 256<<20); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", out, err)
	}
	return f.Close()
}
