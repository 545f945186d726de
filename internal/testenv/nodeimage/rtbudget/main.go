// Command rtbudget is a runc wrapper for kubewin's end-to-end tests. It works around a property
// of the test machine's kernel and is never part of what kubewin installs on a user's node.
//
// The test kernel has real-time group scheduling (CONFIG_RT_GROUP_SCHED) on cgroups v1: every
// new cpu cgroup starts with cpu.rt_runtime_us 0, so no task in a pod's cgroup may switch to
// SCHED_RR — `chrt --rr` in the gateway's keepalived container fails with EPERM, whatever
// capabilities the container has. Neither the kubelet nor the CRI give cgroups a real-time
// budget. For `runc create` and `runc run` of a container whose process starts with chrt or
// `kubewin gateway exec` (which asks for SCHED_RR the same way), this
// wrapper gives the container's cgroup and its ancestors below the cpu hierarchy's root a budget
// (cpu.rt_runtime_us, top-down, raised only where it is lower), then executes the real runc
// (env KUBEWIN_RTBUDGET_RUNC, default /usr/sbin/runc) with the same arguments. Every other
// invocation passes through unchanged. One budget per path: enough for one real-time container
// per node, which is what the test runs.
//
// nodeimage.BuildRTBudgetWrapper builds it; a test chains it behind runcwrap by setting
// KUBEWIN_REAL_RUNC to its path.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

const (
	realRuncEnv     = "KUBEWIN_RTBUDGET_RUNC"
	defaultRealRunc = "/usr/sbin/runc"
	cpuHierarchy    = "/sys/fs/cgroup/cpu"
	// budgetUS of every period (the root's default period is 1 s): ample for keepalived's
	// adverts, far below the root's 950 ms.
	budgetUS = 100000
)

// runc's global options that take a value.
var globalValueFlags = map[string]bool{"root": true, "log": true, "log-format": true, "criu": true, "rootless": true}

// bundleDir returns the bundle directory of a runc create or run command line.
func bundleDir(args []string) (string, bool) {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			break
		}
		name := strings.TrimLeft(a, "-")
		if !strings.Contains(name, "=") && globalValueFlags[name] {
			i++
		}
	}
	if i >= len(args) || (args[i] != "create" && args[i] != "run") {
		return "", false
	}
	for j := i + 1; j < len(args); j++ {
		a := args[j]
		name := strings.TrimLeft(a, "-")
		if !strings.HasPrefix(a, "-") {
			continue
		}
		if name == "bundle" || name == "b" {
			if j+1 < len(args) {
				return args[j+1], true
			}
		}
		if v, ok := strings.CutPrefix(name, "bundle="); ok {
			return v, true
		}
		if v, ok := strings.CutPrefix(name, "b="); ok {
			return v, true
		}
	}
	return ".", true
}

type spec struct {
	Process *struct {
		Args []string `json:"args"`
	} `json:"process"`
	Linux *struct {
		CgroupsPath string `json:"cgroupsPath"`
	} `json:"linux"`
}

// realtimeLauncher says whether a container's process asks for SCHED_RR at start: chrt, or
// kubewin's `gateway exec --rt-priority` that the gateway DaemonSet's keepalived container runs
// (internal/gateway/manifests.go).
func realtimeLauncher(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch path.Base(args[0]) {
	case "chrt":
		return true
	case "kubewin":
		return len(args) > 2 && args[1] == "gateway" && args[2] == "exec"
	}
	return false
}

// grant gives the container's cgroup path, and its ancestors, the real-time budget.
func grant(bundle string) error {
	data, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		return err
	}
	var s spec
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("%s/config.json: %w", bundle, err)
	}
	if s.Process == nil || !realtimeLauncher(s.Process.Args) {
		return nil
	}
	if s.Linux == nil || !strings.HasPrefix(s.Linux.CgroupsPath, "/") {
		// A systemd-driver path (slice:prefix:name) is not what the test machine uses.
		return fmt.Errorf("%s/config.json: no cgroupfs cgroupsPath", bundle)
	}
	dir := cpuHierarchy
	for _, part := range strings.Split(strings.Trim(s.Linux.CgroupsPath, "/"), "/") {
		dir = filepath.Join(dir, part)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		file := filepath.Join(dir, "cpu.rt_runtime_us")
		cur, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		if n, err := strconv.Atoi(strings.TrimSpace(string(cur))); err == nil && n >= budgetUS {
			continue
		}
		if err := os.WriteFile(file, []byte(strconv.Itoa(budgetUS)), 0o644); err != nil {
			return fmt.Errorf("real-time budget for %s: %w", dir, err)
		}
	}
	return nil
}
