//go:build !linux

package gateway

import (
	"context"
	"errors"
	"io"

	vnetns "github.com/vishvananda/netns"
)

// The gateway controller and the route keeper manage Linux addresses and routes with netlink;
// they run only on Linux nodes. These stubs keep the CLI compiling for Windows.

var errLinuxOnly = errors.New("kubewin gateway runs on Linux gateway nodes only")

// Controller is unavailable on this OS.
type Controller struct{}

// NewController fails on this OS.
func NewController(Options) (*Controller, error) { return nil, errLinuxOnly }

// Run fails on this OS.
func (*Controller) Run(context.Context) error { return errLinuxOnly }

// RunOnce fails on this OS.
func (*Controller) RunOnce(context.Context) (bool, error) { return false, errLinuxOnly }

// RouteKeeper is unavailable on this OS.
type RouteKeeper struct{}

// NewRouteKeeper fails on this OS.
func NewRouteKeeper(RouteOptions) (*RouteKeeper, error) { return nil, errLinuxOnly }

// Run fails on this OS.
func (*RouteKeeper) Run(context.Context) error { return errLinuxOnly }

// PIDFileReloader is unavailable on this OS.
type PIDFileReloader struct {
	PIDFile, ConfigPath, Proc string
}

// Reload fails on this OS.
func (PIDFileReloader) Reload() error { return errLinuxOnly }

// NetNS is unavailable on this OS.
type NetNS struct{ Name string }

// OpenNetNS fails on this OS.
func OpenNetNS(string) (*NetNS, error) { return nil, errLinuxOnly }

// Handle returns nil on this OS.
func (*NetNS) Handle() *vnetns.NsHandle { return nil }

// Validator returns nil on this OS.
func (*NetNS) Validator() Validator { return nil }

// Close does nothing on this OS.
func (*NetNS) Close() error { return nil }

// FallbackNice is the nice value keepalived runs at without real-time scheduling.
const FallbackNice = -20

// ExecRealtime fails on this OS.
func ExecRealtime(int, []string, io.Writer) error { return errLinuxOnly }
