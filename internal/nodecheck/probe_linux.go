package nodecheck

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/containernetworking/cni/libcni"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/vishvananda/netns"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
)

// Run adds a probe to the node's pod network, runs the probes from it, and removes it. The
// node's CNI configuration is the first file in its CNI directory, as containerd picks it.
func Run(ctx context.Context, paths render.NodePaths, p *plan.Plan, n plan.NodePlan, timeout time.Duration) (*Report, error) {
	ps, err := probes(p, n, timeout, "")
	if err != nil {
		return nil, err
	}
	files, err := libcni.ConfFiles(paths.CNIConfDir, []string{".conflist", ".conf", ".json"})
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no CNI configuration in %s (%v): the pod network is not set up", paths.CNIConfDir, err)
	}
	list, err := loadConfList(files[0])
	if err != nil {
		return nil, err
	}
	var id [6]byte
	_, _ = rand.Read(id[:])
	name := "kwcheck-" + hex.EncodeToString(id[:])
	nsPath, err := newNetns(name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = netns.DeleteNamed(name) }()
	// The CNI cache is the node's own, not libcni's default in /var/lib/cni.
	cni := libcni.NewCNIConfigWithCacheDir([]string{paths.CNIBinDir}, filepath.Join(paths.DataDir, "cni-cache"), nil)
	rt := &libcni.RuntimeConf{ContainerID: name, NetNS: nsPath, IfName: "eth0",
		Args: [][2]string{{"IgnoreUnknown", "1"}, {"K8S_POD_NAMESPACE", "kube-system"}, {"K8S_POD_NAME", name}}}
	res, err := cni.AddNetworkList(ctx, list, rt)
	if err != nil {
		return nil, fmt.Errorf("add the probe to the pod network with %s: %w", files[0], err)
	}
	defer func() { _ = cni.DelNetworkList(context.WithoutCancel(ctx), list, rt) }()
	rep := &Report{Node: n.Name}
	if r, err := current.NewResultFromResult(res); err == nil && len(r.IPs) > 0 {
		rep.Source = r.IPs[0].Address.IP.String()
	}
	for _, pr := range ps {
		rep.Results = append(rep.Results, result(pr, func() (string, error) {
			return inNetns(nsPath, func() (string, error) { return pr.run(ctx) })
		}))
	}
	return rep, nil
}

func loadConfList(file string) (*libcni.NetworkConfigList, error) {
	if filepath.Ext(file) == ".conflist" {
		l, err := libcni.ConfListFromFile(file)
		if err != nil {
			return nil, fmt.Errorf("CNI configuration %s: %w", file, err)
		}
		return l, nil
	}
	c, err := libcni.ConfFromFile(file)
	if err != nil {
		return nil, fmt.Errorf("CNI configuration %s: %w", file, err)
	}
	return libcni.ConfListFromConf(c)
}

// newNetns creates a named network namespace (in /var/run/netns) without leaving the calling
// thread in it.
func newNetns(name string) (string, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return "", fmt.Errorf("current network namespace: %w", err)
	}
	defer orig.Close()
	h, err := netns.NewNamed(name)
	if err != nil {
		return "", fmt.Errorf("create the probe namespace: %w", err)
	}
	h.Close()
	if err := netns.Set(orig); err != nil {
		return "", fmt.Errorf("return to the node's namespace: %w", err)
	}
	return filepath.Join("/var/run/netns", name), nil
}

// inNetns runs f on a thread switched into the namespace at path; sockets f opens live there.
// The thread is not returned to the scheduler afterwards unless it got back to its namespace.
func inNetns(path string, f func() (string, error)) (string, error) {
	type out struct {
		s   string
		err error
	}
	ch := make(chan out, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			ch <- out{err: err}
			return
		}
		defer orig.Close()
		target, err := netns.GetFromPath(path)
		if err != nil {
			ch <- out{err: err}
			return
		}
		defer target.Close()
		if err := netns.Set(target); err != nil {
			ch <- out{err: err}
			return
		}
		s, ferr := f()
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
		ch <- out{s, ferr}
	}()
	o := <-ch
	return o.s, o.err
}
