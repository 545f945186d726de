//go:build linux

package gateway

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// keepalived's process model (acassen/keepalived v2.2.7): the parent (the pid in -p's file)
// only supervises; start_vrrp_child (keepalived/vrrp/vrrp_daemon.c, called from
// keepalived/core/main.c) forks the VRRP child, which sends the adverts, runs the state machine
// and adds and removes the addresses. The child sets PR_SET_PDEATHSIG=SIGTERM, so it shuts down
// in order (priority-0 advert, addresses removed) when the parent dies; the parent respawns a
// child that dies of a signal (vrrp_respawn_thread, report_child_status in lib/scheduler.c). A
// new child removes the configured addresses left on the interface before it starts
// (vrrp_restore_interfaces_startup, keepalived/vrrp/vrrp.c) and starts as BACKUP. With --vrrp
// (the DaemonSet, the tests) the parent's only keepalived child is the VRRP child; without it a
// checker child exists too, and every child is watched.

// KeepalivedSample is one look at this member's keepalived in /proc.
type KeepalivedSample struct {
	// Parent is the supervising keepalived process (0: none running; a zombie is none).
	Parent int
	// Children are the parent's keepalived children: the VRRP child (and the checker without
	// --vrrp). None while the parent idles on a configuration without instances or respawns.
	Children []KeepalivedChild
}

// KeepalivedChild is one child process's state and progress.
type KeepalivedChild struct {
	PID int
	// State is /proc/<pid>/stat's state letter (proc(5)).
	State byte
	// Switches is voluntary_ctxt_switches from /proc/<pid>/status (proc(5)): it grows every time
	// the process blocks. keepalived's scheduler blocks in epoll_wait between its timers and
	// packets, and the VRRP child has a timer at least every advert interval (adverts as MASTER,
	// the master-down timer as BACKUP) and receives the master's adverts as BACKUP, so the count
	// grows at least once per advert interval while it works. A stopped (SIGSTOP), frozen or
	// kernel-stuck (D) process does not block again, so the count stands still.
	Switches uint64
	// CPUTicks is the CPU time it used (utime + stime, /proc/<pid>/stat). A child busy for long
	// without blocking (a reload of a thousand addresses on a loaded host) is working, not
	// frozen: either count moving is progress.
	CPUTicks uint64
}

// KeepalivedProbe looks at this member's keepalived. PIDFileReloader implements it; a Reloader
// that does not disables the watch.
type KeepalivedProbe interface {
	Sample() (KeepalivedSample, error)
}

// Sample finds the keepalived parent (pid file, else command line) and reads its children.
func (r PIDFileReloader) Sample() (KeepalivedSample, error) {
	parent, _ := r.fromPIDFile()
	if parent == 0 && r.ConfigPath != "" {
		var err error
		if parent, err = r.find(); err != nil {
			return KeepalivedSample{}, err
		}
	}
	if parent == 0 {
		return KeepalivedSample{}, nil
	}
	kids, err := r.children(parent)
	if err != nil {
		return KeepalivedSample{}, err
	}
	s := KeepalivedSample{Parent: parent}
	for _, pid := range kids {
		if r.comm(pid) != "keepalived" {
			continue
		}
		st, err := r.stat(pid)
		if err != nil || st.PPID != parent {
			continue // exited and reaped between the listing and now
		}
		sw, err := r.switches(pid)
		if err != nil && !dead(st.State) {
			continue // gone meanwhile; a zombie has no status counters worth reading
		}
		s.Children = append(s.Children, KeepalivedChild{PID: pid, State: st.State, Switches: sw, CPUTicks: st.CPUTicks})
	}
	return s, nil
}

// Running reports whether a keepalived parent process is alive (not a zombie).
func (r PIDFileReloader) Running() (bool, error) {
	s, err := r.Sample()
	return s.Parent != 0, err
}

// children lists pid's child processes: /proc/<pid>/task/<pid>/children (proc(5), kernels with
// CONFIG_PROC_CHILDREN), else a scan of every process's parent.
func (r PIDFileReloader) children(pid int) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(r.proc(), strconv.Itoa(pid), "task", strconv.Itoa(pid), "children"))
	if err == nil {
		var out []int
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
		return out, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("children of keepalived pid %d: %w", pid, err)
	}
	entries, err := os.ReadDir(r.proc())
	if err != nil {
		return nil, fmt.Errorf("children of keepalived pid %d: %w", pid, err)
	}
	var out []int
	for _, e := range entries {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := r.stat(c); err == nil && st.PPID == pid {
			out = append(out, c)
		}
	}
	return out, nil
}

// switches reads voluntary_ctxt_switches from /proc/<pid>/status.
func (r PIDFileReloader) switches(pid int) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(r.proc(), strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	return parseVoluntarySwitches(b)
}

func parseVoluntarySwitches(status []byte) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != "voluntary_ctxt_switches" {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("voluntary_ctxt_switches %q: %w", strings.TrimSpace(v), err)
		}
		return n, nil
	}
	return 0, errors.New("no voluntary_ctxt_switches in status")
}

// verdict is what the watch concludes from a sample.
type verdict int

const (
	alive  verdict = iota
	gone           // no keepalived parent, or a VRRP child that exited and was not reaped
	frozen         // a child neither blocked nor ran for stallAfter (stopped, frozen, stuck in the kernel)
)

// liveness follows the children's progress across samples.
type liveness struct {
	stallAfter time.Duration
	progress   map[int]progressMark
}

type progressMark struct {
	switches, cpu uint64
	since         time.Time // when either last changed (or the child was first seen)
}

// judge returns the verdict for s taken at now, the child it is about and why.
func (l *liveness) judge(s KeepalivedSample, now time.Time) (verdict, int, string) {
	if s.Parent == 0 {
		l.progress = nil
		return gone, 0, "no keepalived process"
	}
	seen := map[int]progressMark{}
	v, who, why := alive, 0, ""
	for _, c := range s.Children {
		if dead(c.State) {
			v, who, why = gone, c.PID, fmt.Sprintf("keepalived child %d exited (state %c) and its parent %d has not reaped it", c.PID, c.State, s.Parent)
			continue
		}
		m, ok := l.progress[c.PID]
		if !ok || m.switches != c.Switches || m.cpu != c.CPUTicks {
			m = progressMark{switches: c.Switches, cpu: c.CPUTicks, since: now}
		}
		seen[c.PID] = m
		if stall := now.Sub(m.since); stall >= l.stallAfter && v == alive {
			v, who = frozen, c.PID
			why = fmt.Sprintf("keepalived child %d made no progress for %s (state %c, %d voluntary context switches, %d CPU ticks)", c.PID, stall.Round(time.Millisecond), c.State, c.Switches, c.CPUTicks)
		}
	}
	l.progress = seen
	return v, who, why
}

// stallAfterFor is how long a child may make no progress: at least the peers' master-down
// timer (3 × advert + skew < 4 × advert, RFC 5798 6.1), so that when the watch acts another
// member has already taken over and releasing creates no gap the freeze did not cause, and at
// least a second, so that a busy host's scheduling delays are never mistaken for a freeze.
func stallAfterFor(advertSeconds float64) time.Duration {
	return max(time.Second, time.Duration(4*advertSeconds*float64(time.Second)))
}

// killFrozen SIGKILLs a frozen keepalived child. Why not let it resume: it would resume as
// MASTER with an advert timer already due, and the peer holding the VIPs now yields to a
// higher-priority advert before the child has read the address deletions we made (it goes to
// BACKUP when it sees one of its VIPs deleted, keepalived/core/keepalived_netlink.c) — a gap,
// and with enough addresses deleted its netlink socket overflows and it may never see them.
// SIGKILL is delivered to a stopped process at once and to one stuck in the kernel when it
// returns, before it runs any code; the parent respawns the child (BACKUP, nopreempt).
func killFrozen(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("SIGKILL frozen keepalived child %d: %w", pid, err)
	}
	return nil
}
