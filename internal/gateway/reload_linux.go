package gateway

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// PIDFileReloader sends SIGHUP to keepalived. In the DaemonSet both containers share the pod's
// process namespace, so pids are valid for us.
//
// keepalived started on a configuration without instances idles and writes no pid file until a
// reload gives it work, so when PIDFile names no live keepalived the reloader looks for the
// keepalived parent process whose command line names ConfigPath.
type PIDFileReloader struct {
	PIDFile    string
	ConfigPath string
	// Proc is the proc filesystem root (default /proc).
	Proc string
}

// Reload signals keepalived, after checking that the pid really is keepalived: a stale pid file
// must not make us SIGHUP an unrelated process.
func (r PIDFileReloader) Reload() error {
	pid, why := r.fromPIDFile()
	if pid == 0 && r.ConfigPath != "" {
		var err error
		if pid, err = r.find(); err != nil {
			return err
		}
	}
	if pid == 0 {
		return fmt.Errorf("%w (%s)", ErrNotRunning, why)
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		return fmt.Errorf("SIGHUP keepalived pid %d: %w", pid, err)
	}
	return nil
}

func (r PIDFileReloader) proc() string {
	if r.Proc != "" {
		return r.Proc
	}
	return "/proc"
}

func (r PIDFileReloader) fromPIDFile() (int, string) {
	b, err := os.ReadFile(r.PIDFile)
	if err != nil {
		return 0, fmt.Sprintf("no pid file %s", r.PIDFile)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Sprintf("pid file %s holds %q", r.PIDFile, strings.TrimSpace(string(b)))
	}
	if name := r.comm(pid); name != "keepalived" {
		return 0, fmt.Sprintf("pid %d from %s is %q, not keepalived", pid, r.PIDFile, name)
	}
	// A zombie keeps its comm until its parent reaps it, and a parent that never waits (a
	// container runtime's shim gone wrong, a shell wrapper that exec'd something else) keeps it
	// forever: it holds no sockets and sends no adverts, so it is not running.
	if st, _ := r.stat(pid); dead(st.State) {
		return 0, fmt.Sprintf("pid %d from %s is keepalived in state %c (exited, not reaped)", pid, r.PIDFile, st.State)
	}
	return pid, ""
}

func (r PIDFileReloader) comm(pid int) string {
	b, err := os.ReadFile(filepath.Join(r.proc(), strconv.Itoa(pid), "comm"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// find returns the keepalived process whose arguments name ConfigPath and whose parent is not
// such a process (keepalived's VRRP child has the same command line), or 0.
func (r PIDFileReloader) find() (int, error) {
	entries, err := os.ReadDir(r.proc())
	if err != nil {
		return 0, fmt.Errorf("look for keepalived: %w", err)
	}
	ours := func(pid int) bool {
		if r.comm(pid) != "keepalived" {
			return false
		}
		if st, _ := r.stat(pid); dead(st.State) {
			return false
		}
		b, err := os.ReadFile(filepath.Join(r.proc(), strconv.Itoa(pid), "cmdline"))
		if err != nil {
			return false
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		for i, a := range args {
			if a == "--use-file="+r.ConfigPath || ((a == "-f" || a == "--use-file") && i+1 < len(args) && args[i+1] == r.ConfigPath) {
				return true
			}
		}
		return false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !ours(pid) {
			continue
		}
		if ppid := r.ppid(pid); ppid > 0 && ours(ppid) {
			continue
		}
		return pid, nil
	}
	return 0, nil
}

func (r PIDFileReloader) ppid(pid int) int {
	st, _ := r.stat(pid)
	return st.PPID
}

// procStat is what the controller reads from /proc/<pid>/stat (proc(5)).
type procStat struct {
	// State is field 3: R running, S sleeping, D disk sleep, T stopped, t tracing stop,
	// Z zombie, X dead, ...
	State byte
	PPID  int
	// CPUTicks is utime + stime (fields 14 and 15, clock ticks): grows while the process runs.
	CPUTicks uint64
}

// stat reads /proc/<pid>/stat. The command name (field 2) is in parentheses and may itself
// contain spaces and parentheses, so the fields are counted from the last ')'.
func (r PIDFileReloader) stat(pid int) (procStat, error) {
	b, err := os.ReadFile(filepath.Join(r.proc(), strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(string(b))
}

func parseProcStat(s string) (procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("proc stat %q: no command name", truncate(s, 40))
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("proc stat %q: no state and parent", truncate(s, 40))
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, fmt.Errorf("proc stat %q: parent pid: %w", truncate(s, 40), err)
	}
	st := procStat{State: f[0][0], PPID: ppid}
	if len(f) >= 13 { // fields 14 and 15 are f[11] and f[12] (f[0] is field 3)
		u, uerr := strconv.ParseUint(f[11], 10, 64)
		k, kerr := strconv.ParseUint(f[12], 10, 64)
		if uerr == nil && kerr == nil {
			st.CPUTicks = u + k
		}
	}
	return st, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// dead: exited (zombie, not reaped yet) or being torn down.
func dead(state byte) bool { return state == 'Z' || state == 'X' || state == 'x' }

// stopped: SIGSTOP/SIGTSTP or a tracer holds it; it runs no code until SIGCONT.
func stopped(state byte) bool { return state == 'T' || state == 't' }
