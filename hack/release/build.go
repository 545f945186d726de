package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kubewin/kubewin/internal/release"
	"github.com/kubewin/kubewin/internal/release/gatewayimage"
)

// Config is a release build: Options without the commit (taken from git), and the image.
type Config struct {
	release.Options
	Image    bool
	ImageRef string
}

// Built is what Build made.
type Built struct {
	Commit string
	Files  *release.Result
	Image  *gatewayimage.Result
	Sums   map[string]string
	// Took is the wall time of each step.
	Took map[string]time.Duration
}

// Build runs a whole release build: binaries, archives, SBOM, krew manifest, the gateway image
// (from the linux binaries) and SHA256SUMS.
func Build(ctx context.Context, c Config) (*Built, error) {
	b := &Built{Took: map[string]time.Duration{}}
	if c.Commit == "" {
		commit, when, err := release.GitCommit(ctx, c.ModuleDir)
		if err != nil {
			return nil, err
		}
		c.Commit, c.CommitTime = commit, when
	}
	if ct := os.Getenv("SOURCE_DATE_EPOCH"); ct != "" {
		var sec int64
		if _, err := fmt.Sscan(ct, &sec); err != nil {
			return nil, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", ct, err)
		}
		c.CommitTime = time.Unix(sec, 0).UTC()
	}
	b.Commit = c.Commit
	start := time.Now()
	res, err := release.Build(ctx, c.Options)
	if err != nil {
		return nil, err
	}
	b.Files, b.Took["binaries"] = res, time.Since(start)
	if c.Image {
		start = time.Now()
		kw := map[string]string{}
		for t, bin := range res.Binaries {
			if t.OS == "linux" && (t.Arch == "amd64" || t.Arch == "arm64") {
				kw[t.Arch] = bin
			}
		}
		aptDir, err := gatewayimage.DefaultAptDir()
		if err != nil {
			return nil, err
		}
		img, err := gatewayimage.Build(ctx, gatewayimage.Options{
			Ref: c.ImageRef, Version: c.Version, Commit: c.Commit, Created: c.CommitTime, Source: release.Homepage,
			Kubewin: kw, Apt: gatewayimage.Apt{Dir: aptDir, Log: c.Log},
		}, filepath.Join(c.OutDir, release.ImageArchiveName(c.Version)))
		if err != nil {
			return nil, err
		}
		b.Image, b.Took["image"] = img, time.Since(start)
	}
	sums, err := release.WriteSums(c.OutDir)
	if err != nil {
		return nil, err
	}
	b.Sums = sums
	return b, nil
}
