package main

import (
	"io"

	"github.com/spf13/cobra"
)

// streams are the standard streams a command writes to; commands never touch os.Std* directly.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	s := streams{in: stdin, out: stdout, err: stderr}
	root := &cobra.Command{
		Use:   "kubewin",
		Short: "Plan, render, check and operate Windows and Linux nodes of a mixed Kubernetes cluster",
		Long: `kubewin turns a description of an existing cluster (Linux control plane and CNI) into
everything a Windows or Linux node and its gateways need: it plans pod CIDRs, gateways and
routes, renders every file, checks configurations against known failures, verifies the data path,
diagnoses logs, and keeps gateway VIPs alive.

Exit codes: 0 success, 1 findings or failures, 2 bad input or usage.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		newVersionCmd(s),
		newExampleCmd(s),
		newPlanCmd(s),
		newCheckCmd(s),
		newDiagnoseCmd(s),
		newVerifyCmd(s),
		newDiscoverCmd(s),
		newGatewayCmd(s),
		newReportCmd(s),
		newTokenCmd(s),
		newPublishCmd(s),
		newJoinCmd(s),
		newMirrorCmd(s),
		newNodeCmd(s),
		newStatusCmd(s),
		newRolloutCmd(s),
	)
	return root
}
