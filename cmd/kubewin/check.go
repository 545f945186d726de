package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/check/rules"
	"github.com/kubewin/kubewin/internal/cliutil"
)

func newCheckCmd(s streams) *cobra.Command {
	var (
		specFile, version, output, severity, explain string
		example, list                                bool
		kubeletFlags, proxyFlags, manifests, ignore  []string
	)
	cmd := &cobra.Command{
		Use:   "check [FILE|DIR]...",
		Short: "Check a cluster spec, its plan, node configs and manifests against known Windows/Linux failures",
		Long: `check runs kubewin's rule catalogue (kubewin check --list) over any combination of:

  - the cluster spec (-f cluster.yaml, or --example) and the plan kubewin derives from it;
  - node configuration given as FILE or DIR arguments and recognised by content: kubelet and
    kube-proxy command lines (scripts such as kubeletstart.ps1, nssm AppParameters, sc create
    lines, or files holding just the flags), CNI .conf/.conflist, KubeletConfiguration and
    KubeProxyConfiguration files, containerd config.toml, keepalived.conf, flannel
    net-conf.json, kubeconfigs, Docker daemon.json and sysctl files;
  - command lines given inline with --kubelet-flags / --kube-proxy-flags;
  - workload manifests with --manifests (files or directories; multi-document YAML, JSON, Lists).

A directory kubewin plan wrote (plan.json at its root) can be given as it is: its configuration
is checked, and kubewin's own files that hold nothing to check (plan.json, node READMEs, the HNS
and firewall scripts, the pause Dockerfile, route tables) are skipped and counted. Any other file
that is not recognised is reported (KW0002).

The operating system of a command line is taken only from evidence: its text (an .exe, a
Windows path, an npipe endpoint, nssm/sc, a PowerShell or cmd script; a unix:// endpoint or
Linux paths), the spec's node, or sibling inputs in the same directory. Without evidence it is
judged as for Windows, but rules about Windows defaults then report info only (--explain
context shows the evidence). The target Kubernetes release is
--kubernetes-version, else the spec's, else the newest supported.

Exit codes: 0 nothing at or above --severity, 1 findings at or above it, 2 bad input (an
unreadable path, an invalid cluster spec, bad flags).`,
		Example: `  kubewin check --example
  kubewin check -f cluster.yaml --manifests deploy/
  kubewin check C:\k\kubeletstart.ps1 C:\k\cni\config\l2bridge.conf /etc/keepalived/keepalived.conf
  kubewin check --kubelet-flags "c:/k/kubelet.exe --resolv-conf= --cluster-dns=10.176.0.10" -o sarif
  kubewin check --explain KW1103
  kubewin check --explain context /etc/kubernetes/kubeadm-flags.env`,
		RunE: func(cmd *cobra.Command, args []string) error {
			catalogue := rules.All()
			if err := check.ValidateCatalogue(catalogue); err != nil {
				return fmt.Errorf("rule catalogue: %w", err)
			}
			if err := cliutil.ValidateFormat(output, "text", "json", "sarif"); err != nil {
				return err
			}
			if list {
				switch output {
				case "json":
					return check.WriteListJSON(s.out, catalogue)
				case "sarif":
					return check.WriteRulesSARIF(s.out, catalogue)
				}
				return check.WriteList(s.out, catalogue)
			}
			if explain == "context" {
				// the context kubewin inferred for each input, with its evidence
				in := check.Input{SpecFile: specFile, UseExample: example, KubernetesVersion: version,
					KubeletFlags: kubeletFlags, KubeProxyFlags: proxyFlags, Files: args, Manifests: manifests}
				ctx, _, err := check.Load(in)
				if err != nil {
					return cliutil.BadInput(err)
				}
				if output == "json" {
					rel, from, inputs := check.ContextOf(ctx)
					enc := json.NewEncoder(s.out)
					enc.SetIndent("", "  ")
					return enc.Encode(map[string]any{"kubernetesVersion": rel, "kubernetesVersionFrom": from, "inputs": inputs})
				}
				return check.WriteContext(s.out, ctx)
			}
			if explain != "" {
				r, ok := check.FindRule(catalogue, explain)
				if !ok {
					return cliutil.BadInputf("--explain: unknown rule %q (see kubewin check --list)", explain)
				}
				switch output {
				case "json":
					return check.WriteExplainJSON(s.out, r)
				case "sarif":
					return check.WriteRulesSARIF(s.out, []check.Rule{r})
				}
				return check.WriteExplain(s.out, r)
			}
			threshold, err := check.ParseSeverity(severity)
			if err != nil {
				return cliutil.BadInputf("--severity: %v", err)
			}
			ign, err := check.ParseIgnore(ignore, catalogue)
			if err != nil {
				return cliutil.BadInput(err)
			}
			if specFile != "" && example {
				return cliutil.BadInputf("-f and --example are mutually exclusive")
			}
			in := check.Input{SpecFile: specFile, UseExample: example, KubernetesVersion: version,
				KubeletFlags: kubeletFlags, KubeProxyFlags: proxyFlags, Files: args, Manifests: manifests}
			if specFile == "" && !example && len(args) == 0 && len(kubeletFlags) == 0 && len(proxyFlags) == 0 && len(manifests) == 0 {
				return cliutil.BadInputf("nothing to check: give -f, --example, files, --kubelet-flags, --kube-proxy-flags or --manifests")
			}
			ctx, specBad, err := check.Load(in)
			if err != nil {
				// Unreadable paths and bad versions (check.ErrBadInput) and anything else that
				// stops Load before a report exists are exit 2.
				return cliutil.BadInput(err)
			}
			rep := check.Run(ctx, catalogue, check.Options{Ignore: ign, Threshold: threshold})
			switch output {
			case "json":
				err = check.WriteJSON(s.out, rep)
			case "sarif":
				err = check.WriteSARIF(s.out, rep)
			default:
				err = check.WriteText(s.out, rep, isTerminal(s.out))
			}
			if err != nil {
				return err
			}
			if specBad {
				return &cliutil.ExitError{Code: cliutil.ExitBadInput, Err: fmt.Errorf("the cluster spec %s is invalid (see KW0004 above)", ctx.SpecFile)}
			}
			if rep.Failed {
				return cliutil.Findings()
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&specFile, "file", "f", "", "cluster spec (kubewin.io/v1alpha1 Cluster)")
	f.BoolVar(&example, "example", false, "check the embedded example cluster (kubewin example)")
	f.StringVar(&version, "kubernetes-version", "", "target Kubernetes release, e.g. 1.37 (default: the spec's, else the newest supported)")
	f.StringArrayVar(&kubeletFlags, "kubelet-flags", nil, "a kubelet command line to check (repeatable)")
	f.StringArrayVar(&proxyFlags, "kube-proxy-flags", nil, "a kube-proxy command line to check (repeatable)")
	f.StringArrayVar(&manifests, "manifests", nil, "workload manifest file or directory (repeatable)")
	f.StringVarP(&output, "output", "o", "text", "output format: text, json or sarif")
	f.StringSliceVar(&ignore, "ignore", nil, "rule IDs to downgrade to info (comma-separated, repeatable)")
	f.StringVar(&severity, "severity", "warning", "lowest severity that fails the run: info, warning or error")
	f.BoolVar(&list, "list", false, "print the rule catalogue (-o json: an array of rules; -o sarif: the rules as a SARIF tool, no results)")
	f.StringVar(&explain, "explain", "", "print one rule in full (-o json: one object; -o sarif: a SARIF tool with that rule); 'context' prints, for the given inputs, the target release and each input's OS with the evidence it was inferred from")
	return cmd
}

// isTerminal reports whether w is a terminal, for colour; NO_COLOR turns colour off.
func isTerminal(w any) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
