package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
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
	"github.com/kubewin/kubewin/internal/release"
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
		userData    string
		udOpts      bootstrap.UserDataOptions
		releaseURL  string
	)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a bootstrap token (and what joining with it needs) and print the join command",
		Example: `  kubewin token create                       # 24 h, pool "default"
  kubewin token create --pool windows --ttl 2h
  kubewin token create --dry-run -o yaml      # the objects it would create, nothing written
  kubewin token create --ttl 168h --print-user-data all \
      --kubewin-url https://dl.example/kubewin --kubewin-sha256 HEX \
      --kubewin-url-windows https://dl.example/kubewin.exe --kubewin-sha256-windows HEX \
      --binaries https://dl.example/node-binaries > user-data.txt   # for an autoscaling group
  kubewin token create --print-user-data windows --binaries https://dl.example/node-binaries \
      --release-url https://github.com/kubewin/kubewin/releases/download/v0.1.0   # kubewin.exe of a release`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cliutil.ValidateFormat(output, "text", "json", "yaml"); err != nil {
				return err
			}
			if releaseURL != "" {
				if err := releaseDefaults(cmd, releaseURL, userData, &udOpts); err != nil {
					return err
				}
			}
			oses, err := userDataOSes(cmd, userData, output, udOpts)
			if err != nil {
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
			ud, err := makeUserData(tok, oses, udOpts)
			if err != nil {
				return err
			}
			if dryRun {
				if len(oses) > 0 && output == "text" {
					fmt.Fprintf(s.err, "dry run: nothing was created; token %s in the user-data does not exist in the cluster\n", tok.ID)
					return printUserData(s, oses, ud)
				}
				return printTokenObjects(s, tok, output, ud)
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
					userDataJSON
				}{tok, tok.JoinCommand(), changes, ud})
			}
			for _, ch := range changes {
				fmt.Fprintf(s.err, "%-8s %s\n", ch.Action, ch.Object)
			}
			if len(oses) > 0 {
				// stdout is the user-data alone, ready for a file or a pipe.
				fmt.Fprintf(s.err, "Token %s (pool %s) expires %s.\n", tok.ID, tok.Pool, tok.Expires.Format(time.RFC3339))
				return printUserData(s, oses, ud)
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
	f.StringVar(&userData, "print-user-data", "", "print cloud user-data (linux, windows or all) that joins a fresh machine with the token, instead of the join command; sizes to stderr")
	f.StringVar(&udOpts.KubewinURL, "kubewin-url", "", "with --print-user-data: http(s) URL the Linux node downloads kubewin from (default: kubewin is on the image, /usr/local/bin/kubewin)")
	f.StringVar(&udOpts.KubewinSHA256, "kubewin-sha256", "", "SHA-256 (hex) of the binary at --kubewin-url; the node checks it before running it")
	f.StringVar(&udOpts.KubewinURLWindows, "kubewin-url-windows", "", `with --print-user-data: http(s) URL the Windows node downloads kubewin.exe from (default: kubewin.exe is on the image, C:\kubewin\kubewin.exe)`)
	f.StringVar(&udOpts.KubewinSHA256Windows, "kubewin-sha256-windows", "", "SHA-256 (hex) of the binary at --kubewin-url-windows; the node checks it before running it")
	f.StringVar(&releaseURL, "release-url", "", "with --print-user-data: base URL of a kubewin release (hack/release.sh's directory, with SHA256SUMS); --kubewin-url(-windows) and --kubewin-sha256(-windows) default to its linux/amd64 and windows/amd64 binaries, checked against SHA256SUMS")
	f.StringVar(&udOpts.Binaries, "binaries", "", "with --print-user-data: passed to kubewin join --binaries (an absolute directory on the node, an https mirror URL, or official:kubernetes=V,containerd=V,cni=V for the projects' releases; see kubewin join --help)")
	return cmd
}

// userDataJSON is what --print-user-data adds to -o json.
type userDataJSON struct {
	UserData      map[string]string `json:"userData,omitempty"`
	UserDataBytes map[string]int    `json:"userDataBytes,omitempty"`
	UserDataLimit int               `json:"userDataLimitBytes,omitempty"`
}

// userDataOSes checks --print-user-data and its options before anything talks to the cluster
// and returns the operating systems to make user-data for (none without the flag).
func userDataOSes(cmd *cobra.Command, which, output string, o bootstrap.UserDataOptions) ([]string, error) {
	var oses []string
	switch which {
	case "":
		for _, name := range []string{"kubewin-url", "kubewin-sha256", "kubewin-url-windows", "kubewin-sha256-windows", "binaries", "release-url"} {
			if cmd.Flags().Changed(name) {
				return nil, cliutil.BadInputf("--%s is an option of --print-user-data, which is not set", name)
			}
		}
		return nil, nil
	case "linux", "windows":
		oses = []string{which}
	case "all":
		oses = []string{"linux", "windows"}
	default:
		return nil, cliutil.BadInputf("--print-user-data %q: expected linux, windows or all", which)
	}
	if output == "yaml" {
		return nil, cliutil.BadInputf("--print-user-data prints the user-data as text (-o text) or in -o json; -o yaml prints the objects only")
	}
	for _, nodeOS := range oses {
		if err := o.Validate(nodeOS); err != nil {
			return nil, cliutil.BadInput(err)
		}
	}
	return oses, nil
}

// releaseDownloadTimeout bounds the download of one release binary (a kubewin binary is tens
// of MB) when --release-url checks it.
const releaseDownloadTimeout = 5 * time.Minute

// releaseDefaults fills the kubewin download options of the user-data from the release at
// baseURL (release.FromRelease: its SHA256SUMS, each binary downloaded and checked), for the
// operating systems --print-user-data names; a URL given explicitly is kept. A checksum given
// explicitly must be the release's. Errors are the input's (exit 2): an entry missing from
// SHA256SUMS, a binary that does not match it, a release that cannot be read.
func releaseDefaults(cmd *cobra.Command, baseURL, which string, o *bootstrap.UserDataOptions) error {
	if which == "" {
		return cliutil.BadInputf("--release-url is an option of --print-user-data, which is not set")
	}
	if err := bootstrapURLCheck(baseURL); err != nil {
		return err
	}
	type dest struct {
		nodeOS           string
		url, sum         *string
		urlFlag, sumFlag string
	}
	var dests []dest
	if which == "linux" || which == "all" {
		dests = append(dests, dest{"linux", &o.KubewinURL, &o.KubewinSHA256, "kubewin-url", "kubewin-sha256"})
	}
	if which == "windows" || which == "all" {
		dests = append(dests, dest{"windows", &o.KubewinURLWindows, &o.KubewinSHA256Windows, "kubewin-url-windows", "kubewin-sha256-windows"})
	}
	client := &http.Client{Timeout: releaseDownloadTimeout}
	for _, d := range dests {
		if cmd.Flags().Changed(d.urlFlag) {
			continue
		}
		// Nodes are amd64: Windows Server containers hosts are, and the Linux user-data has no
		// architecture of its own; an arm64 Linux pool passes --kubewin-url.
		dl, err := release.FromRelease(cmd.Context(), client, baseURL, release.Target{OS: d.nodeOS, Arch: "amd64"})
		if err != nil {
			return cliutil.BadInputf("--release-url: %v", err)
		}
		if cmd.Flags().Changed(d.sumFlag) && !strings.EqualFold(*d.sum, dl.SHA256) {
			return cliutil.BadInputf("--%s %s is not the SHA-256 of %s, which the release lists as %s", d.sumFlag, *d.sum, dl.URL, dl.SHA256)
		}
		*d.url, *d.sum = dl.URL, dl.SHA256
	}
	return nil
}

// bootstrapURLCheck admits an http(s) URL with a host.
func bootstrapURLCheck(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cliutil.BadInputf("--release-url %q: expected an http:// or https:// URL with a host", s)
	}
	return nil
}

func makeUserData(tok *bootstrap.Token, oses []string, o bootstrap.UserDataOptions) (userDataJSON, error) {
	var ud userDataJSON
	for _, nodeOS := range oses {
		b, err := bootstrap.UserData(tok, nodeOS, o)
		if err != nil {
			return ud, cliutil.BadInput(err)
		}
		if ud.UserData == nil {
			ud.UserData, ud.UserDataBytes, ud.UserDataLimit = map[string]string{}, map[string]int{}, bootstrap.EC2UserDataLimit
		}
		ud.UserData[nodeOS], ud.UserDataBytes[nodeOS] = string(b), len(b)
	}
	return ud, nil
}

// printUserData writes the user-data to stdout (with more than one, each after a comment line
// naming it) and the sizes against EC2's limit to stderr.
func printUserData(s streams, oses []string, ud userDataJSON) error {
	for _, nodeOS := range oses {
		if len(oses) > 1 {
			fmt.Fprintf(s.out, "# user-data %s\n", nodeOS)
		}
		if _, err := io.WriteString(s.out, ud.UserData[nodeOS]); err != nil {
			return fmt.Errorf("print user-data %s: %w", nodeOS, err)
		}
	}
	for _, nodeOS := range oses {
		n := ud.UserDataBytes[nodeOS]
		over := ""
		if n > bootstrap.EC2UserDataLimit {
			over = "; over the limit, EC2 rejects it"
		}
		fmt.Fprintf(s.err, "user-data %s: %d bytes (%.1f %% of EC2's 16 KiB%s)\n", nodeOS, n, 100*float64(n)/bootstrap.EC2UserDataLimit, over)
		if nodeOS == "windows" {
			fmt.Fprintln(s.err, "note: kubewin join on Windows takes the upstream-tor and host-gw designs; flannel Windows nodes are joined with the bundle of kubewin plan")
		}
	}
	return nil
}

func printTokenObjects(s streams, tok *bootstrap.Token, output string, ud userDataJSON) error {
	if output == "json" {
		return json.NewEncoder(s.out).Encode(struct {
			Objects     any    `json:"objects"`
			JoinCommand string `json:"joinCommand"`
			userDataJSON
		}{tok.Objects, tok.JoinCommand(), ud})
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
