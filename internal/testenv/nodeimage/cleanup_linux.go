//go:build linux

package nodeimage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// KillShims kills (SIGKILL) every containerd shim whose command line names address as its
// containerd (-address ADDRESS), together with all of its descendants (the containers' processes),
// and waits up to 10s for them to be gone. Shims daemonize (they are not children of containerd),
// so stopping containerd leaves them running; a test calls this after stopping its containerd.
// It returns the pids it killed.
func KillShims(address string) ([]int, error) {
	procs, err := listProcs()
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for pid, p := range procs {
		children[p.ppid] = append(children[p.ppid], pid)
	}
	var victims []int
	var walk func(pid int)
	walk = func(pid int) {
		victims = append(victims, pid)
		for _, c := range children[pid] {
			walk(c)
		}
	}
	for pid, p := range procs {
		if isShimOf(p.args, address) {
			walk(pid)
		}
	}
	// Shim first, so it does not restart or reap-and-report anything while its children die.
	for _, pid := range victims {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range victims {
		for alive(pid) {
			if time.Now().After(deadline) {
				return victims, fmt.Errorf("process %d (of a shim of %s) still alive after SIGKILL", pid, address)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return victims, nil
}

// isShimOf reports whether args (a command line) is a containerd shim started by the containerd
// listening on address.
func isShimOf(args []string, address string) bool {
	if len(args) == 0 || !strings.HasPrefix(filepath.Base(args[0]), "containerd-shim") {
		return false
	}
	for i, a := range args {
		if (a == "-address" || a == "--address") && i+1 < len(args) && args[i+1] == address {
			return true
		}
		if a == "-address="+address || a == "--address="+address {
			return true
		}
	}
	return false
}

type proc struct {
	ppid int
	args []string
}

func listProcs() (map[int]proc, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	procs := map[int]proc{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid ...; comm may contain spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		var args []string
		if len(cmdline) > 0 {
			args = strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
		}
		procs[pid] = proc{ppid: ppid, args: args}
	}
	return procs, nil
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// UnmountUnder unmounts every mount point at or below dir (as listed in /proc/self/mountinfo),
// deepest first, falling back to a lazy unmount for busy ones, so that dir can be removed. It
// returns the mount points it unmounted.
func UnmountUnder(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	roots := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		roots = append(roots, real)
	}
	var unmounted []string
	var errs []error
	// A mount point may be stacked several times; repeat until nothing under dir is left.
	for round := 0; round < 10; round++ {
		points, err := mountPoints()
		if err != nil {
			return unmounted, err
		}
		var under []string
		for _, p := range points {
			for _, r := range roots {
				if p == r || strings.HasPrefix(p, r+"/") {
					under = append(under, p)
					break
				}
			}
		}
		if len(under) == 0 {
			return unmounted, errors.Join(errs...)
		}
		sort.Slice(under, func(i, j int) bool {
			di, dj := strings.Count(under[i], "/"), strings.Count(under[j], "/")
			if di != dj {
				return di > dj
			}
			return under[i] > under[j]
		})
		errs = nil
		for _, p := range under {
			err := syscall.Unmount(p, 0)
			if err != nil && err != syscall.EINVAL && err != syscall.ENOENT {
				err = syscall.Unmount(p, syscall.MNT_DETACH)
			}
			if err != nil && err != syscall.EINVAL && err != syscall.ENOENT {
				errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
				continue
			}
			unmounted = append(unmounted, p)
		}
	}
	return unmounted, errors.Join(append(errs, fmt.Errorf("mounts under %s remain after 10 rounds", abs))...)
}

// mountPoints returns the mount points of /proc/self/mountinfo in order, unescaped.
func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		points = append(points, unescapeMountinfo(fields[4]))
	}
	return points, sc.Err()
}

// unescapeMountinfo decodes the octal escapes (\040 for space, \011, \012, \134) of mountinfo.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
