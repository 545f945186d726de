//go:build !windows

package main

import (
	"context"
	"io"
	"log/slog"
	"os/signal"
	"syscall"
)

// runNodeService runs the node service in the foreground: SIGTERM (systemd's stop) and SIGINT
// end it. Without this the default action would kill only this process and leave the
// services it supervises running unsupervised. logFile is for a Windows service only.
func runNodeService(ctx context.Context, stderr io.Writer, logFile string, run func(context.Context, *slog.Logger) error) error {
	ctx, cancel := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	return run(ctx, slog.New(slog.NewTextHandler(stderr, nil)))
}
