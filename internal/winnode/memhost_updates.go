package winnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kubewin/kubewin/internal/binaries"
)

// What MemHost models of a Windows machine for the node side of kubewin rollout (the rows of
// MemHost's table from "a running program's file" on): program files in use by running
// services, wusa.exe and DISM.exe, and a restart that keeps files and services. The files
// themselves are real files (a test's directory): MemHost only adds the rules Windows applies
// to them, so what join's verified install writes is what the model guards.

var _ Machine = (*MemHost)(nil)

// Win32 errors the model returns (golang.org/x/sys/windows zerrors_windows.go).
const (
	errorPathNotFound = 3
	errorAccessDenied = 5
)

// memMachine is MemHost's part for files and OS updates.
type memMachine struct {
	// images are the files a service's process maps while it runs (its program and, for a
	// wrapper such as kube-log-runner, the program it runs), by service.
	images map[string][]string
	// held maps a file path to what runs from it ("service kubelet", a pod's shim), sorted:
	// kube-log-runner.exe runs under the kubelet and kube-proxy at once.
	held map[string][]string
	// failImages: a service whose program has this sha256 exits at once with code and reason.
	failImages map[string]imageFailure
	// packages are the update packages MemHost knows, by the sha256 of their file.
	packages map[string]UpdatePackage
	// updates is the state of each KB: installed, or pending a restart.
	updates map[string]updateState
}

type imageFailure struct {
	code   uint32
	reason string
}

type updateState string

const (
	updateInstalled        updateState = "installed"
	updatePendingInstall   updateState = "pending-install"
	updatePendingUninstall updateState = "pending-uninstall"
)

// UpdatePackage is what an .msu or .cab does when installed on this host.
type UpdatePackage struct {
	KB string
	// NeedsReboot: installing or removing it completes at the next restart (exit 3010).
	NeedsReboot bool
	// NotApplicable: built for another Windows build, or superseded (0x80240017).
	NotApplicable bool
}

func newMemMachine() memMachine {
	return memMachine{images: map[string][]string{}, held: map[string][]string{}, failImages: map[string]imageFailure{},
		packages: map[string]UpdatePackage{}, updates: map[string]updateState{}}
}

// SetImages says which files a service's process maps while it runs: its program and what
// the program runs (kube-log-runner.exe and kubelet.exe for the kubelet service). The SCM's
// command line names them on a real host; here the test does.
func (h *MemHost) SetImages(service string, paths ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.machine.images[service] = slices.Clone(paths)
	if s := h.services[service]; s != nil && s.state == ServiceRunning {
		for _, p := range paths {
			h.hold(p, "service "+service)
		}
	}
}

// HoldFile models a process outside the SCM running from path (a pod's containerd shim, which
// outlives containerd) until ReleaseFile or a restart.
func (h *MemHost) HoldFile(path, holder string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hold(path, holder)
}

func (h *MemHost) hold(path, holder string) {
	if !slices.Contains(h.machine.held[path], holder) {
		h.machine.held[path] = append(h.machine.held[path], holder)
		slices.Sort(h.machine.held[path])
	}
}

// ReleaseFile ends everything that runs from path.
func (h *MemHost) ReleaseFile(path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.machine.held, path)
}

// Held is what runs from path, comma-separated ("" when nothing does).
func (h *MemHost) Held(path string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.machine.held[path], ", ")
}

// FailImage makes every program whose file has this sha256 exit at once with code (a kubelet
// that cannot start with the node's configuration); "" reason lets it run again.
func (h *MemHost) FailImage(sum string, code uint32, reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if reason == "" {
		delete(h.machine.failImages, sum)
		return
	}
	h.machine.failImages[strings.ToLower(sum)] = imageFailure{code: code, reason: reason}
}

// AddUpdatePackage tells MemHost what the package file with this sha256 is.
func (h *MemHost) AddUpdatePackage(sum string, p UpdatePackage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.machine.packages[strings.ToLower(sum)] = p
}

// InstalledUpdates are the KBs installed (a pending install not yet, a pending removal still),
// sorted.
func (h *MemHost) InstalledUpdates() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for kb, st := range h.machine.updates {
		if st == updateInstalled || st == updatePendingUninstall {
			out = append(out, kb)
		}
	}
	sort.Strings(out)
	return out
}

// loadImages is a service's process starting: every image must exist (ERROR_PATH_NOT_FOUND) and
// be a program that runs; then the process holds them. It returns the exit code and reason of
// a start that fails ("" when it runs).
func (h *MemHost) loadImages(name string) (uint32, string) {
	images := h.machine.images[name]
	for _, p := range images {
		sum, err := binaries.FileSHA256(p)
		if err != nil {
			return errorPathNotFound, fmt.Sprintf("the service binary file could not be found: %s (ERROR_PATH_NOT_FOUND)", p)
		}
		if f, ok := h.machine.failImages[sum]; ok {
			return f.code, fmt.Sprintf("%s exited with code %d: %s", p, f.code, f.reason)
		}
	}
	for _, p := range images {
		h.hold(p, "service "+name)
	}
	return 0, ""
}

// releaseImages is a service's process ending: what it held is free, under whatever name the
// files have now.
func (h *MemHost) releaseImages(name string) {
	for p, holders := range h.machine.held {
		if rest := slices.DeleteFunc(holders, func(x string) bool { return x == "service "+name }); len(rest) > 0 {
			h.machine.held[p] = rest
		} else {
			delete(h.machine.held, p)
		}
	}
}

// rebootMachine is the machine part of Reboot: every process ends, updates pending a restart
// complete. Reboot then starts the automatic services, which hold their programs again.
func (h *MemHost) rebootMachine() {
	clear(h.machine.held)
	for kb, st := range h.machine.updates {
		switch st {
		case updatePendingInstall:
			h.machine.updates[kb] = updateInstalled
			h.event("update-installed", kb, "at restart")
		case updatePendingUninstall:
			delete(h.machine.updates, kb)
			h.event("update-removed", kb, "at restart")
		}
	}
}

// RenameFile implements Machine with Windows' rules on files in use.
func (h *MemHost) RenameFile(ctx context.Context, from, to string) error {
	if err := h.enter(ctx, false); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if holders := h.machine.held[to]; len(holders) > 0 {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: fmt.Errorf("access is denied (ERROR_ACCESS_DENIED %d): %s runs from it", errorAccessDenied, strings.Join(holders, ", "))}
	}
	if err := os.Rename(from, to); err != nil {
		return err
	}
	if holders := h.machine.held[from]; len(holders) > 0 {
		delete(h.machine.held, from)
		h.machine.held[to] = holders
	}
	h.event("file-rename", from, "to "+to)
	return nil
}

// RemoveFile implements Machine: a file in use cannot be deleted.
func (h *MemHost) RemoveFile(ctx context.Context, path string) error {
	if err := h.enter(ctx, false); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if holders := h.machine.held[path]; len(holders) > 0 {
		return &os.PathError{Op: "remove", Path: path, Err: fmt.Errorf("access is denied (ERROR_ACCESS_DENIED %d): %s runs from it", errorAccessDenied, strings.Join(holders, ", "))}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Restart implements Machine: the machine restarts at once (Reboot). The caller's process
// "ends" only in that a test starts another one from the files it left.
func (h *MemHost) Restart(ctx context.Context) error {
	if err := h.enter(ctx, false); err != nil {
		return err
	}
	h.Reboot()
	return nil
}

// memEpoch is the model's first boot; each Reboot is an hour later.
func memEpoch() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// BootTime implements Machine: an hour after the last boot per Reboot (a model clock).
func (h *MemHost) BootTime(ctx context.Context) (time.Time, error) {
	if err := h.enter(ctx, false); err != nil {
		return time.Time{}, err
	}
	return memEpoch().Add(time.Duration(h.Count("reboot", "")) * time.Hour), nil
}

// RunInstaller implements Machine for the command lines of InstallCommand and UninstallCommand.
func (h *MemHost) RunInstaller(ctx context.Context, argv []string) (uint32, error) {
	if err := h.enter(ctx, false); err != nil {
		return 0, err
	}
	h.mu.Lock()
	if len(argv) == 0 {
		h.mu.Unlock()
		return 0, errors.New("run installer: empty command line")
	}
	var code uint32
	var reboot bool
	var err error
	switch {
	case strings.EqualFold(argv[0], WusaPath):
		code, reboot, err = h.wusa(argv[1:])
	case strings.EqualFold(argv[0], DismPath):
		code, reboot, err = h.dism(argv[1:])
	default:
		err = fmt.Errorf("run %s: MemHost models wusa.exe and DISM.exe only", argv[0])
	}
	h.mu.Unlock()
	if reboot {
		// wusa /quiet without /norestart restarts the machine itself.
		h.Reboot()
	}
	return code, err
}

func hasFlag(args []string, flag string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.EqualFold(a, flag) })
}

// wusa models wusa.exe: `<msu> /quiet /norestart` and `/uninstall /kb:<n> /quiet /norestart`.
// Without /quiet wusa asks the user, which a service cannot answer: refused here.
func (h *MemHost) wusa(args []string) (uint32, bool, error) {
	if !hasFlag(args, "/quiet") {
		return 0, false, errors.New("wusa without /quiet waits for a user to click (MemHost refuses it)")
	}
	restart := !hasFlag(args, "/norestart")
	if hasFlag(args, "/uninstall") {
		var kb string
		for _, a := range args {
			if n, ok := strings.CutPrefix(strings.ToLower(a), "/kb:"); ok {
				kb = "KB" + n
			}
		}
		if kb == "KB" || kb == "" {
			return 0, false, errors.New("wusa /uninstall without /kb:<number>")
		}
		return h.uninstallKB(kb, restart, ExitAlreadyUninstalled)
	}
	var pkg string
	for _, a := range args {
		// The package is the argument naming an .msu (a test's path may start with a slash,
		// as wusa's switches do).
		if strings.EqualFold(filepath.Ext(a), ".msu") {
			pkg = a
		}
	}
	if pkg == "" {
		return 0, false, errors.New("wusa: no .msu named")
	}
	return h.installPackage(pkg, restart, ExitAlreadyInstalled)
}

// dism models DISM.exe /Online /Add-Package|/Remove-Package /PackagePath:<cab> /Quiet /NoRestart.
func (h *MemHost) dism(args []string) (uint32, bool, error) {
	if !hasFlag(args, "/Online") {
		return 0, false, errors.New("DISM without /Online services an offline image, not this host")
	}
	restart := !hasFlag(args, "/NoRestart")
	var pkg string
	for _, a := range args {
		if p, ok := strings.CutPrefix(a, "/PackagePath:"); ok {
			pkg = p
		}
	}
	if pkg == "" {
		return 0, false, errors.New("DISM: no /PackagePath:")
	}
	switch {
	case hasFlag(args, "/Add-Package"):
		return h.installPackage(pkg, restart, ExitSuccess)
	case hasFlag(args, "/Remove-Package"):
		p, err := h.packageAt(pkg)
		if err != nil {
			return 0, false, err
		}
		return h.uninstallKB(p.KB, restart, ExitSuccess)
	}
	return 0, false, errors.New("DISM: neither /Add-Package nor /Remove-Package")
}

func (h *MemHost) packageAt(path string) (UpdatePackage, error) {
	sum, err := binaries.FileSHA256(path)
	if err != nil {
		return UpdatePackage{}, fmt.Errorf("update package %s: %w", path, err)
	}
	p, ok := h.machine.packages[sum]
	if !ok {
		return UpdatePackage{}, fmt.Errorf("update package %s (sha256 %s): not a package MemHost was given (AddUpdatePackage)", path, sum)
	}
	return p, nil
}

// installPackage is the shared install of wusa and DISM; already is the code for a package
// installed (or pending) already. It returns the exit code and whether the installer restarts
// the machine itself.
func (h *MemHost) installPackage(path string, restart bool, already uint32) (uint32, bool, error) {
	p, err := h.packageAt(path)
	if err != nil {
		return 0, false, err
	}
	switch st := h.machine.updates[p.KB]; {
	case p.NotApplicable:
		h.event("update-not-applicable", p.KB, "")
		return ExitNotApplicable, false, nil
	case st == updateInstalled || st == updatePendingInstall:
		return already, false, nil
	case st == updatePendingUninstall:
		h.machine.updates[p.KB] = updateInstalled
		return ExitSuccess, false, nil
	}
	if !p.NeedsReboot {
		h.machine.updates[p.KB] = updateInstalled
		h.event("update-installed", p.KB, "")
		return ExitSuccess, false, nil
	}
	h.machine.updates[p.KB] = updatePendingInstall
	h.event("update-pending", p.KB, "install completes at the next restart")
	if restart {
		return ExitRebootInitiated, true, nil
	}
	return ExitRebootRequired, false, nil
}

func (h *MemHost) uninstallKB(kb string, restart bool, notInstalled uint32) (uint32, bool, error) {
	var needsReboot bool
	for _, p := range h.machine.packages {
		if p.KB == kb {
			needsReboot = p.NeedsReboot
		}
	}
	switch h.machine.updates[kb] {
	case "", updatePendingUninstall:
		return notInstalled, false, nil
	case updatePendingInstall:
		delete(h.machine.updates, kb)
		return ExitSuccess, false, nil
	}
	if !needsReboot {
		delete(h.machine.updates, kb)
		h.event("update-removed", kb, "")
		return ExitSuccess, false, nil
	}
	h.machine.updates[kb] = updatePendingUninstall
	h.event("update-pending", kb, "removal completes at the next restart")
	if restart {
		return ExitRebootInitiated, true, nil
	}
	return ExitRebootRequired, false, nil
}
