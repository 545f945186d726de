// Command drain measures the Drain miner's grouping accuracy on LogPAI's loghub ground truth with
// logparser's benchmark settings and kubewin's defaults, printing the table bench/README.md and
// internal/diagnose/drain/README.md quote. Exit 1 when a dataset falls under its floor (a few
// points under logparser's published Drain figure), 2 on bad usage.
//
// Usage: go run ./bench/drain -loghub DIR   (DIR: a checkout of github.com/logpai/loghub)
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/kubewin/kubewin/internal/diagnose/drain"
	"github.com/kubewin/kubewin/internal/diagnose/drain/loghub"
)

func main() {
	dir := flag.String("loghub", "", "directory of a loghub checkout (<dir>/<System>/<System>_2k.log_structured.csv)")
	flag.Parse()
	if *dir == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: drain -loghub DIR")
		os.Exit(2)
	}
	failed := false
	fmt.Printf("%-12s %9s %9s %9s %14s %15s %9s\n", "dataset", "published", "floor", "measured", "+kubewin masks", "kubewin default", "templates")
	for _, s := range loghub.Settings() {
		msgs, err := loghub.ReadStructured(filepath.Join(*dir, s.Name, s.Name+"_2k.log_structured.csv"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", s.Name, err)
			os.Exit(2)
		}
		truth := make([]string, len(msgs))
		for i, x := range msgs {
			truth[i] = x.Event
		}
		masks := make([]drain.Mask, len(s.Regex))
		for i, r := range s.Regex {
			masks[i] = drain.Mask{Re: regexp.MustCompile(r), Replacement: drain.Param}
		}
		bench := drain.Config{Depth: s.Depth, SimThreshold: s.ST, Masks: masks, NoBuiltinMasks: true}
		parsed := loghub.Mine(bench, msgs)
		ga := loghub.GroupingAccuracy(truth, parsed)
		withBuiltin := bench
		withBuiltin.NoBuiltinMasks = false
		gaBuiltin := loghub.GroupingAccuracy(truth, loghub.Mine(withBuiltin, msgs))
		gaDefault := loghub.GroupingAccuracy(truth, loghub.Mine(drain.Config{}, msgs))
		distinct := map[string]bool{}
		for _, p := range parsed {
			distinct[p] = true
		}
		fmt.Printf("%-12s %9.4f %9.4f %9.4f %14.4f %15.4f %9d\n", s.Name, s.Published, s.Floor, ga, gaBuiltin, gaDefault, len(distinct))
		if ga < s.Floor || gaDefault < s.DefaultFloor {
			fmt.Printf("  %s: below its floor (%.4f, defaults %.4f)\n", s.Name, s.Floor, s.DefaultFloor)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}
