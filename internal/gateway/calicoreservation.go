package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
)

// Calico IPAM ignores node.spec.podCIDR and hands out /26 blocks anywhere in its IP pools, so a
// Windows node's pod CIDR inside a pool can be given, block by block, to Linux nodes: duplicate
// pod addresses, and each such block is a blackhole route its Linux owner exports over BGP
// (projectcalico/calico v3.32.1 confd/etc/calico/confd/templates/bird_aggr.cfg.template: "route
// <block> blackhole" for every block affine to the host). The planner reserves the pod CIDRs of
// planned nodes (render.CalicoReservation); nodes that join later get a pod CIDR from
// kube-controller-manager that nothing reserves. CalicoReserver closes that gap from the live
// Node objects.
//
// Sources (projectcalico/calico v3.32.1, commit 0ca9d1b93644778cafdf1812f3dda02ac0c361e8):
//   - api/pkg/apis/projectcalico/v3/ipreservation.go: IPReservationSpec.ReservedCIDRs; a
//     reservation "only block[s] new allocations, [it does] not cause existing IP allocations to
//     be released", and is meant for "small numbers of IP addresses relative to the size of the
//     IP pool" — a few Windows /24s in a /16 pool.
//   - libcalico-go/config/crd/crd.projectcalico.org_ipreservations.yaml: the CRD (group
//     crd.projectcalico.org, version v1, cluster-scoped, spec.reservedCIDRs a list-type set, so
//     duplicates are invalid — hence the deduplication below).
//   - libcalico-go/lib/ipam/ipam.go autoAssign ("Skipping over reserved block") and
//     ipam_block_reader_writer.go findUsableBlock ("Skipping block that is entirely reserved"):
//     a block is never claimed when reservations cover it whole. A pod CIDR smaller than the
//     pool's block size covers no block whole, so the enclosing block can still be claimed; that
//     case is reported (CalicoConflictBlockSize).
//   - libcalico-go/lib/backend/model/block.go AllocationBlock: Affinity "host:<hostname>";
//     Allocations[i] non-nil means the i-th address of the block is in use.
//   - api/pkg/apis/projectcalico/v3/ippool.go: spec.cidr, spec.disabled, spec.blockSize (default
//     26 for IPv4, 122 for IPv6).

// CalicoReservationName names the IPReservation the gateway controller maintains. It is not
// render.CalicoReservationName on purpose: that object (cluster/calico-ipreservation.yaml, the
// planned nodes) is applied by an administrator with calicoctl or kubectl, which would replace
// this one's list and drop its ownership label, and this controller would have to overwrite
// theirs. Calico unions all reservations, so the two coexist.
const CalicoReservationName = "kubewin-gateway-windows-pod-cidrs"

// Calico keeps its IPAM resources in one of two API groups (projectcalico/calico v3.32.1
// libcalico-go/lib/backend/k8s/discovery.go UsingV3CRDs): crd.projectcalico.org/v1 CRDs (every
// release; with the Calico API server, projectcalico.org/v3 is served on top of them), or, since
// v3.32, projectcalico.org/v3 CRDs with no crd.projectcalico.org group at all.
var (
	calicoV1 = schema.GroupVersion{Group: "crd.projectcalico.org", Version: "v1"}
	calicoV3 = schema.GroupVersion{Group: "projectcalico.org", Version: "v3"}
)

// calicoAPIFor picks the group Calico's own components use, by Calico's rule: v3 only when
// projectcalico.org is served and crd.projectcalico.org is not. When both are served, the v3
// group is the Calico API server in front of the v1 CRDs, and Calico itself reads and writes the
// CRDs, so this controller writes them too: that needs no Calico API server, and the API server
// shows the same object (its v1-to-v3 conversion keeps the labels of the v1 object —
// libcalico-go/lib/backend/k8s/resources/resources.go ConvertK8sResourceToCalicoResource).
func calicoAPIFor(groups []string) (schema.GroupVersion, bool) {
	v1, v3 := slices.Contains(groups, calicoV1.Group), slices.Contains(groups, calicoV3.Group)
	switch {
	case v1:
		return calicoV1, true
	case v3:
		return calicoV3, true
	}
	return schema.GroupVersion{}, false
}

// CalicoPool is the part of a Calico IPPool the reservation needs.
type CalicoPool struct {
	Name      string
	CIDR      netip.Prefix
	BlockSize int // 0: Calico's default (26 for IPv4, 122 for IPv6)
	Disabled  bool
}

func (p CalicoPool) blockBits() int {
	if p.BlockSize > 0 {
		return p.BlockSize
	}
	if p.CIDR.Addr().Is4() {
		return 26
	}
	return 122
}

// CalicoBlock is the part of a Calico IPAM block the conflict check needs.
type CalicoBlock struct {
	Name     string
	CIDR     netip.Prefix
	Affinity string // "host:<node>", "virtual:<node>" or empty
	// InUse are the ordinals (address = block address + ordinal) Calico has assigned.
	InUse []int
}

// WindowsPodCIDR is one pod CIDR of one Windows node.
type WindowsPodCIDR struct {
	Node string
	CIDR netip.Prefix
}

// Kinds of CalicoConflict.
const (
	// CalicoConflictBlock: an existing IPAM block overlaps a Windows pod CIDR. Reserving stops
	// new assignments only; the block's owner keeps its addresses and exports the block route.
	CalicoConflictBlock = "IPAMBlock"
	// CalicoConflictBlockSize: the pod CIDR is smaller than the pool's blocks, so no block lies
	// wholly inside the reservation and Calico can still claim the enclosing one.
	CalicoConflictBlockSize = "BlockSize"
)

// CalicoConflict is Calico address space a Windows pod CIDR shares with someone else.
type CalicoConflict struct {
	Kind    string
	Node    string // the Windows node
	PodCIDR string
	Block   string // the IPAM block (CalicoConflictBlock) or the pool (CalicoConflictBlockSize)
	Owner   string // the node the block is affine to; empty when it is affine to none
	InUse   int    // addresses Calico assigned inside the pod CIDR
}

func (c CalicoConflict) String() string {
	switch c.Kind {
	case CalicoConflictBlockSize:
		return fmt.Sprintf("%s %s: smaller than the blocks of Calico IPPool %s; a reservation covers no block whole, so Calico can still give the enclosing block to another node",
			c.Node, c.PodCIDR, c.Block)
	default:
		owner := "no node"
		if c.Owner != "" {
			owner = "node " + c.Owner
		}
		return fmt.Sprintf("%s %s: Calico IPAM block %s belongs to %s with %d address(es) in use inside the pod CIDR; recreate those pods and release the block (calicoctl ipam release / ipam check)",
			c.Node, c.PodCIDR, c.Block, owner, c.InUse)
	}
}

// CalicoReservationStatus is what the reserver last found.
type CalicoReservationStatus struct {
	// APIVersion is the Calico group/version in use; empty when the cluster has no Calico IPAM
	// resources (nothing to reserve).
	APIVersion string
	// Reserved are the CIDRs in the IPReservation; Unreserved the wanted ones that are not (yet)
	// in it, e.g. because the write failed or the name is taken by an object kubewin does not own.
	Reserved   []string
	Unreserved []string
	Conflicts  []CalicoConflict
	// Err is the last failure ("" after a complete sync).
	Err string
}

func (s CalicoReservationStatus) equal(o CalicoReservationStatus) bool {
	return s.APIVersion == o.APIVersion && s.Err == o.Err && slices.Equal(s.Reserved, o.Reserved) &&
		slices.Equal(s.Unreserved, o.Unreserved) && slices.Equal(s.Conflicts, o.Conflicts)
}

// WindowsPodCIDRs returns the valid pod CIDRs of nodes (spec.podCIDRs, else spec.podCIDR),
// masked, sorted by CIDR then node; invalid ones are returned as "node: value" strings.
func WindowsPodCIDRs(nodes []*corev1.Node) (cidrs []WindowsPodCIDR, invalid []string) {
	for _, n := range nodes {
		vals := n.Spec.PodCIDRs
		if len(vals) == 0 && n.Spec.PodCIDR != "" {
			vals = []string{n.Spec.PodCIDR}
		}
		for _, v := range vals {
			p, err := netip.ParsePrefix(v)
			if err != nil {
				invalid = append(invalid, n.Name+": "+v)
				continue
			}
			cidrs = append(cidrs, WindowsPodCIDR{Node: n.Name, CIDR: p.Masked()})
		}
	}
	slices.SortFunc(cidrs, func(a, b WindowsPodCIDR) int {
		return cmp.Or(comparePrefix(a.CIDR, b.CIDR), strings.Compare(a.Node, b.Node))
	})
	slices.Sort(invalid)
	return cidrs, invalid
}

// DesiredCalicoReservation returns the CIDRs to reserve — every Windows pod CIDR that overlaps
// an enabled pool, sorted by address and deduplicated (two nodes briefly share a CIDR while one
// replaces the other) — and the pod CIDRs smaller than their pool's blocks. Disabled pools are
// skipped: Calico assigns nothing new from them (ippool.go Disabled).
func DesiredCalicoReservation(pools []CalicoPool, pods []WindowsPodCIDR) (reserve []netip.Prefix, small []CalicoConflict) {
	for _, pc := range pods {
		in := false
		for _, pool := range pools {
			if pool.Disabled || !pool.CIDR.Overlaps(pc.CIDR) {
				continue
			}
			in = true
			if pc.CIDR.Bits() > pool.blockBits() {
				small = append(small, CalicoConflict{Kind: CalicoConflictBlockSize, Node: pc.Node, PodCIDR: pc.CIDR.String(),
					Block: fmt.Sprintf("%s (%s, blocks /%d)", pool.Name, pool.CIDR, pool.blockBits())})
			}
		}
		if in {
			reserve = append(reserve, pc.CIDR)
		}
	}
	slices.SortFunc(reserve, comparePrefix)
	return slices.Compact(reserve), small
}

// CalicoBlockConflicts returns every IPAM block that overlaps a Windows pod CIDR, with the
// addresses Calico assigned inside the pod CIDR.
func CalicoBlockConflicts(pods []WindowsPodCIDR, blocks []CalicoBlock) []CalicoConflict {
	var out []CalicoConflict
	for _, pc := range pods {
		for _, b := range blocks {
			if !b.CIDR.Overlaps(pc.CIDR) {
				continue
			}
			owner, _ := strings.CutPrefix(b.Affinity, "host:")
			owner, _ = strings.CutPrefix(owner, "virtual:")
			out = append(out, CalicoConflict{Kind: CalicoConflictBlock, Node: pc.Node, PodCIDR: pc.CIDR.String(),
				Block: b.CIDR.String(), Owner: owner, InUse: inUseWithin(b, pc.CIDR)})
		}
	}
	return out
}

// inUseWithin counts b's assigned addresses inside p. Overlapping prefixes nest, so either the
// block lies inside p (all its addresses count) or p lies inside the block (a range of ordinals).
func inUseWithin(b CalicoBlock, p netip.Prefix) int {
	if p.Bits() <= b.CIDR.Bits() {
		return len(b.InUse)
	}
	first := ordinal(b.CIDR.Addr(), p.Addr())
	size := uint64(1) << (p.Addr().BitLen() - p.Bits())
	n := 0
	for _, i := range b.InUse {
		if uint64(i) >= first && uint64(i)-first < size {
			n++
		}
	}
	return n
}

// ordinal is a - base for addresses of one block (Calico blocks hold at most 2^12 addresses,
// so the low 64 bits hold the difference).
func ordinal(base, a netip.Addr) uint64 {
	x, y := base.As16(), a.As16()
	var d uint64
	for i := 8; i < 16; i++ {
		d = d<<8 | uint64(y[i])
	}
	var b uint64
	for i := 8; i < 16; i++ {
		b = b<<8 | uint64(x[i])
	}
	return d - b
}

func comparePrefix(a, b netip.Prefix) int {
	return cmp.Or(a.Addr().Compare(b.Addr()), cmp.Compare(a.Bits(), b.Bits()))
}

func sortConflicts(cs []CalicoConflict) {
	slices.SortFunc(cs, func(a, b CalicoConflict) int {
		return cmp.Or(strings.Compare(a.PodCIDR, b.PodCIDR), strings.Compare(a.Node, b.Node),
			strings.Compare(a.Kind, b.Kind), strings.Compare(a.Block, b.Block))
	})
}

// CalicoReserverOptions configure a CalicoReserver.
type CalicoReserverOptions struct {
	Client kubernetes.Interface
	// Dynamic reads and writes Calico's resources; nil derives one from Client's HTTP client
	// (the gateway command hands over only a typed clientset).
	Dynamic dynamic.Interface
	Log     *slog.Logger
	// Metrics receive the calico_* gauges and sync_errors_total{stage="calico-reservation"};
	// nil: unregistered metrics.
	Metrics *Metrics
	// Debounce is the quiet time after a Node change (default 50ms); Resync re-reads the API
	// groups, the pools and the reservation (default 30s); BlockCheck lists every IPAM block
	// for conflicts (default 5m; also whenever the Windows pod CIDRs change). Listing blocks is
	// the expensive part: thousands of objects with per-address arrays in a large cluster.
	Debounce   time.Duration
	Resync     time.Duration
	BlockCheck time.Duration
	// OnStatus is called (from the reserver's goroutine) whenever the status changes.
	OnStatus func(CalicoReservationStatus)
}

// CalicoReserver keeps one IPReservation, CalicoReservationName, equal to the Windows nodes'
// pod CIDRs (label DefaultWindowsNodeSelector) inside enabled Calico IP pools, and reports
// Calico IPAM blocks that already overlap them. It owns only that object (labelled
// app.kubernetes.io/managed-by=kubewin) and leaves any other reservation, and an object of the
// same name without the label, untouched.
//
// Every gateway member of every group runs one. They compute the same list from the same
// objects and write with optimistic concurrency (resourceVersion), so several writers converge
// instead of fighting; one that lost a race retries on the next event.
type CalicoReserver struct {
	o   CalicoReserverOptions
	dyn dynamic.Interface
	log *slog.Logger
	m   *Metrics

	trigger chan struct{}
	// Set by the Controller when it shares its Node watch (same selector); otherwise each Run
	// starts its own.
	lister listersv1.NodeLister
	synced func(context.Context) bool

	mu         sync.Mutex
	status     CalicoReservationStatus
	api        *schema.GroupVersion // nil: not looked up yet or looked up without Calico
	lastBlocks time.Time
	blocksKey  string
	blockConfl []CalicoConflict
	lastErr    string
}

// NewCalicoReserver checks the options; Run starts the work.
func NewCalicoReserver(o CalicoReserverOptions) (*CalicoReserver, error) {
	if o.Client == nil {
		return nil, errors.New("calico reservation: no Kubernetes client")
	}
	dyn := o.Dynamic
	if dyn == nil {
		var err error
		if dyn, err = dynamicFor(o.Client); err != nil {
			return nil, err
		}
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil, "", "")
	}
	if o.Debounce <= 0 {
		o.Debounce = 50 * time.Millisecond
	}
	if o.Resync <= 0 {
		o.Resync = 30 * time.Second
	}
	if o.BlockCheck <= 0 {
		o.BlockCheck = 5 * time.Minute
	}
	return &CalicoReserver{o: o, dyn: dyn, log: o.Log.With("component", "calico-reservation"), m: o.Metrics,
		trigger: make(chan struct{}, 1)}, nil
}

// Status returns what the last sync found.
func (r *CalicoReserver) Status() CalicoReservationStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

func (r *CalicoReserver) kick() {
	select {
	case r.trigger <- struct{}{}:
	default:
	}
}

// shareNodes makes the reserver read w's cache instead of starting its own watch; the owner of
// w must call kick on every Node change.
func (r *CalicoReserver) shareNodes(w *nodeWatch) {
	r.lister = w.lister
	r.synced = w.synced
}

// Run keeps the reservation until ctx ends. Nothing is written before the first complete Node
// list, and a failed read never shrinks the reservation (fail-static, like the VIPs).
func (r *CalicoReserver) Run(ctx context.Context) error {
	lister, synced := r.lister, r.synced
	if lister == nil {
		w, err := newNodeWatch(r.o.Client, DefaultWindowsNodeSelector, func(err error) {
			r.log.Debug("Windows Node watch failed; keeping the reservation as it is", "error", err)
		}, r.kick)
		if err != nil {
			return err
		}
		w.start(ctx)
		defer w.stop()
		lister, synced = w.lister, w.synced
	}
	if !synced(ctx) {
		return nil
	}
	resync := time.NewTicker(r.o.Resync)
	defer resync.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	backoff := time.Second
	full := true
	for {
		err := r.syncOnce(ctx, lister, full)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			retry.Reset(backoff)
			backoff = min(2*backoff, r.o.Resync)
		} else {
			backoff = time.Second
		}
		full = false
		select {
		case <-ctx.Done():
			return nil
		case <-r.trigger:
			r.debounce(ctx)
		case <-retry.C:
		case <-resync.C:
			full = true
		}
	}
}

func (r *CalicoReserver) debounce(ctx context.Context) {
	t := time.NewTimer(r.o.Debounce)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// syncOnce makes one pass; full also re-reads the API groups.
func (r *CalicoReserver) syncOnce(ctx context.Context, nodes listersv1.NodeLister, full bool) error {
	st, err := r.sync(ctx, nodes, full)
	if err != nil && ctx.Err() != nil {
		return err // shutting down: not a failure worth reporting
	}
	r.mu.Lock()
	prev := r.status
	if err != nil {
		st.Err = err.Error()
	}
	r.status = st
	repeated := err != nil && r.lastErr == err.Error()
	if err != nil {
		r.lastErr = err.Error()
	} else {
		r.lastErr = ""
	}
	r.mu.Unlock()

	r.m.CalicoReserved.Set(float64(len(st.Reserved)))
	r.m.CalicoUnreserved.Set(float64(len(st.Unreserved)))
	r.m.CalicoConflicts.Set(float64(len(st.Conflicts)))
	if err != nil {
		r.m.ReloadErrors.WithLabelValues("calico-reservation").Inc()
		if !repeated { // every retry would say it again
			r.log.Error("Calico IPReservation not in line with the Windows nodes; retrying", "error", err,
				"unreserved", strings.Join(st.Unreserved, ","))
		}
	}
	if !slices.Equal(prev.Reserved, st.Reserved) {
		r.log.Info("Calico IPReservation updated", "name", CalicoReservationName, "api", st.APIVersion,
			"reserved", summarize(st.Reserved))
	}
	for _, c := range st.Conflicts {
		if !slices.Contains(prev.Conflicts, c) {
			r.log.Warn("Windows pod CIDR shares Calico address space", "conflict", c.String())
		}
	}
	if !prev.equal(st) && r.o.OnStatus != nil {
		r.o.OnStatus(st)
	}
	return err
}

// sync computes and applies the reservation. The returned status is meaningful also with an
// error (what is reserved and what is not).
func (r *CalicoReserver) sync(ctx context.Context, lister listersv1.NodeLister, full bool) (CalicoReservationStatus, error) {
	var st CalicoReservationStatus
	nodes, err := lister.List(labels.Everything())
	if err != nil {
		return r.keep(), fmt.Errorf("list cached Windows nodes: %w", err)
	}
	pods, invalid := WindowsPodCIDRs(nodes)
	if len(invalid) > 0 {
		r.log.Debug("Windows nodes with unparsable pod CIDRs are not reserved", "nodes", strings.Join(invalid, "; "))
	}

	gv, found, err := r.calicoAPI(ctx, full)
	if err != nil {
		return r.keep(), err
	}
	if !found {
		return st, nil
	}
	st.APIVersion = gv.String()
	pools, found, err := r.listPools(ctx, gv)
	if err != nil {
		return r.keep(), err
	}
	if !found {
		return CalicoReservationStatus{}, nil // the group is there, Calico IPAM is not
	}
	want, small := DesiredCalicoReservation(pools, pods)
	wantS := prefixStrings(want)

	st.Reserved, err = r.apply(ctx, gv, wantS)
	for _, w := range wantS {
		if !slices.Contains(st.Reserved, w) {
			st.Unreserved = append(st.Unreserved, w)
		}
	}
	blocks, berr := r.blockConflicts(ctx, gv, pods)
	st.Conflicts = append(append([]CalicoConflict(nil), small...), blocks...)
	sortConflicts(st.Conflicts)
	return st, errors.Join(err, berr)
}

// keep returns the last status with the reservation as last seen: a failed read says nothing
// new about it.
func (r *CalicoReserver) keep() CalicoReservationStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.status
	s.Err = ""
	return s
}

// calicoAPI returns the Calico group/version, looked up again on every full pass (Calico may be
// installed or switched after the controller started).
func (r *CalicoReserver) calicoAPI(ctx context.Context, full bool) (schema.GroupVersion, bool, error) {
	r.mu.Lock()
	cached := r.api
	r.mu.Unlock()
	if cached != nil && !full {
		return *cached, true, nil
	}
	if err := ctx.Err(); err != nil {
		return schema.GroupVersion{}, false, err
	}
	groups, err := r.o.Client.Discovery().ServerGroups()
	if err != nil {
		return schema.GroupVersion{}, false, fmt.Errorf("discover API groups for Calico: %w", err)
	}
	var names []string
	for _, g := range groups.Groups {
		names = append(names, g.Name)
	}
	gv, ok := calicoAPIFor(names)
	r.mu.Lock()
	if ok {
		r.api = &gv
	} else {
		r.api = nil
	}
	r.mu.Unlock()
	return gv, ok, nil
}

// listCalico lists resource page by page; found is false when the resource is not served.
func (r *CalicoReserver) listCalico(ctx context.Context, gv schema.GroupVersion, resource string, each func(*unstructured.Unstructured)) (bool, error) {
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := r.dyn.Resource(gv.WithResource(resource)).List(ctx, opts)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("list %s.%s/%s: %w", resource, gv.Group, gv.Version, err)
		}
		for i := range list.Items {
			each(&list.Items[i])
		}
		if list.GetContinue() == "" {
			return true, nil
		}
		opts.Continue = list.GetContinue()
	}
}

func (r *CalicoReserver) listPools(ctx context.Context, gv schema.GroupVersion) ([]CalicoPool, bool, error) {
	var pools []CalicoPool
	found, err := r.listCalico(ctx, gv, "ippools", func(u *unstructured.Unstructured) {
		cidr, _, _ := unstructured.NestedString(u.Object, "spec", "cidr")
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			r.log.Debug("Calico IPPool with an unparsable CIDR ignored", "pool", u.GetName(), "cidr", cidr)
			return
		}
		disabled, _, _ := unstructured.NestedBool(u.Object, "spec", "disabled")
		block, _, _ := unstructured.NestedInt64(u.Object, "spec", "blockSize")
		pools = append(pools, CalicoPool{Name: u.GetName(), CIDR: p.Masked(), BlockSize: int(block), Disabled: disabled})
	})
	return pools, found, err
}

// apply makes the owned IPReservation hold want (deleted when want is empty) and returns what
// it holds afterwards.
func (r *CalicoReserver) apply(ctx context.Context, gv schema.GroupVersion, want []string) ([]string, error) {
	res := r.dyn.Resource(gv.WithResource("ipreservations"))
	cur, err := res.Get(ctx, CalicoReservationName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if len(want) == 0 {
			return nil, nil
		}
		obj := calicoReservationObject(gv, want)
		if _, err := res.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			if apierrors.IsAlreadyExists(err) {
				r.kick() // another member was first; compare with theirs
			}
			return nil, fmt.Errorf("create IPReservation %s (%s): %w", CalicoReservationName, gv, err)
		}
		return want, nil
	case err != nil:
		return r.reservedSoFar(), fmt.Errorf("get IPReservation %s (%s): %w", CalicoReservationName, gv, err)
	}
	have, _, _ := unstructured.NestedStringSlice(cur.Object, "spec", "reservedCIDRs")
	if cur.GetLabels()[managedByLabel] != "kubewin" {
		return nil, fmt.Errorf("IPReservation %s (%s) exists but is not labelled %s=kubewin; it is left alone and the Windows pod CIDRs stay unreserved until it is removed or labelled",
			CalicoReservationName, gv, managedByLabel)
	}
	if len(want) == 0 {
		uid, rv := cur.GetUID(), cur.GetResourceVersion()
		err := res.Delete(ctx, CalicoReservationName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
		if err != nil && !apierrors.IsNotFound(err) {
			return have, fmt.Errorf("delete IPReservation %s (%s): %w", CalicoReservationName, gv, err)
		}
		return nil, nil
	}
	if slices.Equal(have, want) {
		return have, nil
	}
	if err := unstructured.SetNestedStringSlice(cur.Object, want, "spec", "reservedCIDRs"); err != nil {
		return have, fmt.Errorf("set reservedCIDRs of IPReservation %s: %w", CalicoReservationName, err)
	}
	// The resourceVersion read above makes this a compare-and-swap against other members.
	if _, err := res.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return have, fmt.Errorf("update IPReservation %s (%s): %w", CalicoReservationName, gv, err)
	}
	return want, nil
}

func (r *CalicoReserver) reservedSoFar() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status.Reserved
}

func calicoReservationObject(gv schema.GroupVersion, cidrs []string) *unstructured.Unstructured {
	list := make([]any, len(cidrs))
	for i, c := range cidrs {
		list[i] = c
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gv.String(),
		"kind":       "IPReservation",
		"metadata": map[string]any{
			"name": CalicoReservationName,
			"labels": map[string]any{
				managedByLabel:           "kubewin",
				"app.kubernetes.io/name": "kubewin-gateway",
			},
			"annotations": map[string]any{
				"kubewin.io/description": "Pod CIDRs of the Windows nodes (kubernetes.io/os=windows) inside Calico IP pools, kept by the kubewin gateway controllers; Calico IPAM must not assign them.",
			},
		},
		"spec": map[string]any{"reservedCIDRs": list},
	}}
}

// blockConflicts lists the IPAM blocks when the Windows pod CIDRs changed or BlockCheck passed,
// and otherwise returns the last result.
func (r *CalicoReserver) blockConflicts(ctx context.Context, gv schema.GroupVersion, pods []WindowsPodCIDR) ([]CalicoConflict, error) {
	var key strings.Builder
	for _, p := range pods {
		key.WriteString(p.Node + "=" + p.CIDR.String() + ";")
	}
	r.mu.Lock()
	fresh := r.blocksKey == key.String() && time.Since(r.lastBlocks) < r.o.BlockCheck
	last := r.blockConfl
	r.mu.Unlock()
	if fresh {
		return last, nil
	}
	if len(pods) == 0 {
		r.rememberBlocks(key.String(), nil)
		return nil, nil
	}
	var blocks []CalicoBlock
	_, err := r.listCalico(ctx, gv, "ipamblocks", func(u *unstructured.Unstructured) {
		cidr, _, _ := unstructured.NestedString(u.Object, "spec", "cidr")
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			return
		}
		aff, _, _ := unstructured.NestedString(u.Object, "spec", "affinity")
		allocs, _, _ := unstructured.NestedSlice(u.Object, "spec", "allocations")
		b := CalicoBlock{Name: u.GetName(), CIDR: p.Masked(), Affinity: aff}
		for i, a := range allocs {
			if a != nil {
				b.InUse = append(b.InUse, i)
			}
		}
		blocks = append(blocks, b)
	})
	if err != nil {
		return last, err
	}
	out := CalicoBlockConflicts(pods, blocks)
	r.rememberBlocks(key.String(), out)
	return out, nil
}

func (r *CalicoReserver) rememberBlocks(key string, c []CalicoConflict) {
	r.mu.Lock()
	r.blocksKey, r.lastBlocks, r.blockConfl = key, time.Now(), c
	r.mu.Unlock()
}

// dynamicFor derives a dynamic client from a typed clientset: the same HTTP client (TLS,
// credentials, impersonation) and server URL, with the dynamic client's JSON content handling.
// dynamic.New over the clientset's REST client itself does not work: that client's serializer
// cannot encode unstructured objects ("encoding is not allowed for this codec").
func dynamicFor(client kubernetes.Interface) (dynamic.Interface, error) {
	rc, ok := client.Discovery().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil || rc.Client == nil {
		return nil, fmt.Errorf("calico reservation: cannot derive a dynamic client from %T; set Options.Dynamic", client)
	}
	u := rc.Get().URL()
	host := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: strings.TrimSuffix(u.Path, "/")}).String()
	dyn, err := dynamic.NewForConfigAndClient(&rest.Config{Host: host, UserAgent: "kubewin-gateway"}, rc.Client)
	if err != nil {
		return nil, fmt.Errorf("calico reservation: dynamic client for %s: %w", host, err)
	}
	return dyn, nil
}

// sameSelector reports whether two label selectors (kubectl syntax) select the same labels.
func sameSelector(a, b string) bool {
	sa, errA := labels.Parse(a)
	sb, errB := labels.Parse(b)
	return errA == nil && errB == nil && sa.String() == sb.String()
}

func prefixStrings(ps []netip.Prefix) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}
