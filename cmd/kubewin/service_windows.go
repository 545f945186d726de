//go:build windows

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"

	"golang.org/x/sys/windows/svc"

	"github.com/kubewin/kubewin/internal/join"
	"github.com/kubewin/kubewin/internal/noderun"
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

// Execute reports Running at once (the SCM waits for it) and runs until Stop or Shutdown.
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
				status <- svc.Status{State: svc.StopPending}
				cancel()
				h.err = <-done
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
