package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/bootstrap"
	"github.com/kubewin/kubewin/internal/cliutil"
)

func newTokenCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Bootstrap tokens with which nodes join (kubewin join): create, list, delete",
		Long: `A bootstrap token lets a new node join without admin credentials: the node pins the cluster CA
(--ca-cert-hash), reads the signed cluster-info, and its kubelet asks for its own client
certificate with the token (TLS bootstrap). The token's identity may create and get its
certificate signing requests approved and nothing else — no Secrets, no Nodes.

The Secret has kubeadm's format (kube-system/bootstrap-token-<id>), so kubeadm clusters and
clusters made otherwise work the same; the API server needs --enable-bootstrap-token-auth
(kubeadm sets it).`,
	}
	cmd.AddCommand(newTokenCreateCmd(s), newTokenListCmd(s), newTokenDeleteCmd(s))
	return cmd
}

func tokenClient(access clusterAccess) (*rest.Config, kubernetes.Interface, error) {
	cfg, _, err := access.load()
	if err != nil {
		return nil, nil, err
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, cliutil.BadInputf("kubernetes client: %v", err)
	}
	return cfg, c, nil
}

// clusterCA is the CA joining nodes pin: the kubeconfig's certificate-authority(-data).
func clusterCA(cfg *rest.Config) ([]byte, error) {
	if len(cfg.TLSClientConfig.CAData) > 0 {
		return cfg.TLSClientConfig.CAData, nil
	}
	if cfg.TLSClientConfig.CAFile != "" {
		b, err := os.ReadFile(cfg.TLSClientConfig.CAFile)
		if err != nil {
			return nil, cliutil.BadInputf("read the cluster CA: %v", err)
		}
		return b, nil
	}
	return nil, cliutil.BadInputf("the kubeconfig names no certificate authority; joining nodes need the cluster CA to pin (set certificate-authority-data)")
}

func newTokenCreateCmd(s streams) *cobra.Command {
	var (
		access      clusterAccess
		o           bootstrap.TokenOptions
		dryRun      bool
		output      string
		server      string
		description string
	)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a bootstrap token (and what joining with it needs) and print the join command",
		Example: `  kubewin token create                       # 24 h, pool "default"
  kubewin token create --pool windows --ttl 2h
  kubewin token create --dry-run -o yaml      # the objects it would create, nothing written`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cliutil.ValidateFormat(output, "text", "json", "yaml"); err != nil {
				return err
			}
			cfg, c, err := tokenClient(access)
			if err != nil {
				return err
			}
			ca, err := clusterCA(cfg)
			if err != nil {
				return err
			}
			if server == "" {
				server = cfg.Host
			}
			o.Description = description
			tok, err := bootstrap.NewToken(server, ca, o, time.Now())
			if err != nil {
				return cliutil.BadInput(err)
			}
			if dryRun {
				return printTokenObjects(s, tok, output)
			}
			changes, err := bootstrap.Apply(cmd.Context(), c, tok)
			if err != nil {
				return fmt.Errorf("create token: %w", err)
			}
			if output == "json" {
				return json.NewEncoder(s.out).Encode(struct {
					*bootstrap.Token
					JoinCommand string             `json:"joinCommand"`
					Changes     []bootstrap.Change `json:"changes"`
				}{tok, tok.JoinCommand(), changes})
			}
			for _, ch := range changes {
				fmt.Fprintf(s.err, "%-8s %s\n", ch.Action, ch.Object)
			}
			fmt.Fprintf(s.out, "Token %s (pool %s) expires %s. On the node:\n\n  %s\n", tok.ID, tok.Pool, tok.Expires.Format(time.RFC3339), tok.JoinCommand())
			return nil
		},
	}
	f := cmd.Flags()
	access.addFlags(f)
	f.StringVar(&o.Pool, "pool", "default", "node pool the token is for (its extra group system:bootstrappers:kubewin:<pool>)")
	f.DurationVar(&o.TTL, "ttl", bootstrap.DefaultTTL, "lifetime of the token")
	f.StringVar(&description, "description", "", "description stored with the token")
	f.StringVar(&server, "server", "", "API server URL nodes use (default: the kubeconfig's)")
	f.BoolVar(&dryRun, "dry-run", false, "print the objects and the join command; create nothing")
	f.StringVarP(&output, "output", "o", "text", "output format: text, json or yaml (yaml: with --dry-run, the objects)")
	return cmd
}

func printTokenObjects(s streams, tok *bootstrap.Token, output string) error {
	if output == "json" {
		return json.NewEncoder(s.out).Encode(struct {
			Objects     any    `json:"objects"`
			JoinCommand string `json:"joinCommand"`
		}{tok.Objects, tok.JoinCommand()})
	}
	if err := printYAMLObjects(s, tok.Objects); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "# join command (nothing was created): %s\n", tok.JoinCommand())
	return nil
}

// printYAMLObjects writes objects as one YAML stream (--dry-run -o yaml).
func printYAMLObjects(s streams, objs []runtime.Object) error {
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return fmt.Errorf("print %T: %w", o, err)
		}
		if i > 0 {
			fmt.Fprintln(s.out, "---")
		}
		s.out.Write(b)
	}
	return nil
}

func newTokenListCmd(s streams) *cobra.Command {
	var (
		access clusterAccess
		output string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List bootstrap tokens (their secret parts are not shown)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cliutil.ValidateFormat(output, "text", "json"); err != nil {
				return err
			}
			_, c, err := tokenClient(access)
			if err != nil {
				return err
			}
			list, err := bootstrap.List(cmd.Context(), c, time.Now())
			if err != nil {
				return err
			}
			if output == "json" {
				if list == nil {
					list = []bootstrap.Listed{}
				}
				return json.NewEncoder(s.out).Encode(list)
			}
			tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tPOOL\tEXPIRES\tDESCRIPTION")
			for _, l := range list {
				exp := l.Expires.Format(time.RFC3339)
				if l.Expired {
					exp += " (expired)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.ID, l.Pool, exp, l.Description)
			}
			return tw.Flush()
		},
	}
	access.addFlags(cmd.Flags())
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

func newTokenDeleteCmd(s streams) *cobra.Command {
	var access clusterAccess
	cmd := &cobra.Command{
		Use:   "delete ID|TOKEN...",
		Short: "Delete bootstrap tokens (and their cluster-info signatures)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, c, err := tokenClient(access)
			if err != nil {
				return err
			}
			for _, a := range args {
				id, _, _ := strings.Cut(a, ".")
				if err := bootstrap.Delete(cmd.Context(), c, id); err != nil {
					return cliutil.BadInput(err)
				}
				fmt.Fprintf(s.out, "deleted token %s\n", id)
			}
			return nil
		},
	}
	access.addFlags(cmd.Flags())
	return cmd
}
