package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/kubewin/kubewin/internal/join"
	"github.com/kubewin/kubewin/internal/noderun"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/upgrade"
	"github.com/kubewin/kubewin/internal/winnode"
)

// nodeUpgrade is the node side of kubewin rollout inside `kubewin node run`: every tick, before
// the repair pass and in the same goroutine (so the Windows Reconciler never starts a service
// an upgrade has just stopped), it reads the node's own Node for a rollout request and carries
// it out (internal/upgrade). The Node's name and the node's credential exist only once join got
// that far; until then, and whenever the API server is away, an unfinished request (one that
// restarted the machine) is resumed from its state file alone. An apply holds the tick for as
// long as it takes (downloads included): the orchestrator follows the Node's annotations, not
// the health condition, meanwhile.
type nodeUpgrade struct {
	paths  render.NodePaths
	engine *upgrade.Engine
	check  func(context.Context) (string, error)
	log    *slog.Logger
	w      *upgrade.Watcher
}

func newNodeUpgrade(paths render.NodePaths, h upgrade.Host, layout upgrade.Layout, check func(context.Context) (string, error), log *slog.Logger) *nodeUpgrade {
	return &nodeUpgrade{paths: paths, check: check, log: log, engine: &upgrade.Engine{
		Host: h, Layout: layout, Fetch: upgrade.JoinFetch,
		StatePath:  upgrade.StateFile(paths.DataDir),
		UpdatesDir: filepath.Join(paths.DataDir, "updates"),
		Log:        log,
	}}
}

// linuxNodeUpgrade: the supervisor's services, join's Linux layout.
func linuxNodeUpgrade(paths render.NodePaths, sup *noderun.Supervisor, check func(context.Context) (string, error), log *slog.Logger) *nodeUpgrade {
	return newNodeUpgrade(paths, &upgrade.LinuxHost{Supervisor: sup}, upgrade.LinuxLayout(paths), check, log)
}

// windowsNodeUpgrade: the SCM's services, join's Windows layout; nil when the host cannot
// rename, install or restart (a winnode.Host without winnode.Machine).
func windowsNodeUpgrade(paths render.NodePaths, h *join.WindowsHost, check func(context.Context) (string, error), log *slog.Logger) *nodeUpgrade {
	m, ok := h.Node.(winnode.Machine)
	if !ok {
		log.Warn("kubewin rollout: this Windows host layer cannot apply revisions (no winnode.Machine)")
		return nil
	}
	// 10 s: a kubelet that rejects its configuration exits within seconds of registering.
	host := &upgrade.WindowsHost{Node: h.Node, Machine: m, Settle: 10 * time.Second}
	return newNodeUpgrade(paths, host, upgrade.WindowsLayout(paths), check, log)
}

// step is one tick's work (errors are logged: the node service keeps going).
func (u *nodeUpgrade) step(ctx context.Context) {
	if u == nil {
		return
	}
	if u.w == nil {
		pub, err := nodePublisher(u.paths)
		if err != nil {
			if _, err := u.engine.Resume(ctx); err != nil {
				u.log.Warn("kubewin rollout: resume", "err", err)
			}
			return
		}
		u.w = upgrade.NewWatcher(pub.Client, pub.Node, u.engine)
		u.w.FlowCheck = u.check
	}
	if err := u.w.Step(ctx); err != nil {
		u.log.Warn("kubewin rollout", "err", err)
	}
}
