//go:build linux

package gateway

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// FallbackNice is the nice value keepalived runs at where the kernel refuses real-time
// scheduling (ExecRealtime).
const FallbackNice = -20

// ExecRealtime replaces this process with argv (keepalived in the gateway DaemonSet) running
// SCHED_RR at priority for the whole process — the parent and the VRRP child it forks — as
// `chrt --rr` would. Where the kernel refuses SCHED_RR — on cgroup-v1 kernels with RT group
// scheduling a pod's new cpu cgroup has cpu.rt_runtime_us 0, and sched_setattr fails with EPERM
// for every task in it (Documentation/scheduler/sched-rt-group.rst) — chrt exits non-zero and
// the container would crash-loop without keepalived; here keepalived runs SCHED_OTHER at nice
// FallbackNice instead, and one line on w says so. keepalived's own vrrp_rt_priority is no
// alternative with keepalived 2.2.7 (Debian 12): a reload resets RLIMIT_RTTIME to 0 and the
// kernel SIGKILLs the real-time VRRP child (lib/process.c reset_process_priorities; fixed in
// v2.3.4, acassen/keepalived 970890c6; measured in bench/README.md, gateway).
//
// Linux scheduling policy and nice are per thread, and the thread that calls execve becomes
// the new program's only thread: everything happens on one locked OS thread. It returns only
// on failure.
func ExecRealtime(priority int, argv []string, w io.Writer) error {
	if len(argv) == 0 {
		return errors.New("exec with real-time priority: no command")
	}
	if priority < 1 || priority > 99 {
		return fmt.Errorf("exec %s: real-time priority %d outside 1-99", argv[0], priority)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("exec %s: %w", argv[0], err)
	}
	runtime.LockOSThread()
	// The thread stays locked: on failure the caller exits.
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_RR, Priority: uint32(priority)}
	if rtErr := unix.SchedSetAttr(0, &attr, 0); rtErr != nil {
		if niceErr := unix.Setpriority(unix.PRIO_PROCESS, 0, FallbackNice); niceErr != nil {
			fmt.Fprintf(w, "kubewin: SCHED_RR %d refused (%v) and nice %d too (%v): %s runs at normal priority\n", priority, rtErr, FallbackNice, niceErr, argv[0])
		} else {
			fmt.Fprintf(w, "kubewin: SCHED_RR %d refused (%v; on cgroup-v1 kernels with RT group scheduling the pod's cgroup has no real-time budget): %s runs SCHED_OTHER at nice %d\n",
				priority, rtErr, argv[0], FallbackNice)
		}
	}
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("exec %s: %w", path, err)
	}
	return nil
}
