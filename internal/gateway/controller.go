//go:build linux

package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"k8s.io/apimachinery/pkg/labels"
	listersv1 "k8s.io/client-go/listers/core/v1"

	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/render"
)

// Controller keeps one member's keepalived configuration in line with the Windows Nodes.
type Controller struct {
	o      Options
	self   plan.GatewayMemberPlan
	log    *slog.Logger
	m      *Metrics
	nl     *netlink.Handle
	lister listersv1.NodeLister

	trigger  chan struct{}
	addrKick chan struct{}

	mu          sync.Mutex
	pendingFrom time.Time // first Node change not yet synced
	installed   *plan.GatewayGroupPlan
	configHash  string
	skipped     map[string]string
	hold        Holding
	statusDirty chan struct{}
	synced      chan struct{}
	syncedOnce  sync.Once
	apiUp       bool
	lastErr     string
	// rank is the member's position by priority (0 = highest); see staggerNewInstances.
	rank         int
	staggerKey   string
	staggerUntil time.Time
	removeAt     map[int]time.Time
	lastInstall  time.Time

	// res keeps Calico IPAM away from the Windows pod CIDRs (nil: disabled); calico is its last
	// status, reported in the member's status object.
	res    *CalicoReserver
	calico CalicoReservationStatus
}

// NewController checks the options; Run starts the work.
func NewController(o Options) (*Controller, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, fmt.Errorf("gateway group config: %w", err)
	}
	self, ok := o.Config.Member(o.NodeName)
	if !ok {
		return nil, fmt.Errorf("node %q is not a member of gateway group %s", o.NodeName, o.Config.Name)
	}
	if o.ConfigPath == "" {
		return nil, errors.New("keepalived config path is empty")
	}
	if o.Client == nil {
		return nil, errors.New("no Kubernetes client")
	}
	if o.Validate == nil {
		o.Validate = render.ValidateKeepalived
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil, o.Config.Name, o.NodeName)
	}
	if o.Debounce <= 0 {
		o.Debounce = 50 * time.Millisecond
	}
	if o.MaxDelay < o.Debounce {
		o.MaxDelay = 500 * time.Millisecond
	}
	if o.Resync <= 0 {
		o.Resync = 30 * time.Second
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 60 * time.Second
	}
	nl, err := openNetlink(o.NetNS)
	if err != nil {
		return nil, err
	}
	if o.MinReloadInterval <= 0 {
		o.MinReloadInterval = 500 * time.Millisecond
	}
	if o.StaggerStep <= 0 {
		o.StaggerStep = max(time.Second, time.Duration(10*o.Config.AdvertIntervalSeconds*float64(time.Second)))
	}
	rank := 0
	for _, m := range o.Config.Members {
		if m.Priority > self.Priority || (m.Priority == self.Priority && m.Node < self.Node) {
			rank++
		}
	}
	c := &Controller{
		o: o, self: self, m: o.Metrics, nl: nl, rank: rank, removeAt: map[int]time.Time{},
		log:         o.Log.With("group", o.Config.Name, "member", o.NodeName),
		trigger:     make(chan struct{}, 1),
		addrKick:    make(chan struct{}, 1),
		statusDirty: make(chan struct{}, 1),
		synced:      make(chan struct{}),
	}
	if !o.DisableCalicoReservation {
		c.res, err = NewCalicoReserver(CalicoReserverOptions{
			Client: o.Client, Dynamic: o.Dynamic, Log: c.log, Metrics: o.Metrics,
			Debounce: o.Debounce, Resync: o.Resync, BlockCheck: o.CalicoBlockCheck,
			OnStatus: c.setCalicoStatus,
		})
		if err != nil {
			nl.Close()
			return nil, err
		}
	}
	return c, nil
}

// CalicoReservation returns what the Calico reservation last found (zero when disabled).
func (c *Controller) CalicoReservation() CalicoReservationStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calico
}

func (c *Controller) setCalicoStatus(s CalicoReservationStatus) {
	c.mu.Lock()
	c.calico = s
	c.mu.Unlock()
	c.markStatusDirty()
}

// Synced is closed after the first successful sync from a complete Node list.
func (c *Controller) Synced() <-chan struct{} { return c.synced }

// Holding returns what this member holds right now (as last observed).
func (c *Controller) Holding() Holding {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hold
}

// Installed returns the layout of the installed configuration (nil before the first sync).
func (c *Controller) Installed() *plan.GatewayGroupPlan {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.installed
}

// Run watches Nodes and keeps keepalived configured until ctx ends. It returns only on ctx end
// or when the informer cannot be set up; API outages are waited out (fail-static).
func (c *Controller) Run(ctx context.Context) error {
	defer c.nl.Close()
	// The reservation covers every Windows node; when the group serves exactly those, it reads
	// this watch's cache instead of keeping a second copy of the same Nodes.
	onNode := c.nodeEvent
	shareNodes := c.res != nil && sameSelector(c.o.Config.WindowsNodeSelector, DefaultWindowsNodeSelector)
	if shareNodes {
		onNode = func() { c.nodeEvent(); c.res.kick() }
	}
	nodes, err := newNodeWatch(c.o.Client, c.o.Config.WindowsNodeSelector,
		func(err error) { c.setAPI(false, err) }, onNode)
	if err != nil {
		return err
	}
	c.lister = nodes.lister
	if shareNodes {
		c.res.shareNodes(nodes)
	}
	nodes.start(ctx)
	defer nodes.stop()

	var wg sync.WaitGroup
	defer wg.Wait()
	if c.res != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.res.Run(ctx); err != nil {
				c.log.Error("Calico reservation stopped", "error", err)
			}
		}()
	}
	wg.Add(4)
	go func() { defer wg.Done(); c.watchAddrs(ctx) }()
	go func() { defer wg.Done(); c.watchKeepalived(ctx) }()
	go func() { defer wg.Done(); c.reportStatus(ctx) }()
	go func() { defer wg.Done(); c.probeAPI(ctx) }()

	c.log.Info("waiting for the first complete Node list; the installed keepalived configuration stays in force meanwhile",
		"selector", nodes.selector.String(), "config", c.o.ConfigPath)
	if !nodes.synced(ctx) {
		return nil
	}
	c.setAPI(true, nil)
	c.kick()
	resync := time.NewTicker(c.o.Resync)
	defer resync.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-resync.C:
			c.syncOnce(ctx)
		case <-c.trigger:
			c.debounce(ctx)
			c.syncOnce(ctx)
		}
	}
}

// onceKeepWait bounds RunOnce's wait for the API server when a configuration already exists.
const onceKeepWait = 10 * time.Second

// RunOnce waits for the first complete Node list (at most until ctx ends), installs the
// configuration once and returns. It is the DaemonSet's init step, so keepalived starts on a
// current file; if the API server cannot be reached, an existing file is kept (fail-static
// across restarts) and RunOnce reports it without error.
func (c *Controller) RunOnce(ctx context.Context) (kept bool, err error) {
	if _, err := os.Stat(c.o.ConfigPath); err == nil {
		// A configuration from before the restart exists: keepalived should not wait long
		// for an API server that may be down; the running controller catches up later.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, onceKeepWait)
		defer cancel()
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(rctx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-c.synced:
		return false, nil
	case err := <-done:
		return false, err
	case <-ctx.Done():
	}
	c.mu.Lock()
	last := c.lastErr
	c.mu.Unlock()
	if last != "" {
		return false, fmt.Errorf("no configuration installed: %s", last)
	}
	if _, statErr := os.Stat(c.o.ConfigPath); statErr == nil {
		return true, nil
	}
	return false, fmt.Errorf("no complete Node list before the deadline and no configuration at %s to keep", c.o.ConfigPath)
}

// debounce waits for Debounce without further Node changes, at most MaxDelay in total, so a
// burst of changes (a scale-out of 100 Windows nodes) becomes one reload.
func (c *Controller) debounce(ctx context.Context) {
	deadline := time.NewTimer(c.o.MaxDelay)
	defer deadline.Stop()
	for {
		quiet := time.NewTimer(c.o.Debounce)
		select {
		case <-ctx.Done():
			quiet.Stop()
			return
		case <-deadline.C:
			quiet.Stop()
			return
		case <-quiet.C:
			return
		case <-c.trigger:
			quiet.Stop()
		}
	}
}

// nodeEvent is a Node change from the watch: evidence that the API server is reachable.
func (c *Controller) nodeEvent() {
	c.mu.Lock()
	if !c.apiUp {
		c.apiUp = true
		c.m.APIReachable.Set(1)
		c.log.Info("Node watch delivering events again")
	}
	if c.pendingFrom.IsZero() {
		c.pendingFrom = time.Now()
	}
	c.mu.Unlock()
	c.kick()
}

// kick asks the sync loop for a sync (coalesced).
func (c *Controller) kick() {
	select {
	case c.trigger <- struct{}{}:
	default:
	}
}

// probeAPI asks the API server's /readyz (readable by every client) so api_reachable also
// turns when nothing changes: a watch that ends cleanly on an API server shutdown reports no
// error to the informer.
func (c *Controller) probeAPI(ctx context.Context) {
	interval := min(c.o.Resync, 10*time.Second)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, interval)
		_, err := c.o.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		c.setAPI(err == nil, err)
	}
}

func (c *Controller) setAPI(up bool, err error) {
	c.mu.Lock()
	changed := c.apiUp != up
	c.apiUp = up
	c.mu.Unlock()
	if up {
		c.m.APIReachable.Set(1)
	} else {
		c.m.APIReachable.Set(0)
	}
	if changed && !up {
		c.log.Warn("API server unreachable; keeping the last known gateway set (fail-static)", "error", err)
	} else if changed {
		c.log.Info("API server reachable")
	}
}

// syncOnce renders the desired configuration from the informer cache and installs it if it
// differs. Every failure leaves the installed file and keepalived untouched.
func (c *Controller) syncOnce(ctx context.Context) {
	c.mu.Lock()
	from := c.pendingFrom
	c.pendingFrom = time.Time{}
	c.mu.Unlock()

	nodes, err := c.lister.List(labels.Everything())
	if err != nil {
		c.fail("layout", fmt.Errorf("list cached nodes: %w", err))
		return
	}
	g, skipped, err := Layout(c.o.Config, nodes)
	c.reportSkipped(skipped)
	if err != nil {
		c.fail("layout", err)
		return
	}
	g = c.staggerNewInstances(g)
	g = c.removeHeldInstancesLast(g)
	data, err := render.KeepalivedConfig(g, c.o.NodeName)
	if err != nil {
		c.fail("render", err)
		return
	}
	if wait := c.reloadBackoff(data); wait > 0 {
		time.AfterFunc(wait, c.kick)
		return
	}
	changed, stage, err := installConfig(ctx, c.o.ConfigPath, data, c.o.Validate)
	if err != nil {
		c.fail(stage, err)
		return
	}
	sum := sha256.Sum256(data)
	c.mu.Lock()
	if c.lastErr != "" {
		c.log.Info("sync recovered")
		c.lastErr = ""
	}
	prev := c.installed
	c.installed = &g
	c.configHash = hex.EncodeToString(sum[:8])
	c.mu.Unlock()
	c.m.VIPsConfigured.Set(float64(vipCount(g)))
	c.m.LastSync.SetToCurrentTime()
	if changed {
		c.mu.Lock()
		c.lastInstall = time.Now()
		c.mu.Unlock()
		c.logLayoutChange(prev, g)
		if c.o.Reloader != nil {
			if err := c.o.Reloader.Reload(); errors.Is(err, ErrNotRunning) {
				c.log.Warn("configuration installed; keepalived not running, it reads the file when it starts", "reason", err)
			} else if err != nil {
				c.fail("reload", err)
			} else {
				c.m.Reloads.Inc()
				c.m.LastReload.SetToCurrentTime()
			}
		}
		if !from.IsZero() {
			c.m.SyncDuration.Observe(time.Since(from).Seconds())
		}
		c.markStatusDirty()
	}
	c.syncedOnce.Do(func() { close(c.synced) })
	c.kickAddrs() // re-read addresses against the new layout
}

// staggerNewInstances withholds VRRP instances this member has not installed yet for
// rank × StaggerStep (rank 0 = highest priority). All members start a new instance in BACKUP;
// if they start within a few milliseconds of each other, their down timers (which differ only
// by the priority skew, 4 ms at advert 0.05 s) expire together and every member becomes MASTER
// until their adverts cross. Starting the instance on the highest-priority member first lets it
// become MASTER alone; the others start it later and hear its adverts. Instances already
// installed are updated at once, so VIP changes inside them are not delayed.
func (c *Controller) staggerNewInstances(g plan.GatewayGroupPlan) plan.GatewayGroupPlan {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rank == 0 || c.installed == nil {
		return g
	}
	have := map[int]bool{}
	for _, in := range c.installed.Instances {
		have[in.VRID] = true
	}
	var added []int
	for _, in := range g.Instances {
		if !have[in.VRID] {
			added = append(added, in.VRID)
		}
	}
	if len(added) == 0 {
		c.staggerKey = ""
		return g
	}
	key := fmt.Sprint(added)
	now := time.Now()
	if c.staggerKey != key {
		c.staggerKey = key
		wait := time.Duration(c.rank) * c.o.StaggerStep
		c.staggerUntil = now.Add(wait)
		time.AfterFunc(wait, c.kick)
		c.log.Info("new VRRP instances start here after higher-priority members", "vrids", key, "in", wait)
	}
	if now.Before(c.staggerUntil) {
		return withoutInstances(g, added)
	}
	c.staggerKey = ""
	return g
}

// removeHeldInstancesLast keeps, for StaggerStep, a VRRP instance that disappeared from the
// layout (its last Windows node is gone) if this member holds it. If the holder dropped it
// first, a member that still has the instance would stop hearing adverts and take its VIPs
// over — a needless failover, and for a moment both would hold them. Members that do not hold
// the instance drop it at once; the holder drops it last, when nobody can take over.
func (c *Controller) removeHeldInstancesLast(g plan.GatewayGroupPlan) plan.GatewayGroupPlan {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.installed == nil {
		return g
	}
	want := map[int]bool{}
	for _, in := range g.Instances {
		want[in.VRID] = true
	}
	held := map[string]bool{}
	for _, name := range c.hold.Instances {
		held[name] = true
	}
	var keep []plan.VRRPInstancePlan
	for _, in := range c.installed.Instances {
		if want[in.VRID] || !held[in.Name] {
			continue
		}
		until, ok := c.removeAt[in.VRID]
		if !ok {
			until = time.Now().Add(c.o.StaggerStep)
			c.removeAt[in.VRID] = until
			time.AfterFunc(c.o.StaggerStep, c.kick)
			c.log.Info("holder removes VRRP instance after the other members", "instance", in.Name, "in", c.o.StaggerStep)
		}
		if time.Now().Before(until) {
			keep = append(keep, in)
		}
	}
	kept := map[int]bool{}
	for _, in := range keep {
		kept[in.VRID] = true
	}
	for vrid := range c.removeAt {
		if !kept[vrid] {
			delete(c.removeAt, vrid)
		}
	}
	if len(keep) == 0 {
		return g
	}
	out := g
	out.Instances = append(append([]plan.VRRPInstancePlan(nil), g.Instances...), keep...)
	sort.Slice(out.Instances, func(i, j int) bool { return out.Instances[i].VRID < out.Instances[j].VRID })
	out.VRIDs, out.VIPs = nil, nil
	for _, in := range out.Instances {
		out.VRIDs = append(out.VRIDs, in.VRID)
		for _, v := range in.VIPs {
			out.VIPs = append(out.VIPs, v.Address)
		}
	}
	return out
}

// reloadBackoff returns how long to wait before installing data: a changed configuration is
// installed at most every MinReloadInterval, so a churn of many Nodes becomes a few reloads
// (each keepalived reload re-parses the whole file and briefly pauses its adverts).
func (c *Controller) reloadBackoff(data []byte) time.Duration {
	c.mu.Lock()
	last := c.lastInstall
	c.mu.Unlock()
	wait := time.Until(last.Add(c.o.MinReloadInterval))
	if wait <= 0 {
		return 0
	}
	if cur, err := os.ReadFile(c.o.ConfigPath); err == nil && string(cur) == string(data) {
		return 0 // nothing to install
	}
	return wait
}

// withoutInstances returns g without the instances whose VRIDs are listed.
func withoutInstances(g plan.GatewayGroupPlan, vrids []int) plan.GatewayGroupPlan {
	drop := map[int]bool{}
	for _, v := range vrids {
		drop[v] = true
	}
	out := g
	out.Instances, out.VRIDs, out.VIPs = nil, nil, nil
	for _, in := range g.Instances {
		if drop[in.VRID] {
			continue
		}
		out.Instances = append(out.Instances, in)
		out.VRIDs = append(out.VRIDs, in.VRID)
		for _, v := range in.VIPs {
			out.VIPs = append(out.VIPs, v.Address)
		}
	}
	return out
}

func (c *Controller) fail(stage string, err error) {
	c.m.ReloadErrors.WithLabelValues(stage).Inc()
	c.mu.Lock()
	repeated := c.lastErr == err.Error()
	c.lastErr = err.Error()
	c.mu.Unlock()
	if !repeated { // every resync retries; say it once until it changes
		c.log.Error("sync failed; the installed keepalived configuration stays in force", "stage", stage, "error", err)
	}
}

func (c *Controller) reportSkipped(skipped []Skipped) {
	now := make(map[string]string, len(skipped))
	for _, s := range skipped {
		now[s.Node+"/"+s.UID] = s.Reason
	}
	c.mu.Lock()
	prev := c.skipped
	c.skipped = now
	c.mu.Unlock()
	for k, r := range now {
		if prev[k] != r {
			c.log.Warn("Windows node gets no gateway VIP", "node", k, "reason", r)
		}
	}
	c.m.SkippedNodes.Set(float64(len(skipped)))
}

func (c *Controller) logLayoutChange(prev *plan.GatewayGroupPlan, g plan.GatewayGroupPlan) {
	var before []string
	if prev != nil {
		before = prev.VIPs
	}
	removed, added := diffStrings(sortedCopy(before), sortedCopy(g.VIPs))
	c.log.Info("keepalived configuration changed",
		"vips", vipCount(g), "instances", len(g.Instances), "added", summarize(added), "removed", summarize(removed))
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// watchAddrs follows address changes on the gateway interface with a netlink subscription in
// the member's namespace and recomputes what the member holds.
func (c *Controller) watchAddrs(ctx context.Context) {
	for ctx.Err() == nil {
		updates := make(chan netlink.AddrUpdate, 256)
		done := make(chan struct{})
		errc := make(chan error, 1)
		opts := netlink.AddrSubscribeOptions{Namespace: c.o.NetNS, ErrorCallback: func(err error) {
			select {
			case errc <- err:
			default:
			}
		}}
		if err := netlink.AddrSubscribeWithOptions(updates, done, opts); err != nil {
			c.log.Error("subscribe to address changes; polling instead", "error", err)
		}
		c.observe()
		ticker := time.NewTicker(c.o.Resync)
	loop:
		for {
			select {
			case <-ctx.Done():
				break loop
			case _, ok := <-updates:
				if !ok {
					break loop
				}
				// Drain a burst (keepalived adds hundreds of VIPs at once) before reading.
				if !drainAddrs(updates) {
					break loop
				}
				c.observe()
			case <-c.addrKick:
				c.observe()
			case <-ticker.C:
				c.observe()
			case err := <-errc:
				c.log.Warn("address subscription failed; resubscribing", "error", err)
				break loop
			}
		}
		ticker.Stop()
		close(done)
	}
}

// observe reads the interface addresses and logs holder transitions per VRRP instance.
func (c *Controller) observe() {
	c.mu.Lock()
	g := c.installed
	c.mu.Unlock()
	if g == nil {
		return
	}
	addrs, err := heldAddrs(c.nl, c.o.Config.Interface)
	if err != nil {
		c.log.Error("read held addresses", "error", err)
		return
	}
	h := holding(*g, addrs)
	c.mu.Lock()
	prev := c.hold
	c.hold = h
	c.mu.Unlock()
	released, acquired := diffStrings(prev.Instances, h.Instances)
	for _, in := range acquired {
		c.m.Failovers.Inc()
		c.log.Info("became holder of VRRP instance", "instance", in)
	}
	for _, in := range released {
		c.m.Releases.Inc()
		c.log.Info("no longer holder of VRRP instance", "instance", in)
	}
	c.m.VIPsHeld.Set(float64(len(h.VIPs)))
	c.m.InstancesHeld.Set(float64(len(h.Instances)))
	if len(acquired)+len(released) > 0 || !slices.Equal(prev.VIPs, h.VIPs) {
		c.markStatusDirty()
	}
}

func (c *Controller) markStatusDirty() {
	select {
	case c.statusDirty <- struct{}{}:
	default:
	}
}
