// Package a is a fixture for the extractor: one call of each logging and error style it reads.
// It is never built (it lives under testdata).
package a

import (
	"context"
	"errors"
	"fmt"

	"github.com/containerd/log"
	"github.com/go-logr/logr"

	pkgerrors "github.com/pkg/errors"
	"github.com/sirupsen/logrus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

const mountFmt = "failed to mount %s on %s: %v"

const prefix = "Unable to attach"

var ErrNoPlugin = errors.New("no such plugin at 100% load")

type Syncer struct{}

func (s *Syncer) Sync(ctx context.Context, logger logr.Logger, pod string) error {
	err := run()
	klog.ErrorS(err, "Failed to sync pod", "pod", pod)
	klog.InfoS("Retrying pod sync", "pod", pod, "err", err)
	klog.InfoS("Started pod sync", "pod", pod)
	klog.V(2).Infof("Sync of pod %s failed: %v", pod, err)
	klog.V(4).Infof("Sync of pod %s started", pod)
	klog.Errorf(mountFmt, "a", "b", err)
	klog.Warningf(prefix+" volume %s to node", pod)
	klog.Error("Cannot open netlink socket: ", err)
	logger.Error(err, "Failed to start watcher", "pod", pod)
	logger.Info("Watcher stopped with an error", "err", err)
	log.G(ctx).WithError(err).Warn("could not remove stale endpoint")
	logrus.WithError(err).Info("Endpoint gone away unexpectedly")
	logrus.Fatalf("cannot continue without network %q", pod)
	utilruntime.HandleErrorWithContext(ctx, err, "Failed to watch the node object", "reflector", pod)
	if err != nil {
		return pkgerrors.Wrap(err, "failed to open the store")
	}
	if pod == "" {
		return status.Errorf(codes.NotFound, "pod sandbox %q not found anywhere", pod)
	}
	return fmt.Errorf("unable to load bootstrap kubeconfig: %w", err)
}

func run() error { return fmt.Errorf("%v", 1) }
