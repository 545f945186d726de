package rules

import (
	"fmt"

	"github.com/kubewin/kubewin/internal/check"
)

// containerdLayoutRules: settings containerd never applies because of where they are.
var containerdLayoutRules = []check.Rule{
	{
		ID: "KW1610", Name: "containerd-mirrors-with-config-path", Family: check.FamilyRuntime, Severity: check.Error,
		Summary:   "containerd config sets registry.mirrors and registry config_path together",
		Why:       "containerd refuses the combination: the CRI plugin fails to load (\"`mirrors` cannot be set when `config_path` is provided\") and the kubelet finds no runtime; registry.mirrors is deprecated for hosts.toml files under config_path.",
		Fix:       "Move each mirror into <config_path>/<registry>/hosts.toml and delete the registry.mirrors tables.",
		Reference: "containerd pkg/cri/config/config.go ValidatePluginConfig (mirrors with config_path); containerd docs/hosts.md",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, cc := range ctx.Containerd {
				if cc.MirrorsLine > 0 && cc.ConfigPath != "" {
					emit(check.Finding{Location: check.Location{File: cc.File, Line: cc.MirrorsLine},
						Message: fmt.Sprintf("registry.mirrors (line %d) with config_path = %q (line %d)", cc.MirrorsLine, cc.ConfigPath, cc.ConfigPathLine)})
				}
			}
		},
	},
	{
		ID: "KW1611", Name: "containerd-setting-swallowed", Family: check.FamilyRuntime, Severity: check.Warning,
		Summary:   "A containerd setting sits under a table that does not take it (a table header opened above it swallows it)",
		Why:       "In TOML every key after a [table] header belongs to that table: a setting written below a later header is read as part of it, and containerd ignores it there without a word.",
		Fix:       "Move the setting up under its own table header (or repeat that header above it).",
		Reference: "toml.io/en/v1.0.0 (Table: keys belong to the last header); containerd docs/cri/config.md",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, cc := range ctx.Containerd {
				for _, m := range cc.Misplaced {
					emit(check.Finding{Location: check.Location{File: cc.File, Line: m.Line, Field: m.Table + "." + m.Key},
						Message: fmt.Sprintf("%s is under [%s], where containerd does not read it (it belongs in %s)", m.Key, m.Table, m.Belongs)})
				}
			}
		},
	},
}
