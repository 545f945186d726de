package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/kubewin/kubewin/internal/cliutil"
	"github.com/kubewin/kubewin/internal/platform"
)

// version and commit are stamped by the release build (hack/release.sh, internal/release:
// -ldflags "-X main.version=... -X main.commit=..."); -X can only set package-level string
// variables, so these two are the exception to the no-package-state rule and are never written
// at run time.
var (
	version string
	commit  string
)

type versionInfo struct {
	Version                  string `json:"version"`
	Commit                   string `json:"commit"`
	GoVersion                string `json:"goVersion"`
	Platform                 string `json:"platform"`
	DefaultKubernetesVersion string `json:"defaultKubernetesVersion"`
	SupportedKubernetes      string `json:"supportedKubernetes"`
}

func newVersionCmd(s streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print kubewin's version and the Kubernetes versions it targets",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cliutil.ValidateFormat(output, "text", "json"); err != nil {
				return err
			}
			bi, _ := debug.ReadBuildInfo()
			info := versionInfo{
				Version:                  buildVersion(version, bi),
				Commit:                   buildCommit(commit, bi),
				GoVersion:                runtime.Version(),
				Platform:                 runtime.GOOS + "/" + runtime.GOARCH,
				DefaultKubernetesVersion: platform.NewestKubernetes().String(),
				SupportedKubernetes:      platform.SupportedKubernetesRange(),
			}
			if output == "json" {
				enc := json.NewEncoder(s.out)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			fmt.Fprintf(s.out, "kubewin %s (commit %s, %s, %s)\ntargets Kubernetes %s (default %s)\n",
				info.Version, info.Commit, info.GoVersion, info.Platform, info.SupportedKubernetes, info.DefaultKubernetesVersion)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// buildVersion is the version the release build stamped, else the module version stamped by
// `go install module@version`, else "devel".
func buildVersion(stamped string, bi *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// buildCommit is the commit the release build stamped, else the VCS revision the go command
// recorded (vcs.revision, with "-dirty" when vcs.modified), else "unknown" (-buildvcs=false, or
// a build outside a repository).
func buildCommit(stamped string, bi *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if bi == nil {
		return "unknown"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "unknown"
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return rev
}
