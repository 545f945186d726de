package gateway

import (
	"context"
	"fmt"

	vnetns "github.com/vishvananda/netns"

	"github.com/kubewin/kubewin/internal/render"
)

// NetNS is a named network namespace (ip netns) whose interfaces and routes a controller or
// route keeper manages while the process itself (API connection, metrics) stays where it is.
// A nil *NetNS means the process's own namespace.
type NetNS struct {
	Name   string
	handle vnetns.NsHandle
}

// OpenNetNS opens /run/netns/name.
func OpenNetNS(name string) (*NetNS, error) {
	h, err := vnetns.GetFromName(name)
	if err != nil {
		return nil, fmt.Errorf("open network namespace %s: %w", name, err)
	}
	return &NetNS{Name: name, handle: h}, nil
}

// Handle is the namespace for Options.NetNS / RouteOptions.NetNS (nil for the own namespace).
func (n *NetNS) Handle() *vnetns.NsHandle {
	if n == nil {
		return nil
	}
	return &n.handle
}

// Validator runs keepalived -t where the interfaces are.
func (n *NetNS) Validator() Validator {
	if n == nil {
		return render.ValidateKeepalived
	}
	name := n.Name
	return func(ctx context.Context, path string) error { return render.ValidateKeepalivedInNetns(ctx, name, path) }
}

// Close releases the namespace handle.
func (n *NetNS) Close() error {
	if n == nil {
		return nil
	}
	return n.handle.Close()
}
