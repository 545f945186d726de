package noderun

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sort"
	"sync"
	"time"
)

// Defaults for the zero values of Supervisor's tuning fields.
const (
	DefaultStartGrace  = 2 * time.Second
	DefaultBackoffMin  = time.Second
	DefaultBackoffMax  = 30 * time.Second
	DefaultStopGrace   = 10 * time.Second
	DefaultPoll        = time.Second
	DefaultMaxLogBytes = 10 << 20
	DefaultMaxLogFiles = 5

	// defaultBackoffReset: a service that stayed up this long before exiting is considered
	// healthy again, so its next restart waits only BackoffMin.
	defaultBackoffReset = 60 * time.Second
	// groupPoll is how often a stop checks whether a service's process group is empty.
	groupPoll = 50 * time.Millisecond
)

// Supervisor runs the services of a manifest. The zero value of each tuning field selects its
// default. A Supervisor must not be copied after first use.
type Supervisor struct {
	// ManifestPath is the manifest written by `kubewin join`; re-read every Poll.
	ManifestPath string
	// StatusPath, if set, receives the Status after every change.
	StatusPath string
	// Logger receives the supervisor's own events; nil means slog.Default().
	Logger *slog.Logger

	// StartGrace is how long a process must stay alive to count as running, which is what
	// services that come After it wait for.
	StartGrace time.Duration
	// BackoffMin is the delay before the first restart after an exit; it doubles with every
	// further exit up to BackoffMax.
	BackoffMin, BackoffMax time.Duration
	// StopGrace is how long a stopping process group has between SIGTERM and SIGKILL.
	StopGrace time.Duration
	// Poll is how often the manifest and the WaitFiles are checked.
	Poll time.Duration
	// MaxLogBytes bounds one log file; MaxLogFiles is how many rotated files
	// (LogFile.1 ... LogFile.<MaxLogFiles>) are kept besides LogFile itself.
	MaxLogBytes int64
	MaxLogFiles int

	// backoffReset overrides defaultBackoffReset (tests only; a minute is too long to wait).
	backoffReset time.Duration

	mu      sync.Mutex
	reqs    chan restartReq // nil while Run is not running
	stopped chan struct{}   // closed when the current Run returns
	status  Status
}

type restartReq struct {
	name  string
	reply chan error
}

// Status returns a snapshot of the state of all services (empty before Run started).
func (s *Supervisor) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status.clone()
}

// Restart stops the named service's process (SIGTERM, then SIGKILL after StopGrace) and starts
// it again without backoff, once its dependencies and files allow. A service waiting out its
// backoff is started right away. It returns once the restart is under way, not when it is done.
// Safe to call from any goroutine while Run runs.
func (s *Supervisor) Restart(name string) error {
	s.mu.Lock()
	reqs, stopped := s.reqs, s.stopped
	s.mu.Unlock()
	notRunning := fmt.Errorf("restart %s: supervisor is not running", name)
	if reqs == nil {
		return notRunning
	}
	req := restartReq{name: name, reply: make(chan error, 1)}
	select {
	case reqs <- req:
	case <-stopped:
		return notRunning
	}
	select {
	case err := <-req.reply:
		return err
	case <-stopped:
		return notRunning
	}
}

// Run supervises the services until ctx is cancelled, then stops them all (dependents before
// their dependencies) and returns nil. It returns an error only if it cannot start at all.
func (s *Supervisor) Run(ctx context.Context) error {
	if s.ManifestPath == "" {
		return errors.New("run node services: no manifest path")
	}
	s.mu.Lock()
	if s.reqs != nil {
		s.mu.Unlock()
		return errors.New("run node services: supervisor already running")
	}
	reqs, stopped := make(chan restartReq), make(chan struct{})
	s.reqs, s.stopped = reqs, stopped
	s.status = Status{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.reqs = nil
		s.mu.Unlock()
		close(stopped)
	}()

	r := newRunner(s)
	defer close(r.quit)
	r.reload()
	r.nextPoll = time.Now().Add(r.poll)
	for {
		if ctx.Err() != nil {
			// Checked before reconcile so that a cancelled Run starts nothing new.
			r.shutdown(reqs)
			return nil
		}
		r.reconcile()
		r.publish()
		wait := time.NewTimer(time.Until(r.nextWake()))
		select {
		case <-ctx.Done():
			wait.Stop()
			continue
		case p := <-r.exits:
			r.handleExit(p)
		case req := <-reqs:
			req.reply <- r.restart(req.name)
		case <-wait.C:
		}
		wait.Stop()
		if !time.Now().Before(r.nextPoll) {
			r.reload()
			r.nextPoll = time.Now().Add(r.poll)
		}
	}
}

// runner is the state of one Run. It is owned by Run's goroutine; other goroutines talk to it
// only through channels, so the state itself needs no lock.
type runner struct {
	s            *Supervisor
	log          *slog.Logger
	startGrace   time.Duration
	backoffMin   time.Duration
	backoffMax   time.Duration
	backoffReset time.Duration
	stopGrace    time.Duration
	poll         time.Duration
	maxLogBytes  int64
	maxLogFiles  int

	svcs        map[string]*service
	manifestKey string // "missing" or the sha256 of the last manifest content looked at
	manifestErr string
	nextPoll    time.Time
	shutting    bool
	lastStatus  []byte

	exits chan *proc
	quit  chan struct{}  // closed when Run returns
	bg    sync.WaitGroup // stop and reap goroutines, which Run waits for before returning
}

// service is the supervisor's record of one service, which outlives its processes.
type service struct {
	def        Service
	inManifest bool // false once removed from the manifest; deleted when its process is gone
	state      State
	since      time.Time
	waitingFor string
	proc       *proc // nil when no process exists
	stopping   bool  // the supervisor asked proc to stop, so its exit is not a crash
	started    bool  // a start was attempted before (for counting restarts)
	restarts   int
	lastExit   *ExitStatus
	delay      time.Duration // the last backoff delay, 0 before the first exit
	nextStart  time.Time     // end of the current backoff
}

func newRunner(s *Supervisor) *runner {
	pick := func(v, def time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		return def
	}
	r := &runner{
		s:            s,
		log:          s.Logger,
		startGrace:   pick(s.StartGrace, DefaultStartGrace),
		backoffMin:   pick(s.BackoffMin, DefaultBackoffMin),
		backoffMax:   pick(s.BackoffMax, DefaultBackoffMax),
		backoffReset: pick(s.backoffReset, defaultBackoffReset),
		stopGrace:    pick(s.StopGrace, DefaultStopGrace),
		poll:         pick(s.Poll, DefaultPoll),
		maxLogBytes:  s.MaxLogBytes,
		maxLogFiles:  s.MaxLogFiles,
		svcs:         map[string]*service{},
		exits:        make(chan *proc),
		quit:         make(chan struct{}),
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.backoffMax < r.backoffMin {
		r.backoffMax = r.backoffMin
	}
	if r.maxLogBytes <= 0 {
		r.maxLogBytes = DefaultMaxLogBytes
	}
	if r.maxLogFiles <= 0 {
		r.maxLogFiles = DefaultMaxLogFiles
	}
	return r
}

// reload re-reads the manifest and applies it if its content changed. A missing manifest is an
// empty one (the node has not joined yet, or was reset); an invalid one is reported and
// ignored, leaving the services of the last valid one running.
func (r *runner) reload() {
	path := r.s.ManifestPath
	data, err := os.ReadFile(path)
	key := "missing"
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		// Not remembered in manifestKey, so the next poll tries again.
		msg := fmt.Sprintf("read node services manifest: %v", err)
		if msg != r.manifestErr {
			r.log.Error("cannot read manifest; keeping the current services", "path", path, "err", err)
		}
		r.manifestErr = msg
		return
	default:
		sum := sha256.Sum256(data)
		key = hex.EncodeToString(sum[:])
	}
	if key == r.manifestKey {
		return
	}
	r.manifestKey = key
	m := &Manifest{}
	if key != "missing" {
		if m, err = ParseManifest(path, data); err != nil {
			r.manifestErr = err.Error()
			r.log.Error("invalid manifest; keeping the current services", "path", path, "err", err)
			return
		}
	}
	r.manifestErr = ""
	r.apply(m)
}

// apply makes the manifest's services the wanted ones.
func (r *runner) apply(m *Manifest) {
	want := map[string]bool{}
	for _, d := range m.Services {
		want[d.Name] = true
	}
	for _, name := range r.names() {
		sv := r.svcs[name]
		if want[name] || !sv.inManifest {
			continue
		}
		sv.inManifest = false
		r.log.Info("service removed from manifest", "service", name)
		if sv.proc != nil {
			r.stop(sv)
		} else {
			delete(r.svcs, name)
		}
	}
	for _, d := range m.Services {
		sv := r.svcs[d.Name]
		if sv == nil {
			r.svcs[d.Name] = &service{def: d, inManifest: true, state: StateWaiting, since: time.Now()}
			r.log.Info("service added", "service", d.Name)
			continue
		}
		sv.inManifest = true
		if sameDefinition(sv.def, d) {
			continue
		}
		sv.def = d
		r.log.Info("service definition changed", "service", d.Name)
		// A new definition deserves an immediate try, not the old one's backoff.
		sv.delay, sv.nextStart = 0, time.Time{}
		if sv.proc != nil {
			r.stop(sv) // started again with the new definition when it has exited
		} else if sv.state == StateBackoff {
			r.setState(sv, StateWaiting)
		}
	}
}

func sameDefinition(a, b Service) bool {
	return a.Name == b.Name && a.Path == b.Path && a.LogFile == b.LogFile &&
		slices.Equal(a.Args, b.Args) && slices.Equal(a.Env, b.Env) &&
		slices.Equal(a.After, b.After) && slices.Equal(a.WaitFiles, b.WaitFiles)
}

// reconcile promotes services that survived StartGrace and starts every service that may start.
func (r *runner) reconcile() {
	if r.shutting {
		return
	}
	now := time.Now()
	names := r.names()
	// Promotions first, so a dependent earlier in name order sees its dependency running in
	// this same pass.
	for _, name := range names {
		sv := r.svcs[name]
		if sv.proc != nil && sv.state == StateStarting && now.Sub(sv.proc.started) >= r.startGrace {
			r.setState(sv, StateRunning)
			r.log.Info("service running", "service", name, "pid", sv.proc.pid)
		}
	}
	for _, name := range names {
		sv := r.svcs[name]
		if sv.proc != nil || !sv.inManifest {
			continue
		}
		if sv.state == StateBackoff && now.Before(sv.nextStart) {
			continue
		}
		if why := r.blocker(sv); why != "" {
			if sv.state != StateWaiting || sv.waitingFor != why {
				r.log.Info("service waiting for "+why, "service", name)
			}
			r.setState(sv, StateWaiting)
			sv.waitingFor = why
			continue
		}
		r.start(sv)
	}
}

// blocker says what sv waits for ("service containerd", "file /etc/kubernetes/kubelet.conf"),
// or "" when it may start. Dependencies come first: until they run, the files they create
// are not expected to exist.
func (r *runner) blocker(sv *service) string {
	for _, a := range sv.def.After {
		if dep := r.svcs[a]; dep == nil || dep.state != StateRunning {
			return "service " + a
		}
	}
	for _, f := range sv.def.WaitFiles {
		if _, err := os.Stat(f); err != nil {
			return "file " + f
		}
	}
	return ""
}

func (r *runner) start(sv *service) {
	if sv.started {
		sv.restarts++
	}
	sv.started = true
	sv.waitingFor = ""
	p, err := startProc(sv.def, r.maxLogBytes, r.maxLogFiles, time.Now)
	if err != nil {
		sv.lastExit = &ExitStatus{Code: -1, Error: err.Error(), At: time.Now()}
		r.backoff(sv, 0)
		r.log.Error("service failed to start", "service", sv.def.Name, "err", err, "retryIn", sv.delay)
		return
	}
	sv.proc = p
	r.setState(sv, StateStarting)
	r.log.Info("service started", "service", sv.def.Name, "pid", p.pid)
	go func() {
		<-p.done
		select {
		case r.exits <- p:
		case <-r.quit:
		}
	}()
}

// backoff schedules the next start after an exit that followed uptime of running.
func (r *runner) backoff(sv *service, uptime time.Duration) {
	switch {
	case sv.delay == 0 || uptime >= r.backoffReset:
		sv.delay = r.backoffMin
	default:
		sv.delay = min(sv.delay*2, r.backoffMax)
	}
	sv.nextStart = time.Now().Add(sv.delay)
	r.setState(sv, StateBackoff)
}

func (r *runner) handleExit(p *proc) {
	sv := r.svcs[p.svc]
	if sv == nil || sv.proc != p {
		return // cannot happen: a service keeps its record until its process is gone
	}
	sv.proc = nil
	sv.lastExit = p.exitStatus()
	intended := sv.stopping
	sv.stopping = false
	attrs := []any{"service", p.svc, "pid", p.pid, "code", sv.lastExit.Code}
	if sv.lastExit.Signal != "" {
		attrs = append(attrs, "signal", sv.lastExit.Signal)
	}
	if !intended {
		// Whatever the service forked into its group is orphaned now and would, for
		// instance, still hold the ports the restarted service needs.
		r.bg.Add(1)
		go func() {
			defer r.bg.Done()
			r.reapGroup(p)
		}()
	}
	switch {
	case !sv.inManifest:
		delete(r.svcs, p.svc)
		r.log.Info("removed service stopped", attrs...)
	case r.shutting:
		r.setState(sv, StateStopped)
		r.log.Info("service stopped", attrs...)
	case intended:
		// Restart or new definition: start again now (reconcile runs next), no backoff.
		r.setState(sv, StateWaiting)
		r.log.Info("service stopped for restart", attrs...)
	default:
		r.backoff(sv, p.exited.Sub(p.started))
		r.log.Warn("service exited; restarting after backoff", append(attrs, "retryIn", sv.delay)...)
	}
}

func (r *runner) restart(name string) error {
	sv := r.svcs[name]
	if sv == nil || !sv.inManifest {
		return fmt.Errorf("restart %s: no such service in the manifest", name)
	}
	r.log.Info("restart requested", "service", name)
	sv.delay, sv.nextStart = 0, time.Time{}
	switch {
	case sv.proc != nil:
		r.stop(sv)
	case sv.state == StateBackoff:
		r.setState(sv, StateWaiting) // reconcile starts it if it may start
	}
	return nil
}

// stop asks sv's process group to exit; its exit arrives on r.exits like any other.
func (r *runner) stop(sv *service) {
	if sv.proc == nil || sv.stopping {
		return
	}
	sv.stopping = true
	r.setState(sv, StateStopping)
	p := sv.proc
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		r.terminate(p)
	}()
}

// terminate sends SIGTERM to p's group, and SIGKILL to whatever of it is left after StopGrace.
func (r *runner) terminate(p *proc) {
	deadline := time.NewTimer(r.stopGrace)
	defer deadline.Stop()
	if err := terminateGroup(p.cmd.Process); err != nil {
		r.log.Warn("cannot signal service", "service", p.svc, "pid", p.pid, "err", err)
	}
	select {
	case <-p.done:
	case <-deadline.C:
		r.log.Warn("service did not stop in time; killing it", "service", p.svc, "pid", p.pid, "stopGrace", r.stopGrace)
		killGroup(p.cmd.Process)
		return
	}
	r.awaitGroup(p, deadline.C)
}

// reapGroup stops what is left of the group of a process that exited on its own.
func (r *runner) reapGroup(p *proc) {
	if !groupAlive(p.cmd.Process) {
		return
	}
	deadline := time.NewTimer(r.stopGrace)
	defer deadline.Stop()
	terminateGroup(p.cmd.Process)
	r.awaitGroup(p, deadline.C)
}

// awaitGroup waits until p's group is empty, killing it at deadline. The group id stays
// reserved by the kernel while any member lives, so signalling it cannot hit an unrelated
// process.
func (r *runner) awaitGroup(p *proc, deadline <-chan time.Time) {
	tick := time.NewTicker(groupPoll)
	defer tick.Stop()
	for groupAlive(p.cmd.Process) {
		select {
		case <-deadline:
			killGroup(p.cmd.Process)
			return
		case <-tick.C:
		}
	}
}

// shutdown stops every service, each only once no service that comes After it still runs, so
// kubelet is gone before containerd is asked to stop.
func (r *runner) shutdown(reqs chan restartReq) {
	r.shutting = true
	r.log.Info("stopping all services")
	for {
		var alive []*service
		for _, name := range r.names() {
			if sv := r.svcs[name]; sv.proc != nil {
				alive = append(alive, sv)
			} else if sv.state != StateStopped {
				r.setState(sv, StateStopped)
				sv.waitingFor = ""
			}
		}
		if len(alive) == 0 {
			break
		}
		inFlight := false
		for _, sv := range alive {
			if !sv.stopping && !r.hasLiveDependent(sv, alive) {
				r.stop(sv)
			}
			inFlight = inFlight || sv.stopping
		}
		if !inFlight {
			// Only possible if the live definitions form a cycle, which validation rules out
			// within one manifest; stop everything rather than hang.
			for _, sv := range alive {
				r.stop(sv)
			}
		}
		r.publish()
		select {
		case p := <-r.exits:
			r.handleExit(p)
		case req := <-reqs:
			req.reply <- fmt.Errorf("restart %s: supervisor is shutting down", req.name)
		}
	}
	r.bg.Wait()
	r.publish()
	r.log.Info("all services stopped")
}

func (r *runner) hasLiveDependent(sv *service, alive []*service) bool {
	for _, o := range alive {
		if o != sv && slices.Contains(o.def.After, sv.def.Name) {
			return true
		}
	}
	return false
}

// nextWake is when reconcile has something to do without any event: the next manifest poll,
// the end of a StartGrace, or the end of a backoff.
func (r *runner) nextWake() time.Time {
	w := r.nextPoll
	for _, sv := range r.svcs {
		var t time.Time
		switch {
		case sv.proc != nil && sv.state == StateStarting:
			t = sv.proc.started.Add(r.startGrace)
		case sv.proc == nil && sv.state == StateBackoff:
			t = sv.nextStart
		default:
			continue
		}
		if t.Before(w) {
			w = t
		}
	}
	return w
}

func (r *runner) setState(sv *service, st State) {
	if sv.state != st {
		sv.state, sv.since = st, time.Now()
	}
	if st != StateWaiting {
		sv.waitingFor = ""
	}
}

func (r *runner) names() []string {
	names := make([]string, 0, len(r.svcs))
	for n := range r.svcs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// publish stores the status and writes the status file when anything changed.
func (r *runner) publish() {
	st := Status{ManifestError: r.manifestErr, Services: []ServiceStatus{}}
	for _, name := range r.names() {
		sv := r.svcs[name]
		ss := ServiceStatus{
			Name:       name,
			State:      sv.state,
			Since:      sv.since.UTC(),
			Restarts:   sv.restarts,
			WaitingFor: sv.waitingFor,
		}
		if sv.proc != nil {
			started := sv.proc.started.UTC()
			ss.PID, ss.Started = sv.proc.pid, &started
		}
		if sv.lastExit != nil {
			e := *sv.lastExit
			e.At = e.At.UTC()
			ss.LastExit = &e
		}
		st.Services = append(st.Services, ss)
	}
	data, err := marshalStatus(st)
	if err != nil {
		r.log.Error("cannot encode status", "err", err)
		return
	}
	if bytes.Equal(data, r.lastStatus) {
		return
	}
	r.lastStatus = data
	r.s.mu.Lock()
	r.s.status = st.clone()
	r.s.mu.Unlock()
	if r.s.StatusPath != "" {
		if err := writeStatus(r.s.StatusPath, st); err != nil {
			// The services matter more than their report: log and carry on.
			r.log.Error("cannot write status", "err", err)
		}
	}
}
