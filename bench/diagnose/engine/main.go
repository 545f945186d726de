// Command engine runs the diagnose engine (internal/diagnose) behind a minimal main, without
// the rest of the kubewin CLI. run.sh measures it next to `kubewin diagnose` to separate the
// engine's memory from the baseline of the full CLI binary, whose other commands link large
// Kubernetes libraries that are paged in at start-up whatever the command.
//
// -sources loads the source message index after the scan (diagnose.Options.LoadSources); -heap
// prints the live heap after loading the catalogue and the index (so the index's share of the
// memory can be read); -cpuprofile writes a CPU profile of the scan.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/kubewin/kubewin/internal/diagnose"
	"github.com/kubewin/kubewin/internal/diagnose/srcmsg"
)

func main() {
	sources := flag.Bool("sources", false, "load the source message index (as kubewin diagnose does)")
	heap := flag.Bool("heap", false, "print the live heap after loading the catalogue and the index to stderr")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the scan to this file")
	workers := flag.Int("workers", 0, "chunks scanned in parallel (0: default)")
	flag.Parse()
	if err := run(flag.Args(), *sources, *heap, *cpuprofile, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "engine:", err)
		os.Exit(2)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func run(inputs []string, sources, heap bool, cpuprofile string, workers int) error {
	base := uint64(0)
	if heap {
		base = liveHeap()
	}
	cat, err := diagnose.DefaultCatalogue()
	if err != nil {
		return err
	}
	opt := diagnose.Options{Workers: workers}
	if heap {
		h := liveHeap()
		fmt.Fprintf(os.Stderr, "live heap: %.1f MiB at start, catalogue +%.1f MiB\n", mib(base), mib(h-base))
		base = h
	}
	if sources {
		// Loaded after the scan (Options.LoadSources), as the heap report below measures it.
		opt.LoadSources = func() *srcmsg.Index {
			ix, lerr := srcmsg.Load()
			if lerr != nil {
				err = lerr
				return nil
			}
			if heap {
				fmt.Fprintf(os.Stderr, "live heap: source index +%.1f MiB after the scan\n", mib(liveHeap()-base))
			}
			return ix
		}
	}
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	rep := diagnose.Scan(context.Background(), cat, inputs, os.Stdin, opt)
	if err != nil {
		return err
	}
	return diagnose.WriteJSON(os.Stdout, rep)
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
