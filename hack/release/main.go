// Command release builds a kubewin release into a directory: the binaries, archives, SBOM and
// krew manifest (internal/release), the gateway image (internal/release/gatewayimage) and
// SHA256SUMS over all of them. hack/release.sh runs it:
//
//	hack/release.sh v0.1.0 [OUTDIR]
//
// The commit and its time come from git (HEAD); every timestamp in the output is the commit's,
// so building the same commit again gives the same bytes.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubewin/kubewin/internal/release"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		targets  = flag.String("targets", "linux/amd64,linux/arm64,windows/amd64,windows/arm64", "comma-separated os/arch list")
		baseURL  = flag.String("base-url", "", "where the release is published (default "+release.Homepage+"/releases/download/VERSION)")
		imageRef = flag.String("image", "", "the gateway image's name in the archive (default ghcr.io/kubewin/kubewin-gateway:VERSION)")
		noImage  = flag.Bool("no-image", false, "skip the gateway image")
	)
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: release [flags] VERSION [OUTDIR]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 1 || flag.NArg() > 2 {
		flag.Usage()
		os.Exit(2)
	}
	version := flag.Arg(0)
	out := filepath.Join("_release", version)
	if flag.NArg() == 2 {
		out = flag.Arg(1)
	}
	if *baseURL == "" {
		*baseURL = release.Homepage + "/releases/download/" + version
	}
	if *imageRef == "" {
		*imageRef = "ghcr.io/kubewin/kubewin-gateway:" + version
	}
	var ts []release.Target
	for _, s := range strings.Split(*targets, ",") {
		osName, arch, ok := strings.Cut(strings.TrimSpace(s), "/")
		if !ok {
			return fmt.Errorf("target %q: want os/arch", s)
		}
		ts = append(ts, release.Target{OS: osName, Arch: arch})
	}
	ctx := context.Background()
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	began := time.Now()
	res, err := Build(ctx, Config{
		Options: release.Options{Version: version, ModuleDir: wd, OutDir: out, Targets: ts, BaseURL: *baseURL, Log: os.Stderr},
		Image:   !*noImage, ImageRef: *imageRef,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "release %s (commit %s) in %s, %s\n", version, res.Commit, out, time.Since(began).Round(time.Second))
	if res.Image != nil {
		fmt.Fprintf(os.Stderr, "gateway image %s@%s\n", *imageRef, res.Image.Digest)
	}
	return nil
}
