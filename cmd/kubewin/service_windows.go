//go:build windows

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"golang.org/x/sys/windows/svc"

	"github.com/kubewin/kubewin/internal/join"
	"github.com/kubewin/kubewin/internal/noderun"
	"github.com/kubewin/kubewin/internal/winnode"
)

// runNodeService runs the node service under the service control manager when started by it
// (the kubewin-node service join installs), else in the foreground until Ctrl+C. Under the SCM
// nothing reads stderr: the log goes to logFile, rotated as the services' logs are.
//
// Compiled and vetted for Windows only (GOOS=windows go vet); no Windows host runs here.
func runNodeService(ctx context.Context, stderr io.Writer, logFile string, run func(context.Context, *slog.Logger) error) error {
	isService, err := svc.IsWindowsService()
	if err != nil {
		return fmt.Errorf("detect the service control manager: %w", err)
	}
	if !isService {
		ctx, cancel := signal.NotifyContext(ctx, os.Interrupt)
		defer cancel()
		return run(ctx, slog.New(slog.NewTextHandler(stderr, nil)))
	}
	w, err := noderun.OpenLog(logFile, 10<<20, 5)
	if err != nil {
		return err
	}
	defer w.Close()
	h := &nodeServiceHandler{ctx: ctx, run: run, log: slog.New(slog.NewTextHandler(w, nil))}
	if err := svc.Run(join.NodeServiceName, h); err != nil {
		return fmt.Errorf("run as service %s: %w", join.NodeServiceName, err)
	}
	return h.err
}

type nodeServiceHandler struct {
	ctx context.Context
	run func(context.Context, *slog.Logger) error
	log *slog.Logger
	err error
}

// How the node service reports a pending stop: progress every stopProgressEvery with a WaitHint
// that leaves room for a few late ticks, and no more waiting than a whole Reconciler pass
// (winnode.DefaultPassTimeout, the longest an HCN call is waited for) and some.
const (
	stopProgressEvery = 5 * time.Second
	stopWaitHint      = 30 * time.Second
	stopLimit         = winnode.DefaultPassTimeout + 30*time.Second
)

// Execute reports Running at once (the SCM waits for it): the run starts in its own goroutine
// and does its work after Running, so there is no StartPending to report. It runs until Stop
// or Shutdown, and then reports StopPending with an increasing CheckPoint while the run's
// current pass ends (waitStopping), since the SCM gives up on a pending service whose
// CheckPoint stays the same for longer than its WaitHint
// (learn.microsoft.com/windows/win32/api/winsvc/ns-winsvc-service_status). After Stop the SCM
// sends no other control but Interrogate, which is answered; at system shutdown the SCM waits
// only a limited time whatever the checkpoints say
// (learn.microsoft.com/windows/win32/services/service-control-handler-function).
func (h *nodeServiceHandler) Execute(_ []string, req <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	ctx, cancel := context.WithCancel(h.ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.run(ctx, h.log) }()
	status <- svc.Status{State: svc.Running, Accepts: svc.AcceptStop | svc.AcceptShutdown}
	for {
		select {
		case c := <-req:
			switch c.Cmd {
			case svc.Interrogate:
				status <- c.CurrentStatus
			case svc.Stop, svc.Shutdown:
				cancel()
				var last svc.Status
				h.err = waitStopping(done, req, stopProgressEvery, stopLimit,
					func(checkpoint uint32) {
						last = svc.Status{State: svc.StopPending, CheckPoint: checkpoint,
							WaitHint: uint32(stopWaitHint / time.Millisecond)}
						status <- last
					},
					func(c svc.ChangeRequest) {
						if c.Cmd == svc.Interrogate {
							status <- last
						}
					})
				if errors.Is(h.err, errStopTimedOut) {
					h.log.Error("stop", "err", h.err)
				}
				return false, 0
			}
		case err := <-done:
			// The node service ended on its own: an error makes the SCM's recovery actions
			// start it again.
			h.err = err
			if err != nil {
				h.log.Error("node service ended", "err", err)
				return true, 1
			}
			return false, 0
		}
	}
}
