package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/diagnose"
	"github.com/kubewin/kubewin/internal/diagnose/srcmsg"
)

// diagnoseMemoryLimit is the soft Go memory limit of a diagnose run (see RunE).
const diagnoseMemoryLimit = 24 << 20

func newDiagnoseCmd(s streams) *cobra.Command {
	var (
		output  string
		workers int
		list    bool
	)
	cmd := &cobra.Command{
		Use:   "diagnose [flags] PATH|- ...",
		Short: "Find known failures in node logs and say why they happen and how to fix them",
		Long: `diagnose scans kubelet, kube-proxy, containerd, flanneld, CNI and nssm service logs, Windows
event-log text exports and kubectl describe/events output for known failures, and prints for each
the count, first and last time, where it was seen, a decoded sample line, the cause and the fix.

Inputs are files, directories (recursive), .zip / .tar.gz / .gz bundles (such as collectlogs.ps1
output) and - for standard input. Content decides, not the file name. UTF-16 and GBK/GB18030 text
is decoded; Go-escaped bytes inside quoted klog strings (\xce\u07b7...) are shown as the text they
were. Error lines (klog E/F) that no signature explains are grouped and counted.

Exit codes: 0 nothing of severity error, 1 an error-severity failure was found, 2 an input could
not be read (everything readable is still analysed and reported) or bad usage.`,
		Example: `  kubewin diagnose C:\k\logs
  kubewin diagnose -o json node009-logs.zip kubelet.log.1.gz
  kubectl describe pod iis-0 | kubewin diagnose -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if list {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.MinimumNArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cliutil.ValidateFormat(output, "text", "json"); err != nil {
				return err
			}
			// The scan streams: its live heap is bounded by the chunk buffers, the shared
			// prefilter trie and the caps on distinct keys (~16 MB), whatever the input size.
			// Left alone, the GC lets the heap grow to twice the live size; a soft limit keeps a
			// multi-GiB diagnose near 54 MiB RSS instead of 61-69 MiB at no measurable CPU cost
			// (bench/README.md, diagnose). An explicit GOMEMLIMIT wins.
			if os.Getenv("GOMEMLIMIT") == "" {
				defer debug.SetMemoryLimit(debug.SetMemoryLimit(diagnoseMemoryLimit))
			}
			cat, err := diagnose.DefaultCatalogue()
			if err != nil {
				return fmt.Errorf("signature catalogue: %w", err)
			}
			if list {
				if output == "json" {
					err = diagnose.WriteCatalogueJSON(s.out, cat)
				} else {
					err = diagnose.WriteCatalogueText(s.out, cat)
				}
				if err != nil {
					return fmt.Errorf("write catalogue: %w", err)
				}
				return nil
			}
			// The message index of the components' sources names the code that printed
			// a line no signature knows; without it the scan still shows every error line.
			// It is loaded after the scan, when the chunk buffers are gone: the index (~21
			// MiB live) and the scan are never resident together, and the soft memory limit
			// above does not make the GC run through the whole scan.
			opt := diagnose.Options{Workers: workers, LoadSources: func() *srcmsg.Index {
				ix, err := srcmsg.Load()
				if err != nil {
					fmt.Fprintf(s.err, "kubewin diagnose: source index unavailable, lines are not matched to their source: %v\n", err)
				}
				return ix
			}}
			if f, ok := s.err.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				opt.Progress = s.err
			}
			rep := diagnose.Scan(cmd.Context(), cat, args, s.in, opt)
			if output == "json" {
				err = diagnose.WriteJSON(s.out, rep)
			} else {
				err = diagnose.WriteText(s.out, rep)
			}
			if err != nil {
				return fmt.Errorf("write report: %w", err)
			}
			switch {
			case len(rep.Errors) > 0:
				return cliutil.BadInputf("%s could not be read completely (listed in the report; everything else was analysed)",
					cliutil.Plural(len(rep.Errors), "input"))
			case rep.HasErrorFindings():
				return cliutil.Findings()
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	cmd.Flags().IntVar(&workers, "workers", 0, "chunks scanned in parallel (0: number of CPUs, at most 4)")
	cmd.Flags().BoolVar(&list, "list-signatures", false, "print the signature catalogue instead of scanning")
	return cmd
}
