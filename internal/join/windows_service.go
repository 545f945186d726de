package join

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/kubewin/kubewin/internal/noderun"
	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/winnode"
)

// WindowsNodeService is what `kubewin node run` does on a Windows node, apart from running as
// a Windows service: every tick (nodestatus.Loop's Repair) a bounded pass of winnode's
// Reconciler over the state join left — HNS networks, host endpoint and routes for the Node's
// pod CIDR, the services started in order, kube-proxy restarted after HNS lost its load
// balancers, the network re-bound to a renamed adapter — and the services' state in the
// supervisor's vocabulary (Status), so the same Assessor judges and diagnoses Linux and
// Windows nodes. Before join has read the pod CIDR there is nothing to reconcile: the
// services join started keep running and the state is published.
type WindowsNodeService struct {
	Host  *WindowsHost
	Paths render.NodePaths
	// ExpectedLoadBalancers is passed to the Reconciler (nil: not checked).
	ExpectedLoadBalancers func(ctx context.Context) (int, error)

	mu  sync.Mutex
	rec *winnode.Reconciler
	// planned is the join state's modification time the Reconciler's Desired was made from: a
	// new join (another description, another pod CIDR) rewrites the state, and the next pass
	// follows it without a restart of the service.
	planned time.Time
	// services are the node services in start order, with their log files.
	services []noderun.Service
	last     noderun.Status
}

// joinServices are the SCM services join installs where kubewin makes the pod network, in
// start order, with their logs (kube-log-runner's -log-file for the kubelet and kube-proxy,
// containerd's --log-file: render/services.go). They are what the node service watches only
// until this node is planned: from then on its host effects say (serviceNames).
var joinServices = []string{"containerd", "kubelet", "kube-proxy"}

// serviceNames are the node services in start order: the host effects' (render.EffectService,
// through the Reconciler's Desired) once this node is planned — on a HostProcess design
// kube-proxy is a pod of the cluster's DaemonSet, not a service, and reporting it as
// "waiting for kubewin join to install it" would be wrong for good; before that, what join
// installs. Called with s.mu held.
func (s *WindowsNodeService) serviceNames() []string {
	if s.rec == nil || len(s.rec.Desired.Services) == 0 {
		return slices.Clone(joinServices)
	}
	names := make([]string, 0, len(s.rec.Desired.Services))
	for _, svc := range s.rec.Desired.Services {
		names = append(names, svc.Name)
	}
	return names
}

// Manifest lists the node services with their log files, as the Assessor reads them.
func (s *WindowsNodeService) Manifest() (*noderun.Manifest, error) {
	s.mu.Lock()
	names := s.serviceNames()
	s.mu.Unlock()
	m := &noderun.Manifest{APIVersion: noderun.ManifestAPIVersion, Kind: noderun.ManifestKind}
	for _, name := range names {
		m.Services = append(m.Services, noderun.Service{Name: name, LogFile: filepath.Join(s.Paths.LogDir, name+".log")})
	}
	return m, nil
}

// Repair makes one Reconciler pass and returns what it repaired; an unhealthy pass is an
// error saying why (the node is then reported unhealthy with that reason).
func (s *WindowsNodeService) Repair(ctx context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.observe(ctx)
	if err := CheckCredential(s.Paths, time.Now()); err != nil {
		// Nothing on the node can fix this and kube-proxy cannot work without it: say so
		// instead of restarting services that will fail to authenticate.
		return nil, err
	}
	// The lock first, the plan then: a re-join's pod-network step holds the lock and writes a
	// new pod CIDR into the state before it does, so a pass planned before waiting could
	// rebuild the previous network over the new one.
	lock, err := lockReconcile(ctx, s.Paths)
	if err != nil {
		return nil, err
	}
	defer lock.release()
	st, err := os.Stat(StatePath(s.Paths))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // not joined yet: nothing to keep
	}
	if err != nil {
		return nil, fmt.Errorf("join state: %w", err)
	}
	if s.rec == nil || !st.ModTime().Equal(s.planned) {
		d, err := WindowsDesired(ctx, s.Host, s.Paths)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil // joined up to before the pod CIDR: join makes the network
		}
		if err != nil {
			return nil, fmt.Errorf("plan this node: %w", err)
		}
		if s.rec == nil {
			s.rec = newWindowsReconciler(s.Host, d, s.Paths)
			s.rec.ExpectedLoadBalancers = s.ExpectedLoadBalancers
		}
		// The Reconciler keeps what it learned (the HNS process ID) across a new Desired; the
		// kept routes are read again (a join may have saved new ones).
		s.rec.Desired, s.planned = d, st.ModTime()
		s.rec.Preserved = loadKeptRoutes(s.Paths)
		s.watchCNI() // windows_hostprocess.go
	}
	rep, err := s.rec.Reconcile(ctx)
	var out []string
	for _, r := range rep.Repairs {
		out = append(out, r.What+" ("+r.Why+")")
	}
	if err != nil {
		return out, err
	}
	if !rep.Healthy {
		return out, unhealthy(rep)
	}
	return out, nil
}

// Status is the node services' state as of the last Repair.
func (s *WindowsNodeService) Status() noderun.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// observe reads the services' SCM state into the supervisor's vocabulary: running; stopped
// after an error exit is failing (the SCM's recovery actions restart it, the Reconciler too);
// stopped otherwise is waiting (a manual service the Reconciler starts once the network is
// there).
func (s *WindowsNodeService) observe(ctx context.Context) {
	st := noderun.Status{}
	now := time.Now().UTC().Truncate(time.Second)
	for _, name := range s.serviceNames() {
		ss := noderun.ServiceStatus{Name: name, Since: now}
		scm, err := s.Host.Node.ServiceStatus(ctx, name)
		switch {
		case errors.Is(err, winnode.ErrServiceNotInstalled):
			ss.State, ss.WaitingFor = noderun.StateWaiting, "kubewin join to install it"
		case err != nil:
			ss.State, ss.LastExit = noderun.StateBackoff, &noderun.ExitStatus{Code: -1, Error: err.Error()}
			ss.Restarts = 1
		case scm.State == winnode.ServiceRunning:
			ss.State, ss.PID = noderun.StateRunning, int(scm.ProcessID)
		case scm.State == winnode.ServicePending:
			ss.State = noderun.StateStarting
		case scm.ExitCode != 0:
			ss.State, ss.Restarts = noderun.StateBackoff, 1
			ss.LastExit = &noderun.ExitStatus{Code: int(scm.ExitCode)}
		default:
			ss.State, ss.WaitingFor = noderun.StateWaiting, "the node service to start it"
		}
		st.Services = append(st.Services, ss)
	}
	s.last = st
}
