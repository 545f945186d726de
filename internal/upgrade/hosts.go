package upgrade

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kubewin/kubewin/internal/join"
	"github.com/kubewin/kubewin/internal/noderun"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/winnode"
)

// JoinFetch is join's verified install: the file comes from source (a directory or an https
// base URL, as join --binaries), is hashed while it streams to a temporary file beside dst and
// renamed to dst only when its sha256 is sum.
func JoinFetch(ctx context.Context, source, name, sum, dst string) error {
	_, err := join.Binaries{Source: source}.InstallVerified(ctx, name, sum, dst)
	return err
}

// WindowsLayout is where join puts each file on a Windows node (join's windowsBinaries) and
// the SCM services that run it (render/services.go: the kubelet and kube-proxy run under
// kube-log-runner; the runhcs shim is started by containerd per pod and outlives it).
func WindowsLayout(p render.NodePaths) Layout {
	return func(name string) (Component, bool) {
		switch name {
		case "containerd.exe":
			return Component{Path: filepath.Join(p.RuntimeBinDir, name), Services: []string{"containerd"}}, true
		case "containerd-shim-runhcs-v1.exe":
			return Component{Path: filepath.Join(p.RuntimeBinDir, name)}, true
		case "kubelet.exe":
			return Component{Path: filepath.Join(p.BinDir, name), Services: []string{"kubelet"}}, true
		case "kube-proxy.exe":
			return Component{Path: filepath.Join(p.BinDir, name), Services: []string{"kube-proxy"}}, true
		case "kube-log-runner.exe":
			return Component{Path: filepath.Join(p.BinDir, name), Services: []string{"kubelet", "kube-proxy"}}, true
		}
		if plugin, ok := strings.CutPrefix(name, "cni/"); ok && strings.HasSuffix(plugin, ".exe") && !strings.ContainsAny(plugin, `/\`) {
			return Component{Path: filepath.Join(p.CNIBinDir, plugin)}, true
		}
		return Component{}, false
	}
}

// LinuxLayout is where join puts each file on a Linux node (join's nodeBinaries and
// cniPlugins) and the supervised services that run it (join's services manifest). kube-proxy is
// the cluster's on Linux (a DaemonSet), not the node's.
func LinuxLayout(p render.NodePaths) Layout {
	return func(name string) (Component, bool) {
		switch name {
		case "containerd":
			return Component{Path: filepath.Join(p.BinDir, name), Services: []string{"containerd"}}, true
		case "containerd-shim-runc-v2":
			return Component{Path: filepath.Join(p.BinDir, name)}, true
		case "kubelet":
			return Component{Path: filepath.Join(p.BinDir, name), Services: []string{"kubelet"}}, true
		}
		if plugin, ok := strings.CutPrefix(name, "cni/"); ok && plugin != "" && !strings.ContainsAny(plugin, `/\`) {
			return Component{Path: filepath.Join(p.CNIBinDir, plugin)}, true
		}
		return Component{}, false
	}
}

// WindowsHost is Host on a Windows node: services through the SCM (winnode.Host), files,
// installers and the restart through winnode.Machine. winnode.WindowsHost is both on a node;
// winnode.MemHost is both in tests.
type WindowsHost struct {
	Node    winnode.Host
	Machine winnode.Machine
	// Settle is how long a started service must keep running (same process) to count as up:
	// the SCM reports Running as soon as the program registered, and a kubelet that rejects
	// its configuration exits seconds later.
	Settle time.Duration
}

// windowsServices are the node's SCM services in start order (render/services.go).
var windowsServices = []string{"containerd", "kubelet", "kube-proxy"}

func (h *WindowsHost) OS() string         { return "windows" }
func (h *WindowsHost) Services() []string { return slices.Clone(windowsServices) }

// ServicesAfterRestart: containerd and the kubelet, which join starts before the pod network
// exists; kube-proxy is started by the node service's Reconciler once its HNS network is back
// (a reboot removes it or its endpoints: winnode.MemHost's table), never before.
func (h *WindowsHost) ServicesAfterRestart() []string { return []string{"containerd", "kubelet"} }

func (h *WindowsHost) Running(ctx context.Context, svc string) (bool, error) {
	st, err := h.Node.ServiceStatus(ctx, svc)
	if errors.Is(err, winnode.ErrServiceNotInstalled) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return st.State == winnode.ServiceRunning, nil
}

func (h *WindowsHost) Stop(ctx context.Context, svc string) error {
	return h.Node.StopService(ctx, svc)
}

func (h *WindowsHost) Start(ctx context.Context, svc string) error {
	if err := h.Node.StartService(ctx, svc); err != nil {
		return err
	}
	st, err := h.Node.ServiceStatus(ctx, svc)
	if err != nil {
		return err
	}
	if st.State != winnode.ServiceRunning {
		return fmt.Errorf("service %s is %s (exit code %d)", svc, st.State, st.ExitCode)
	}
	if h.Settle <= 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(h.Settle):
	}
	again, err := h.Node.ServiceStatus(ctx, svc)
	if err != nil {
		return err
	}
	if again.State != winnode.ServiceRunning || again.ProcessID != st.ProcessID {
		return fmt.Errorf("service %s did not stay up for %s: now %s, exit code %d", svc, h.Settle, again.State, again.ExitCode)
	}
	return nil
}

func (h *WindowsHost) Rename(ctx context.Context, from, to string) error {
	return h.Machine.RenameFile(ctx, from, to)
}
func (h *WindowsHost) Remove(ctx context.Context, path string) error {
	return h.Machine.RemoveFile(ctx, path)
}
func (h *WindowsHost) RunInstaller(ctx context.Context, argv []string) (uint32, error) {
	return h.Machine.RunInstaller(ctx, argv)
}
func (h *WindowsHost) Restart(ctx context.Context) error { return h.Machine.Restart(ctx) }
func (h *WindowsHost) BootTime(ctx context.Context) (time.Time, error) {
	return h.Machine.BootTime(ctx)
}

// LinuxHost is Host on a Linux node: the services are the node service's own children
// (noderun.Supervisor, from join's manifest). Linux lets a running program's file be renamed
// and its name take a new file (rename(2) replaces the directory entry; the process keeps its
// inode), so Stop has nothing to do before the swap: Start restarts the service on its new
// program through the supervisor. OS updates are refused before anything changes (the
// revision's osUpdates are Windows'); a restart is not this package's on Linux.
type LinuxHost struct {
	Supervisor *noderun.Supervisor
	// StartTimeout bounds the wait for a restarted service to count as running (2 min when
	// zero): the supervisor's StartGrace and, for the kubelet, containerd coming up.
	StartTimeout time.Duration
	// Poll is how often the supervisor's status is read (100 ms when zero).
	Poll time.Duration
}

// linuxServices are the supervised services in start order (join's services manifest).
var linuxServices = []string{"containerd", "kubelet"}

func (h *LinuxHost) OS() string         { return "linux" }
func (h *LinuxHost) Services() []string { return slices.Clone(linuxServices) }

// ServicesAfterRestart: the supervisor starts all of them (a Linux request never restarts).
func (h *LinuxHost) ServicesAfterRestart() []string { return slices.Clone(linuxServices) }

func (h *LinuxHost) status(svc string) (noderun.ServiceStatus, bool) {
	for _, s := range h.Supervisor.Status().Services {
		if s.Name == svc {
			return s, true
		}
	}
	return noderun.ServiceStatus{}, false
}

func (h *LinuxHost) Running(_ context.Context, svc string) (bool, error) {
	s, ok := h.status(svc)
	return ok && (s.State == noderun.StateRunning || s.State == noderun.StateStarting), nil
}

// Stop: nothing (see LinuxHost); Start restarts.
func (h *LinuxHost) Stop(context.Context, string) error { return nil }

// Start restarts svc through the supervisor and waits until a new process of it has been
// alive for the supervisor's StartGrace (StateRunning), or fails when it exits first.
func (h *LinuxHost) Start(ctx context.Context, svc string) error {
	before, _ := h.status(svc)
	if err := h.Supervisor.Restart(svc); err != nil {
		return err
	}
	timeout, poll := h.StartTimeout, h.Poll
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	deadline := time.Now().Add(timeout)
	for {
		s, ok := h.status(svc)
		// Restarts counts every start after the first: more than before means a process of the
		// new program was started (the old one's intended stop is no crash: no backoff).
		switch {
		case !ok || s.Restarts <= before.Restarts:
		case s.State == noderun.StateRunning:
			return nil
		case s.State == noderun.StateBackoff && s.LastExit != nil:
			return fmt.Errorf("%s exited (%s)%s", svc, exitText(s.LastExit), tail(s.LastExit))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is %s after %s (waiting for %s)", svc, s.State, timeout, s.WaitingFor)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

func exitText(e *noderun.ExitStatus) string {
	switch {
	case e.Error != "":
		return e.Error
	case e.Signal != "":
		return "signal " + e.Signal
	}
	return fmt.Sprintf("code %d", e.Code)
}

func tail(e *noderun.ExitStatus) string {
	if len(e.LogTail) == 0 {
		return ""
	}
	return ": " + e.LogTail[len(e.LogTail)-1]
}

func (h *LinuxHost) Rename(_ context.Context, from, to string) error { return os.Rename(from, to) }
func (h *LinuxHost) Remove(_ context.Context, path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
func (h *LinuxHost) RunInstaller(context.Context, []string) (uint32, error) {
	return 0, errors.New("OS updates are installed on Windows nodes only")
}
func (h *LinuxHost) Restart(context.Context) error {
	return errors.New("a Linux node is not restarted by kubewin rollout")
}

// BootTime is never compared on Linux: no Linux request restarts the machine (fetch refuses
// OS updates there).
func (h *LinuxHost) BootTime(context.Context) (time.Time, error) { return time.Time{}, nil }
