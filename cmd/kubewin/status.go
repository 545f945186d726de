package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/nodestatus"
)

func newStatusCmd(s streams) *cobra.Command {
	var (
		access clusterAccess
		output string
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Every node's kubewin health as its node service published it: stage, services, diagnosed cause",
		Long: `status lists the Nodes with the condition their kubewin node service publishes
(` + nodestatus.ConditionType + `): healthy or not, the reason (Joining, JoinFailed, ServiceWaiting,
ServiceFailing, ServicesRunning) and the message — for a failing service, the cause and fix kubewin
diagnose found in its recent log, read on the node so nobody has to log in to it — and the node
service's last repair (its newest Repaired Event: what it put back after a reboot). Nodes without
the condition were not joined by kubewin and are listed as unmanaged. ROLLOUT is where
kubewin rollout left the node (its rollout.kubewin.io/ annotations): the phase and the revision
it runs; a node where the rollout halted (RolledBack after a failed gate, or Failed) shows why.

Exit codes: 0 every managed node healthy and Ready and no rollout halted, 1 otherwise, 2 bad
input or the API server unreachable.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cliutil.ValidateFormat(output, "text", "json"); err != nil {
				return err
			}
			_, client, err := tokenClient(access)
			if err != nil {
				return err
			}
			nodes, err := nodestatus.List(cmd.Context(), client)
			if err != nil {
				return cliutil.BadInput(err)
			}
			ok := true
			for _, n := range nodes {
				ok = ok && n.OK()
			}
			if output == "json" {
				if err := json.NewEncoder(s.out).Encode(struct {
					Nodes []nodestatus.NodeHealth `json:"nodes"`
				}{nodes}); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NODE\tREADY\tKUBEWIN\tREASON\tSINCE\tLAST REPAIR\tROLLOUT\tMESSAGE")
				for _, n := range nodes {
					health, reason, since, msg := "unmanaged", "-", "-", n.ReadyMessage
					if n.Managed {
						health, reason, msg = "unhealthy", n.Reason, n.Message
						if n.Healthy {
							health = "healthy"
						}
						since = n.Since.UTC().Format(time.RFC3339)
					}
					repair := "-"
					if n.LastRepairAt != nil {
						repair = n.LastRepairAt.UTC().Format(time.RFC3339)
					}
					rollout := "-"
					if r := n.Rollout; r != nil {
						rollout = rolloutColumn(r)
						if r.Halted() {
							msg = strings.TrimSpace(fmt.Sprintf("rollout %s halted here: %s. %s", r.Rollout, rolloutWhy(r), msg))
						}
					}
					fmt.Fprintf(tw, "%s\t%t\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Node, n.Ready, health, reason, since, repair, rollout, msg)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			if !ok {
				return cliutil.Findings()
			}
			return nil
		},
	}
	access.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// rolloutColumn is the orchestrator's phase with the revision the node runs ("Succeeded
// v1.37.1", "RolledBack v1.37.0"); the node service's phase where the orchestrator has none.
func rolloutColumn(r *nodestatus.RolloutState) string {
	phase := r.Phase
	if phase == "" {
		phase = "node:" + r.NodePhase
	}
	if r.Current != "" {
		return phase + " " + r.Current
	}
	return phase
}

// rolloutWhy is the orchestrator's reason (the failed gate), with the node service's when it
// adds something (the exit of the service that did not start).
func rolloutWhy(r *nodestatus.RolloutState) string {
	why := r.Reason
	if r.NodeReason != "" && !strings.Contains(why, r.NodeReason) {
		if why != "" {
			why += "; "
		}
		why += "node: " + r.NodeReason
	}
	if why == "" {
		why = "no reason recorded"
	}
	return why
}
