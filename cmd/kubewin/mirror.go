package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/binaries"
	"github.com/kubewin/kubewin/internal/cliutil"
)

// mirrorOptions are the inputs of kubewin mirror.
type mirrorOptions struct {
	official binaries.Official
	oses     []string
	arch     string
	output   string
	dir      string
}

func newMirrorCmd(s streams) *cobra.Command {
	var o mirrorOptions
	cmd := &cobra.Command{
		Use:   "mirror --kubernetes V --containerd V --cni V [--os linux,windows] [--arch amd64] DIR",
		Short: "Build an offline mirror of the node binaries from the projects' official releases",
		Long: `mirror downloads the node binaries from where each project publishes them, checks every
download against the checksums published beside it, and writes DIR as a mirror that
kubewin join --binaries reads (a directory on the node, or DIR served over https):

  Kubernetes   <kubernetes-release-url>/<version>/bin/<os>/<arch>/{kubelet,kube-proxy,kube-log-runner}[.exe]
               checked against the .sha256 and .sha512 beside each
  containerd   <containerd-release-url>/v<version>/containerd-<version>-<os>-<arch>.tar.gz
               checked against its .sha256sum; the programs of its bin/
  CNI plugins  <cni-release-url>/v<version>/cni-plugins-<os>-<arch>-v<version>.tgz
               checked against its .sha256 and .sha512; the plugins, as cni/<plugin>

DIR then holds the programs (Linux and Windows names differ by .exe), SHA256SUMS (sha256sum's
format) and SOURCES (where each file came from and what it was checked against). The same
versions make the same bytes. DIR is assembled beside itself and renamed into place when
complete: a failed run leaves it as it was. An existing DIR is replaced only if it is empty or a
mirror. One architecture per mirror: build one DIR per architecture.

Nodes can also read the official releases directly, without a mirror:
  kubewin join … --binaries official:kubernetes=V,containerd=V,cni=V

Exit codes: 0 written, 1 a download failed or did not match its checksum, 2 bad input or a
version the host does not publish.`,
		Example: `  kubewin mirror --kubernetes v1.33.1 --containerd 2.1.4 --cni 1.7.1 --os linux,windows /srv/kubewin-node
  kubewin mirror --kubernetes v1.33.1 --containerd 2.1.4 --cni 1.7.1 --arch arm64 /srv/kubewin-node-arm64
  kubewin mirror --kubernetes v1.33.1 --kubernetes-release-url https://artifacts.example/dl.k8s.io/release ./k8s-only`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.dir = args[0]
			return runMirror(cmd.Context(), s, o, nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.official.Kubernetes, "kubernetes", "", "Kubernetes version (v1.33.1) of kubelet, kube-proxy and kube-log-runner; empty: none")
	f.StringVar(&o.official.Containerd, "containerd", "", "containerd version (2.1.4) of its release archive; empty: none")
	f.StringVar(&o.official.CNI, "cni", "", "CNI plugins version (1.7.1) of their release archive; empty: none")
	f.StringSliceVar(&o.oses, "os", []string{"linux", "windows"}, "operating systems: linux, windows or both")
	f.StringVar(&o.arch, "arch", "amd64", "architecture (Go name: amd64, arm64); Windows archives are published for amd64 only")
	f.StringVar(&o.official.KubernetesURL, "kubernetes-release-url", binaries.DefaultKubernetesURL, "https base URL of Kubernetes' release layout (a copy of it on a company host)")
	f.StringVar(&o.official.ContainerdURL, "containerd-release-url", binaries.DefaultContainerdURL, "https base URL of containerd's release downloads")
	f.StringVar(&o.official.CNIURL, "cni-release-url", binaries.DefaultCNIURL, "https base URL of the CNI plugins' release downloads")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	return cmd
}

// runMirror builds the mirror; client nil is binaries.DefaultClient (tests pass their server's).
func runMirror(ctx context.Context, s streams, o mirrorOptions, client *http.Client) error {
	if err := cliutil.ValidateFormat(o.output, "text", "json"); err != nil {
		return err
	}
	req := binaries.Request{Official: o.official, OSes: o.oses, Arch: o.arch, Client: client}
	if err := req.Check(o.dir); err != nil {
		return cliutil.BadInput(err)
	}
	files, err := binaries.Build(ctx, req, o.dir)
	switch {
	case errors.Is(err, binaries.ErrNotFound):
		return cliutil.BadInput(err)
	case err != nil:
		return &cliutil.ExitError{Code: cliutil.ExitFindings, Err: err}
	}
	if o.output == "json" {
		return json.NewEncoder(s.out).Encode(struct {
			Dir   string          `json:"dir"`
			Files []binaries.File `json:"files"`
		}{o.dir, files})
	}
	for _, f := range files {
		fmt.Fprintf(s.out, "%s  %s\n", f.SHA256, f.Name)
	}
	fmt.Fprintf(s.err, "mirror %s: %s checked against the published checksums, listed in %s; join with --binaries %s (or its https URL)\n",
		o.dir, cliutil.Plural(len(files), "file"), binaries.SumsFile, strings.TrimSuffix(o.dir, "/"))
	return nil
}
