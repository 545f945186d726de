package render

import (
	"bytes"
	"fmt"
	"net/netip"
	"regexp"

	"github.com/kubewin/kubewin/internal/plan"
)

var (
	moduleName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	sysctlKey  = regexp.MustCompile(`^[a-z0-9_]+(\.[A-Za-z0-9_-]+)+$`)
	ifaceName  = regexp.MustCompile(`^[A-Za-z0-9_.:@-]{1,15}$`)
)

// ModulesLoad renders modules-load.d/kubewin.conf (systemd-modules-load format).
func ModulesLoad(n plan.NodePlan) ([]byte, error) {
	if n.Linux == nil {
		return nil, fmt.Errorf("render modules-load.d for %s: not a Linux node", n.Name)
	}
	effects, err := linuxEffects(&plan.Plan{}, n)
	if err != nil {
		return nil, err
	}
	return modulesLoad(n, effects)
}

func modulesLoad(n plan.NodePlan, effects []HostEffect) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Kernel modules for %s, loaded at boot by systemd-modules-load.\n# %s\n", n.Name, generatedBy)
	for _, e := range EffectsOf(effects, EffectModule) {
		m := e.Module
		if !moduleName.MatchString(m) {
			return nil, fmt.Errorf("render modules-load.d for %s: %q is not a module name", n.Name, m)
		}
		b.WriteString(m + "\n")
	}
	return b.Bytes(), nil
}

// Sysctls renders sysctl.d/99-kubewin.conf (applied by systemd-sysctl / sysctl --system).
func Sysctls(n plan.NodePlan) ([]byte, error) {
	if n.Linux == nil {
		return nil, fmt.Errorf("render sysctl.d for %s: not a Linux node", n.Name)
	}
	effects, err := linuxEffects(&plan.Plan{}, n)
	if err != nil {
		return nil, err
	}
	return sysctlsConf(n, effects)
}

func sysctlsConf(n plan.NodePlan, effects []HostEffect) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Kernel parameters for %s; apply with `sysctl --system`.\n# %s\n", n.Name, generatedBy)
	for _, e := range EffectsOf(effects, EffectSysctl) {
		k := e.Sysctl.Key
		if !sysctlKey.MatchString(k) {
			return nil, fmt.Errorf("render sysctl.d for %s: %q is not a sysctl key", n.Name, k)
		}
		fmt.Fprintf(&b, "%s = %s\n", k, e.Sysctl.Value)
	}
	return b.Bytes(), nil
}

// LinuxRoutes renders the routes script of a Linux node: `ip route replace` lines, which are
// idempotent (they add or update). Nil when the node needs no routes.
func LinuxRoutes(n plan.NodePlan) ([]byte, error) {
	if n.Linux == nil {
		return nil, fmt.Errorf("render routes for %s: not a Linux node", n.Name)
	}
	effects, err := linuxEffects(&plan.Plan{}, n)
	if err != nil {
		return nil, err
	}
	return linuxRoutes(n, effects)
}

func linuxRoutes(n plan.NodePlan, effects []HostEffect) ([]byte, error) {
	routes := EffectsOf(effects, EffectRoute)
	if len(routes) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "#!/bin/sh\n# Static routes for %s (%d); run at boot after the network is up.\n# %s\nset -e\n", n.Name, len(routes), generatedBy)
	for _, e := range routes {
		line, err := ipRouteReplace(*e.Route)
		if err != nil {
			return nil, fmt.Errorf("render routes for %s: %w", n.Name, err)
		}
		b.WriteString(line)
	}
	return b.Bytes(), nil
}

func ipRouteReplace(r plan.Route) (string, error) {
	dst, err := netip.ParsePrefix(r.Destination)
	if err != nil {
		return "", fmt.Errorf("route destination %q: %w", r.Destination, err)
	}
	via, err := netip.ParseAddr(r.Via)
	if err != nil {
		return "", fmt.Errorf("route %s via %q: %w", dst, r.Via, err)
	}
	line := fmt.Sprintf("ip route replace %s via %s", dst.Masked(), via)
	if r.Dev != "" {
		if !ifaceName.MatchString(r.Dev) {
			return "", fmt.Errorf("route %s: %q is not an interface name", dst, r.Dev)
		}
		line += " dev " + r.Dev
	}
	if r.Reason != "" {
		line += " # " + sanitizeComment(r.Reason)
	}
	return line + "\n", nil
}

// sanitizeComment keeps a free-text reason on one comment line.
func sanitizeComment(s string) string {
	out := []byte(s)
	for i, c := range out {
		if c == '\n' || c == '\r' {
			out[i] = ' '
		}
	}
	return string(out)
}
