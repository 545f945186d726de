// Package upgrade is the node side of `kubewin rollout`: the node service applies a revision —
// component binaries pinned by sha256 and, on Windows, OS updates by KB — and rolls it back.
// Only the node service changes the node; the orchestrator (internal/rollout) asks through the
// node's own Node object (internal/rollout/api) and this package answers there.
//
// One request runs as a state machine whose state is a file below the node's data directory,
// written atomically (internal/atomicfs) after every step, so a restart of the node service or
// of the machine (an OS update that asks for one) resumes where it stopped:
//
//		Apply:    fetch ─▶ swap ─▶ start ─▶ os ─▶ [restart ─▶ start ─▶ os] ─▶ done (Applied)
//		            │        └───────┴───────┴──▶ undo: the Rollback steps ─▶ done (Failed; the
//		            │                                                          previous revision runs)
//		            └──▶ done (Failed; nothing changed)
//		Rollback: uninstall ─▶ restore ─▶ [restart ─▶ restore] ─▶ start ─▶ done (RolledBack)
//
//	  - fetch: every file of the revision is fetched and verified by join's verified install
//	    (join.Binaries.InstallVerified: streamed to a temporary file, hashed, renamed only when it
//	    matches) to a staged name beside its destination (kubelet.exe.new-<revision>), and every
//	    OS update package to <data>/updates; a file whose installed content already matches is
//	    left out. Any failure removes what was staged: nothing on the node changed.
//	  - swap: the services whose programs change (and those that depend on them) are stopped in
//	    reverse dependency order; each program is renamed aside (kubelet.exe →
//	    kubelet.exe.prev-<revision it belonged to>) and the staged file renamed into its place.
//	    Renames only: Windows lets a running program's file be renamed but not replaced or
//	    deleted (winnode.MemHost's table), which matters for what still runs after a stop (a pod's
//	    containerd shim, kube-log-runner under another service).
//	  - start: what was stopped starts again in dependency order (containerd → kubelet →
//	    kube-proxy); a service that does not stay up undoes the swap (the previous programs are
//	    renamed back and started) and the request fails with its reason.
//	  - os: each update runs through wusa.exe or DISM (winnode.InstallCommand); 0 installed,
//	    3010 installed at the next restart, 1641 the installer restarts the machine, 0x240006
//	    installed already (not ours to remove at a rollback), anything else (0x80240017: not
//	    applicable to this build) fails the request and undoes it.
//	  - restart: the phase Rebooting is persisted and reported before the machine restarts; the
//	    node service started after the restart sees a later boot time and resumes: the services
//	    the engine starts after a restart are started in order (on Windows containerd and the
//	    kubelet, as join does; kube-proxy is the Reconciler's, once its HNS network exists
//	    again), the installers run once more to confirm (0x240006), and the request is done.
//	  - Rollback puts back what the last Apply kept: its OS updates removed (wusa /uninstall /kb:
//	    or DISM /Remove-Package), the programs renamed aside renamed back, services restarted.
//
// A request is identified by the orchestrator's request ID and is carried out at most once: a
// second Apply of the revision that runs answers Applied and changes nothing.
package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kubewin/kubewin/internal/atomicfs"
	"github.com/kubewin/kubewin/internal/binaries"
	"github.com/kubewin/kubewin/internal/rollout/api"
	"github.com/kubewin/kubewin/internal/winnode"
)

// Host is the operating system below the engine: the node's services and files, its OS update
// installer and a restart. LinuxHost and WindowsHost implement it.
type Host interface {
	// OS is "linux" or "windows".
	OS() string
	// Services are the node's services in start order (dependencies first).
	Services() []string
	// ServicesAfterRestart are those the engine starts itself after the machine restarted (in
	// Services' order); the others are the node service's reconciler's to start.
	ServicesAfterRestart() []string
	// Running says whether a service runs now.
	Running(ctx context.Context, service string) (bool, error)
	// Stop stops a service (its dependents are stopped first by the caller).
	Stop(ctx context.Context, service string) error
	// Start starts a service and returns once it stays up, or an error saying why it did not.
	Start(ctx context.Context, service string) error
	// Rename renames a file (atomically, on one volume); Remove deletes one (gone is fine).
	Rename(ctx context.Context, from, to string) error
	Remove(ctx context.Context, path string) error
	// RunInstaller runs an OS update command line and returns its exit code.
	RunInstaller(ctx context.Context, argv []string) (uint32, error)
	// Restart restarts the machine; BootTime tells a later boot from this one.
	Restart(ctx context.Context) error
	BootTime(ctx context.Context) (time.Time, error)
}

// Component is where one file of a revision goes and which services run it.
type Component struct {
	// Path is the file's destination on the node.
	Path string
	// Services run the program (restarted when it changes); none for a CNI plugin, which the
	// runtime executes per pod.
	Services []string
}

// Layout maps a file's name in SHA256SUMS ("kubelet.exe", "cni/win-bridge.exe") to its
// Component; false for a file this node does not install.
type Layout func(name string) (Component, bool)

// Fetch puts the file name from source at dst after checking that its sha256 is sum (join's
// verified install in production: JoinFetch).
type Fetch func(ctx context.Context, source, name, sum, dst string) error

// Request is what the orchestrator asks (from the Node's annotations).
type Request struct {
	ID     string
	Action api.Action
	Target *api.Revision
}

// Step is where a request is in the state machine (see the package comment).
type Step string

const (
	StepFetch     Step = "fetch"
	StepSwap      Step = "swap"
	StepStart     Step = "start"
	StepOS        Step = "os"
	StepRestart   Step = "restart"
	StepUninstall Step = "uninstall"
	StepRestore   Step = "restore"
	StepDone      Step = "done"
)

// State is the engine's persisted state: the request under way (or the last one, done) and
// what the node keeps for a rollback.
type State struct {
	Request string        `json:"request,omitempty"`
	Action  api.Action    `json:"action,omitempty"`
	Target  *api.Revision `json:"target,omitempty"`
	Step    Step          `json:"step,omitempty"`
	// Phase and Reason are what the node reports for Request.
	Phase  api.NodePhase `json:"phase,omitempty"`
	Reason string        `json:"reason,omitempty"`
	// Current is the revision that runs ("" before the first apply: what join installed);
	// Previous the one kept for a rollback ("" when none is kept).
	Current  string `json:"current,omitempty"`
	Previous string `json:"previous,omitempty"`
	// Files are the programs the last apply replaced (kept aside for a rollback).
	Files []FileSwap `json:"files,omitempty"`
	// Updates are the OS updates the last apply installed (removed by a rollback).
	Updates []OSUpdate `json:"updates,omitempty"`
	// Stopped are the services the request stopped, to be started again in order.
	Stopped []string `json:"stopped,omitempty"`
	// Kept: Files and Updates describe an apply that succeeded and was not rolled back; a
	// rollback without it has nothing to undo (the apply before it failed and was undone).
	Kept bool `json:"kept,omitempty"`
	// Boot is the machine's boot time when a restart was asked for; InstallerRestarts says
	// that the installer restarts the machine itself (exit 1641); RestartDue that a removed
	// update asked for one, done once the programs are back.
	Boot              *time.Time `json:"boot,omitempty"`
	InstallerRestarts bool       `json:"installerRestarts,omitempty"`
	RestartDue        bool       `json:"restartDue,omitempty"`
	// Failure is why an apply is being undone (reported when the undo is done).
	Failure string `json:"failure,omitempty"`
}

// FileSwap is one program an apply replaces.
type FileSwap struct {
	Name string `json:"name"`
	Path string `json:"path"`
	// Staged is the verified new file; Aside where the old one is kept ("" when there was
	// none: a file the revision adds).
	Staged string `json:"staged"`
	Aside  string `json:"aside,omitempty"`
	// Services run the program.
	Services []string `json:"services,omitempty"`
}

// OSUpdate is one update package an apply handles.
type OSUpdate struct {
	KB   string `json:"kb"`
	Path string `json:"path"`
	// Installed: this apply installed it (a rollback removes it); false when it was installed
	// already.
	Installed bool `json:"installed"`
}

// Engine carries out requests on one node.
type Engine struct {
	Host   Host
	Layout Layout
	Fetch  Fetch
	// StatePath is the state file (StatePath of the node's data directory); UpdatesDir where
	// OS update packages are kept until the revision after them.
	StatePath  string
	UpdatesDir string
	// Report publishes the state after every phase change (the node's own Node
	// annotations); a failure is logged and the request goes on (the next report carries it).
	Report func(ctx context.Context, s State) error
	Log    *slog.Logger
}

// StateFile is the state file below a node's data directory.
func StateFile(dataDir string) string { return filepath.Join(dataDir, "upgrade-state.json") }

// ErrBusy is returned for a new request while another is under way (it is finished first).
var ErrBusy = errors.New("another request is under way")

// Load reads the state (zero before the first request).
func (e *Engine) Load() (State, error) {
	var s State
	data, err := os.ReadFile(e.StatePath)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("upgrade state: %w", err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("upgrade state %s: %w", e.StatePath, err)
	}
	return s, nil
}

func (e *Engine) save(s State) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("upgrade state: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(e.StatePath), 0o755); err != nil {
		return fmt.Errorf("upgrade state: %w", err)
	}
	if err := atomicfs.WriteFile(e.StatePath, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("upgrade state: %w", err)
	}
	return nil
}

func (e *Engine) log() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}

// Handle carries out req (or goes on with it after a restart) and returns the state it left.
// A request already done is not carried out again (nor reported). An unfinished
// request of another ID is finished first, and ErrBusy returned with its state.
func (e *Engine) Handle(ctx context.Context, req Request) (State, error) {
	s, err := e.Load()
	if err != nil {
		return s, err
	}
	switch {
	case s.Request == req.ID && s.Step == StepDone:
		return s, nil // answered (the Watcher reports again when the Node lost the answer)
	case s.Request == req.ID || (s.Request != "" && s.Step != StepDone):
		s, err = e.run(ctx, s)
		if err == nil && s.Request != req.ID {
			err = ErrBusy
		}
		return s, err
	}
	s = e.begin(s, req)
	if err := e.save(s); err != nil {
		return s, err
	}
	return e.run(ctx, s)
}

// Resume goes on with an unfinished request (the node service's start after a restart).
func (e *Engine) Resume(ctx context.Context) (State, error) {
	s, err := e.Load()
	if err != nil || s.Request == "" || s.Step == StepDone {
		return s, err
	}
	return e.run(ctx, s)
}

// begin starts a new request on top of the kept state.
func (e *Engine) begin(s State, req Request) State {
	s.Request, s.Action, s.Reason, s.Failure, s.Stopped, s.Boot = req.ID, req.Action, "", "", nil, nil
	s.InstallerRestarts, s.RestartDue = false, false
	if req.Target != nil {
		s.Target = req.Target
	}
	switch {
	case req.Action == api.ActionRollback && !s.Kept:
		// Nothing kept: the apply before failed and was undone, or none succeeded. What runs is
		// what ran before.
		s.Step, s.Phase = StepDone, api.NodeRolledBack
	case req.Action == api.ActionRollback:
		s.Step, s.Phase = StepUninstall, api.NodeRollingBack
	case req.Target == nil:
		s.Step, s.Phase, s.Reason = StepDone, api.NodeFailed, "an Apply without a target revision"
	case req.Target.Name == s.Current && s.Current != "":
		// The revision runs already: nothing to do, and what is kept for a rollback stays.
		s.Step, s.Phase = StepDone, api.NodeApplied
	default:
		s.Step, s.Phase = StepFetch, api.NodeApplying
	}
	return s
}

// run advances s until done, a restart, or an error that leaves the step to be retried.
func (e *Engine) run(ctx context.Context, s State) (State, error) {
	e.report(ctx, s)
	for s.Step != StepDone {
		prev := s
		next, err := e.step(ctx, s)
		if err != nil {
			return s, fmt.Errorf("%s %s, step %s: %w", s.Action, targetName(s), s.Step, err)
		}
		s = next
		if err := e.save(s); err != nil {
			return s, err
		}
		if s.Phase != prev.Phase || s.Reason != prev.Reason {
			e.report(ctx, s)
		}
		e.log().Info("upgrade step", "request", s.Request, "action", s.Action, "step", s.Step, "phase", s.Phase)
		if s.Step == StepRestart && prev.Step != StepRestart && !s.InstallerRestarts {
			// The machine restarts now; the node service started after it resumes.
			if err := e.Host.Restart(ctx); err != nil {
				return s, fmt.Errorf("restart for %s: %w", targetName(s), err)
			}
			return s, nil
		}
		if s.Step == StepRestart {
			return s, nil // still waiting for the restart to happen
		}
	}
	return s, nil
}

func targetName(s State) string {
	if s.Target == nil {
		return "(no revision)"
	}
	return s.Target.Name
}

func (e *Engine) report(ctx context.Context, s State) {
	if e.Report == nil {
		return
	}
	if err := e.Report(ctx, s); err != nil {
		e.log().Warn("report upgrade phase", "request", s.Request, "phase", s.Phase, "err", err)
	}
}

// step does one step. An error keeps the step (it is tried again by the next Handle); a
// failure of the request itself moves to undo or done with a reason.
func (e *Engine) step(ctx context.Context, s State) (State, error) {
	switch s.Step {
	case StepFetch:
		return e.fetch(ctx, s)
	case StepSwap:
		return e.swap(ctx, s)
	case StepStart:
		return e.start(ctx, s)
	case StepOS:
		return e.installUpdates(ctx, s)
	case StepRestart:
		return e.afterRestart(ctx, s)
	case StepRestore:
		return e.restore(ctx, s)
	case StepUninstall:
		return e.uninstall(ctx, s)
	}
	return s, fmt.Errorf("unknown step %q", s.Step)
}

// fetch stages every changed file and every update package, verified; on any failure what was
// staged is removed and the request fails with nothing changed.
func (e *Engine) fetch(ctx context.Context, s State) (State, error) {
	t := s.Target
	if len(t.OSUpdates) > 0 && e.Host.OS() != "windows" {
		return failed(s, "revision "+t.Name+" has OS updates, which only Windows nodes install; nothing changed"), nil
	}
	// What the last apply kept is dropped now: this apply keeps what runs.
	old := s.Files
	var files []FileSwap
	var staged []string
	fail := func(why string) (State, error) {
		for _, p := range staged {
			_ = e.Host.Remove(ctx, p)
		}
		return failed(s, why+"; nothing changed"), nil
	}
	if b := t.Binaries; b != nil {
		names := make([]string, 0, len(b.Checksums))
		for n := range b.Checksums {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, name := range names {
			c, ok := e.Layout(name)
			if !ok {
				return fail(fmt.Sprintf("revision %s: %s is not a file a %s node installs", t.Name, name, e.Host.OS()))
			}
			if sum, err := binaries.FileSHA256(c.Path); err == nil && sum == b.Checksums[name] {
				continue // installed already
			}
			f := FileSwap{Name: name, Path: c.Path, Staged: c.Path + ".new-" + t.Name, Services: c.Services}
			if _, err := os.Stat(c.Path); err == nil {
				f.Aside = c.Path + ".prev-" + orJoin(s.Current)
			}
			if err := e.Fetch(ctx, b.Source, name, b.Checksums[name], f.Staged); err != nil {
				return fail(fmt.Sprintf("fetch %s: %v", name, err))
			}
			staged = append(staged, f.Staged)
			files = append(files, f)
		}
	}
	var updates []OSUpdate
	for _, u := range t.OSUpdates {
		src, name := splitURL(u.URL)
		dst := filepath.Join(e.UpdatesDir, name)
		if err := os.MkdirAll(e.UpdatesDir, 0o755); err != nil {
			return s, fmt.Errorf("updates directory: %w", err)
		}
		if err := e.Fetch(ctx, src, name, u.SHA256, dst); err != nil {
			return fail(fmt.Sprintf("fetch OS update %s: %v", u.KB, err))
		}
		staged = append(staged, dst)
		updates = append(updates, OSUpdate{KB: u.KB, Path: dst})
	}
	// The programs an earlier apply kept aside are not needed any more (a running one stays
	// until the next apply).
	for _, f := range old {
		if f.Aside != "" && !slices.ContainsFunc(files, func(n FileSwap) bool { return n.Aside == f.Aside }) {
			_ = e.Host.Remove(ctx, f.Aside)
		}
	}
	s.Files, s.Updates, s.Step = files, updates, StepSwap
	return s, nil
}

func orJoin(rev string) string {
	if rev == "" {
		return "join"
	}
	return rev
}

// splitURL splits an update's URL or path into join's (source, name).
func splitURL(u string) (string, string) {
	i := strings.LastIndexAny(u, `/\`)
	if i < 0 {
		return ".", u
	}
	return u[:i], u[i+1:]
}

// failed ends a request that could not be carried out. After a failed Apply the
// orchestrator asks for a Rollback, which must leave the node on what it runs now (the
// revision before this rollout step), not roll back an earlier apply: nothing is kept, and
// no previous revision is reported (AnnotationPrevious: empty when the node keeps none).
func failed(s State, why string) State {
	s.Step, s.Phase, s.Reason = StepDone, api.NodeFailed, why
	if s.Action == api.ActionApply {
		s.Kept = false
	}
	if !s.Kept {
		s.Previous = ""
	}
	return s
}

// affected are the services whose programs s.Files replace, with the services that depend on
// them, in start order.
func (e *Engine) affected(s State) []string {
	set := map[string]bool{}
	for _, f := range s.Files {
		for _, svc := range f.Services {
			set[svc] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for svc, deps := range dependsOn {
			if set[svc] {
				continue
			}
			for _, d := range deps {
				if set[d] {
					set[svc], changed = true, true
				}
			}
		}
	}
	var out []string
	for _, svc := range e.Host.Services() {
		if set[svc] {
			out = append(out, svc)
		}
	}
	return out
}

// dependsOn: the kubelet depends on containerd (render/services.go: the SCM's DependsOn on
// Windows, join's manifest After on Linux); stopping containerd under a running kubelet is
// refused by the SCM (ERROR_DEPENDENT_SERVICES_RUNNING).
var dependsOn = map[string][]string{"kubelet": {"containerd"}}

// stopAffected stops the running affected services, dependents first, and records them.
func (e *Engine) stopAffected(ctx context.Context, s State) (State, error) {
	aff := e.affected(s)
	for i := len(aff) - 1; i >= 0; i-- {
		svc := aff[i]
		run, err := e.Host.Running(ctx, svc)
		if err != nil {
			return s, err
		}
		if !run && !slices.Contains(s.Stopped, svc) {
			continue
		}
		if err := e.Host.Stop(ctx, svc); err != nil {
			return s, fmt.Errorf("stop %s: %w", svc, err)
		}
		if !slices.Contains(s.Stopped, svc) {
			s.Stopped = append(s.Stopped, svc)
		}
	}
	return s, nil
}

// swap stops what runs the changed programs and puts the staged files in their place, the
// old ones renamed aside. Each rename is done once: a swap resumed after a crash finds the
// files where it left them.
func (e *Engine) swap(ctx context.Context, s State) (State, error) {
	s, err := e.stopAffected(ctx, s)
	if err != nil {
		return s, err
	}
	if err := e.save(s); err != nil {
		return s, err
	}
	for _, f := range s.Files {
		if !exists(f.Staged) {
			continue // swapped before a crash
		}
		if f.Aside != "" && exists(f.Path) && !exists(f.Aside) {
			if err := e.Host.Rename(ctx, f.Path, f.Aside); err != nil {
				return e.undoUnlessStopping(ctx, s, fmt.Sprintf("rename %s aside: %v", f.Path, err))
			}
		}
		if err := e.Host.Rename(ctx, f.Staged, f.Path); err != nil {
			return e.undoUnlessStopping(ctx, s, fmt.Sprintf("put %s in place: %v", f.Path, err))
		}
	}
	s.Step = StepStart
	return s, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// undoUnlessStopping undoes the apply, unless the node service is stopping (ctx ended): then
// the step stays, to be resumed by the next node service where it was left.
func (e *Engine) undoUnlessStopping(ctx context.Context, s State, why string) (State, error) {
	if err := ctx.Err(); err != nil {
		return s, err
	}
	return e.undo(s, why), nil
}

// undo turns a failed apply into a rollback of what it did: the updates it installed removed,
// the previous programs put back and started; the request then fails with why.
func (e *Engine) undo(s State, why string) State {
	s.Step, s.Failure = StepUninstall, why
	return s
}

// start starts what the request stopped, in dependency order. A service that does not stay up
// under the new programs undoes the apply.
func (e *Engine) start(ctx context.Context, s State) (State, error) {
	for _, svc := range e.Host.Services() {
		if !slices.Contains(s.Stopped, svc) {
			continue
		}
		if err := e.Host.Start(ctx, svc); err != nil {
			if ctx.Err() != nil {
				return s, ctx.Err() // stopping: the next node service starts it
			}
			if s.Action == api.ActionApply && s.Failure == "" {
				return e.undo(s, fmt.Sprintf("%s did not start under revision %s: %v", svc, targetName(s), err)), nil
			}
			// The previous programs do not start either: a person must look.
			why := fmt.Sprintf("%s did not start with the previous programs back: %v", svc, err)
			if s.Failure != "" {
				why = s.Failure + "; undone, but " + why
			}
			s.Kept = false
			return failed(s, why), nil
		}
	}
	s.Stopped = nil
	if s.Action == api.ActionApply && s.Failure == "" {
		s.Step = StepOS
		return s, nil
	}
	return e.finish(s), nil
}

// finish ends a request that got through: Applied, RolledBack, or (an undone apply) Failed.
func (e *Engine) finish(s State) State {
	switch {
	case s.Action == api.ActionApply && s.Failure != "":
		s.Step, s.Phase, s.Reason = StepDone, api.NodeFailed, s.Failure+"; undone: the previous revision runs again"
		// This apply's fetch dropped what the one before it kept: nothing is kept now.
		s.Files, s.Updates, s.Kept, s.Previous = nil, nil, false, ""
	case s.Action == api.ActionApply:
		s.Step, s.Phase, s.Reason, s.Kept = StepDone, api.NodeApplied, "", true
		if s.Current != s.Target.Name {
			s.Previous, s.Current = orJoin(s.Current), s.Target.Name
		}
	default:
		s.Step, s.Phase, s.Reason = StepDone, api.NodeRolledBack, ""
		if s.Previous != "" {
			s.Current = s.Previous
			if s.Current == "join" {
				s.Current = ""
			}
		}
		s.Previous, s.Files, s.Updates, s.Kept = "", nil, nil, false
	}
	return s
}

// installUpdates runs each OS update's installer. A restart that one asks for is done once,
// after all of them.
func (e *Engine) installUpdates(ctx context.Context, s State) (State, error) {
	restart, initiated := false, false
	for i := range s.Updates {
		u := &s.Updates[i]
		argv, err := winnode.InstallCommand(u.Path)
		if err != nil {
			return e.undo(s, err.Error()), nil
		}
		code, err := e.Host.RunInstaller(ctx, argv)
		if err != nil {
			return s, fmt.Errorf("install %s: %w", u.KB, err)
		}
		switch code {
		case winnode.ExitSuccess:
			u.Installed = true
		case winnode.ExitRebootRequired:
			u.Installed, restart = true, true
		case winnode.ExitRebootInitiated:
			u.Installed, restart, initiated = true, true, true
		case winnode.ExitAlreadyInstalled:
			// Installed before this apply: a rollback leaves it.
		default:
			return e.undo(s, fmt.Sprintf("OS update %s: %s exited with %d (%#x%s)", u.KB, filepath.Base(argv[0]), code, code, exitMeaning(code))), nil
		}
		if err := e.save(s); err != nil {
			return s, err
		}
	}
	if !restart {
		return e.finish(s), nil
	}
	return e.askRestart(ctx, s, initiated, "an OS update asked for a restart")
}

// askRestart records the boot to tell the next one from, and the phase Rebooting.
func (e *Engine) askRestart(ctx context.Context, s State, initiated bool, why string) (State, error) {
	boot, err := e.Host.BootTime(ctx)
	if err != nil {
		return s, err
	}
	s.Boot, s.Step, s.Phase, s.Reason, s.InstallerRestarts = &boot, StepRestart, api.NodeRebooting, why, initiated
	if initiated {
		s.Reason += " (the installer restarts the machine)"
	}
	return s, nil
}

// restartTolerance is how far two readings of one boot time may drift apart.
const restartTolerance = 30 * time.Second

// afterRestart goes on once the machine has restarted: the node's services are started in
// order (Windows starts containerd; the kubelet and kube-proxy are manual) and the request is
// done.
func (e *Engine) afterRestart(ctx context.Context, s State) (State, error) {
	boot, err := e.Host.BootTime(ctx)
	if err != nil {
		return s, err
	}
	if s.Boot != nil && boot.Sub(*s.Boot) < restartTolerance {
		return s, nil // not restarted yet
	}
	s.Boot, s.InstallerRestarts, s.Phase, s.Reason = nil, false, phaseOf(s.Action), ""
	s.Stopped = slices.Clone(e.Host.ServicesAfterRestart())
	s.Step = StepStart
	if s.Action != api.ActionApply || s.Failure != "" {
		// A rollback (or an undo) restarted after its programs were put back: only the
		// services are left to start.
		s.Step = StepRestore
	}
	return s, nil
}

func phaseOf(a api.Action) api.NodePhase {
	if a == api.ActionRollback {
		return api.NodeRollingBack
	}
	return api.NodeApplying
}

// uninstall removes the OS updates the last apply installed (newest first), then the rollback
// restores the programs.
func (e *Engine) uninstall(ctx context.Context, s State) (State, error) {
	restart := false
	for i := len(s.Updates) - 1; i >= 0; i-- {
		u := &s.Updates[i]
		if !u.Installed {
			continue
		}
		argv, err := winnode.UninstallCommand(u.KB, u.Path)
		if err != nil {
			return failed(s, err.Error()), nil
		}
		code, err := e.Host.RunInstaller(ctx, argv)
		if err != nil {
			return s, fmt.Errorf("uninstall %s: %w", u.KB, err)
		}
		switch code {
		case winnode.ExitSuccess, winnode.ExitAlreadyUninstalled:
		case winnode.ExitRebootRequired, winnode.ExitRebootInitiated:
			restart = true
		default:
			return failed(s, fmt.Sprintf("uninstall OS update %s: %s exited with %d (%#x%s)", u.KB, filepath.Base(argv[0]), code, code, exitMeaning(code))), nil
		}
		u.Installed = false
		if err := e.save(s); err != nil {
			return s, err
		}
	}
	// The programs are put back first; a restart the removal asked for then starts them.
	s.Step, s.RestartDue = StepRestore, s.RestartDue || restart
	return s, nil
}

// restore puts back the programs renamed aside (the running new ones are renamed away first:
// Windows refuses to replace them) and starts the services again.
func (e *Engine) restore(ctx context.Context, s State) (State, error) {
	if slices.ContainsFunc(s.Files, func(f FileSwap) bool { return f.Aside == "" || exists(f.Aside) }) {
		var err error
		if s, err = e.stopAffected(ctx, s); err != nil {
			return s, err
		}
		if err := e.save(s); err != nil {
			return s, err
		}
	}
	for _, f := range s.Files {
		if f.Aside != "" && !exists(f.Aside) {
			continue // restored before a crash
		}
		if exists(f.Path) {
			bad := f.Path + ".bad-" + targetName(s)
			if err := e.Host.Rename(ctx, f.Path, bad); err != nil {
				return s, fmt.Errorf("move %s out of the way: %w", f.Path, err)
			}
			_ = e.Host.Remove(ctx, bad) // still running: removed by the next apply's cleanup
		}
		if f.Aside != "" {
			if err := e.Host.Rename(ctx, f.Aside, f.Path); err != nil {
				return s, fmt.Errorf("put %s back: %w", f.Path, err)
			}
		}
		_ = e.Host.Remove(ctx, f.Staged)
	}
	if s.RestartDue {
		s.RestartDue = false
		return e.askRestart(ctx, s, false, "removing an OS update asked for a restart")
	}
	s.Step = StepStart
	return e.start(ctx, s)
}

// exitMeaning names the installer exit codes the documentation names (winnode's constants).
func exitMeaning(code uint32) string {
	switch code {
	case winnode.ExitNotApplicable:
		return " WU_E_NOT_APPLICABLE: the update does not apply to this Windows build, or a newer one supersedes it"
	case winnode.ExitAlreadyUninstalled:
		return " WU_S_ALREADY_UNINSTALLED"
	case winnode.ExitAlreadyInstalled:
		return " WU_S_ALREADY_INSTALLED"
	}
	return ""
}
