package join

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/winnode"
)

// Join's executors of a node's host effects (render.NodeEffects), the list the bundle's
// scripts are rendered from too. Each effect kind has exactly one executor here; which join
// step runs it is said next to it. TestEffectParity drops each effect of a node in turn and
// fails when applying the rest leaves the host the same — when an executor ignores a kind.

// windowsExecutors: the step that applies each kind on a Windows node.
var windowsExecutors = map[render.EffectKind]string{
	render.EffectRegistryHost:  "configuration",
	render.EffectACL:           "credentials, configuration",
	render.EffectFirewallRule:  "node-service",
	render.EffectService:       "node-service",
	render.EffectSystemService: "pod-network (winnode Reconciler)",
	render.EffectNetwork:       "pod-network (winnode Reconciler)",
	render.EffectHostEndpoint:  "pod-network (winnode Reconciler)",
	render.EffectForwarding:    "pod-network (winnode Reconciler)",
	render.EffectRoute:         "pod-network (winnode Reconciler)",
	render.EffectPreserveRoute: "pod-network (winnode Reconciler)",
}

// linuxExecutors: the step that applies each kind on a Linux node.
var linuxExecutors = map[render.EffectKind]string{
	render.EffectRegistryHost: "configuration",
	render.EffectModule:       "configuration; again by the node service",
	render.EffectSysctl:       "configuration; again by the node service",
	render.EffectRoute:        "pod-network; again by the node service",
}

// applyRegistryHosts writes containerd's certs.d/<host>/hosts.toml for each registry host
// (containerd's registry.config_path names that directory on both OSes).
func applyRegistryHosts(effects []render.HostEffect, paths render.NodePaths) ([]Change, error) {
	var files []File
	for _, e := range render.EffectsOf(effects, render.EffectRegistryHost) {
		files = append(files, File{Path: filepath.Join(paths.ContainerdCertsDir, e.RegistryHost.Dir, "hosts.toml"), Data: e.RegistryHost.Data, Mode: 0o644})
	}
	return writeFiles(files)
}

// applyACLs gives each target its protected DACL. A target that does not exist yet is
// created as a directory when it names one (the data, pki, config and log directories), so the
// DACL is in place before anything secret is written below it; a file target is skipped until
// it exists (the next join sets it).
func applyACLs(ctx context.Context, h winnode.Host, effects []render.HostEffect, paths render.NodePaths) ([]Change, error) {
	var out []Change
	for _, e := range render.EffectsOf(effects, render.EffectACL) {
		path, err := render.ACLPath(e.ACL.Target, paths)
		if err != nil {
			return out, err
		}
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if !aclDirTarget(e.ACL.Target) {
				continue
			}
			if err := os.MkdirAll(path, 0o755); err != nil {
				return out, fmt.Errorf("create %s: %w", path, err)
			}
		}
		var grants []winnode.ACLGrant
		who := "SYSTEM and Administrators only"
		for _, g := range e.ACL.Grants {
			grants = append(grants, winnode.ACLGrant{Account: g.Account, Access: g.Access})
			who = "SYSTEM, Administrators and " + g.Account + " (" + g.Access + ")"
		}
		if err := h.RestrictACL(ctx, path, grants...); err != nil {
			return out, err
		}
		out = append(out, Change{What: path + " (" + who + ")", Action: ActionUnchanged})
	}
	return out, nil
}

func aclDirTarget(t render.ACLTarget) bool {
	switch t {
	case render.ACLDataDir, render.ACLPKIDir, render.ACLKubeProxyConfigDir, render.ACLLogDir:
		return true
	}
	return false
}

// applyFirewallRules makes each inbound rule exist as planned.
func applyFirewallRules(ctx context.Context, h winnode.Host, effects []render.HostEffect) ([]Change, error) {
	var out []Change
	for _, e := range render.EffectsOf(effects, render.EffectFirewallRule) {
		r := e.FirewallRule
		rule := winnode.FirewallRule{Name: r.Name, DisplayName: r.DisplayName, Protocol: r.Protocol, LocalPorts: r.LocalPort}
		change, err := h.EnsureFirewallRule(ctx, rule)
		if err != nil {
			return out, fmt.Errorf("firewall rule %s: %w", r.Name, err)
		}
		action := ActionUnchanged
		switch change {
		case winnode.FirewallCreated:
			action = ActionCreated
		case winnode.FirewallUpdated:
			action = ActionUpdated
		}
		out = append(out, Change{What: "firewall rule " + r.Name + " (" + r.Protocol + " " + r.LocalPort + ")", Action: action})
	}
	return out, nil
}

// windowsServiceConfigsFrom are the SCM definitions of the node services of the effects, with
// the bundle's recovery actions.
func windowsServiceConfigsFrom(effects []render.HostEffect) ([]winnode.ServiceConfig, error) {
	var out []winnode.ServiceConfig
	for _, e := range render.EffectsOf(effects, render.EffectService) {
		s := e.Service
		if s.Wrapper != nil {
			return nil, fmt.Errorf("service %s runs under a service wrapper (WinSW): not installed by join", s.Name)
		}
		st := winnode.StartAutomatic
		if s.Manual {
			st = winnode.StartManual
		}
		out = append(out, winnode.ServiceConfig{Name: s.Name, DisplayName: s.DisplayName, Description: s.Description,
			Binary: s.Binary, Args: append([]string(nil), s.Args...), DependsOn: append([]string(nil), s.DependsOn...), StartType: st, Account: s.Account,
			Recovery: windowsRecovery, RecoveryReset: windowsRecoveryReset})
	}
	return out, nil
}

// LinuxSystem is where a Linux node's kernel settings live: /proc/sys and /sys/module on a
// node. Tests point it at a network namespace's view (sysctls below net. are per namespace).
type LinuxSystem struct {
	// ProcSys is /proc/sys; SysModule is /sys/module.
	ProcSys, SysModule string
	// Modprobe loads a module ("modprobe" when nil).
	Modprobe func(ctx context.Context, module string) error
}

// DefaultLinuxSystem is a real node's.
func DefaultLinuxSystem() LinuxSystem {
	return LinuxSystem{ProcSys: "/proc/sys", SysModule: "/sys/module"}
}

// moduleEvidence is what shows a module's effect when it is built into the kernel, which then
// has no /sys/module entry of its own: br_netfilter creates /proc/sys/net/bridge (kubeadm's
// preflight checks /proc/sys/net/bridge/bridge-nf-call-iptables for the same reason:
// kubernetes cmd/kubeadm/app/preflight/checks_linux.go), overlay registers the filesystem.
var moduleEvidence = map[string]string{"br_netfilter": "net/bridge"}

// SysctlPath is a sysctl key's path below /proc/sys as sysctl(8) reads it: dots separate the
// levels and a slash stands for a dot inside one (an interface "eth0.100" is written
// net.ipv4.conf.eth0/100.rp_filter; procps sysctl.c swaps the two).
func SysctlPath(key string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, key)
}

// applySysctls sets each kernel parameter that differs.
func applySysctls(sys LinuxSystem, effects []render.HostEffect) ([]Change, error) {
	var out []Change
	for _, e := range render.EffectsOf(effects, render.EffectSysctl) {
		k, v := e.Sysctl.Key, e.Sysctl.Value
		path := filepath.Join(sys.ProcSys, SysctlPath(k))
		cur, err := os.ReadFile(path)
		if err != nil {
			return out, fmt.Errorf("sysctl %s: %w (is the module that provides it loaded?)", k, err)
		}
		what := "sysctl " + k + " = " + v
		if strings.TrimSpace(string(cur)) == v {
			out = append(out, Change{What: what, Action: ActionUnchanged})
			continue
		}
		if err := os.WriteFile(path, []byte(v+"\n"), 0o644); err != nil {
			return out, fmt.Errorf("sysctl %s: %w", k, err)
		}
		out = append(out, Change{What: what + " (was " + strings.TrimSpace(string(cur)) + ")", Action: ActionUpdated})
	}
	return out, nil
}

// applyModules loads each kernel module that is neither loaded nor built in.
func applyModules(ctx context.Context, sys LinuxSystem, effects []render.HostEffect) ([]Change, error) {
	var out []Change
	for _, e := range render.EffectsOf(effects, render.EffectModule) {
		m := e.Module
		what := "kernel module " + m
		if moduleLoaded(sys, m) {
			out = append(out, Change{What: what, Action: ActionUnchanged})
			continue
		}
		load := sys.Modprobe
		if load == nil {
			load = func(ctx context.Context, module string) error {
				if b, err := exec.CommandContext(ctx, "modprobe", module).CombinedOutput(); err != nil {
					return fmt.Errorf("modprobe %s: %w: %s", module, err, strings.TrimSpace(string(b)))
				}
				return nil
			}
		}
		if err := load(ctx, m); err != nil {
			return out, fmt.Errorf("%s is not loaded: %w", what, err)
		}
		out = append(out, Change{What: what + " (loaded)", Action: ActionCreated})
	}
	return out, nil
}

func moduleLoaded(sys LinuxSystem, m string) bool {
	if _, err := os.Stat(filepath.Join(sys.SysModule, m)); err == nil {
		return true
	}
	if ev, ok := moduleEvidence[m]; ok {
		if _, err := os.Stat(filepath.Join(sys.ProcSys, ev)); err == nil {
			return true
		}
	}
	if m == "overlay" {
		// A built-in overlay lists itself in /proc/filesystems (proc(5)).
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(sys.ProcSys), "filesystems")); err == nil && strings.Contains(string(b), "\toverlay\n") {
			return true
		}
	}
	return false
}

// applyLinuxKernel loads the modules, then sets the sysctls (br_netfilter provides the bridge
// ones).
func applyLinuxKernel(ctx context.Context, sys LinuxSystem, effects []render.HostEffect) ([]Change, error) {
	out, err := applyModules(ctx, sys, effects)
	if err != nil {
		return out, err
	}
	more, err := applySysctls(sys, effects)
	return append(out, more...), err
}
