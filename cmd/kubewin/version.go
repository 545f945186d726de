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

type versionInfo struct {
	Version                  string `json:"version"`
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
			info := versionInfo{
				Version:                  buildVersion(),
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
			fmt.Fprintf(s.out, "kubewin %s (%s, %s)\ntargets Kubernetes %s (default %s)\n",
				info.Version, info.GoVersion, info.Platform, info.SupportedKubernetes, info.DefaultKubernetesVersion)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// buildVersion reports the module version stamped by `go install module@version`, or "devel".
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
