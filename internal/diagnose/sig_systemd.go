package diagnose

// systemd's own lines about a node service (kubelet, containerd, keepalived): `systemctl status`
// output (systemd src/systemctl/systemctl-show.c: "Active: %s (%s)" with the sub-state
// "auto-restart" and "(Result: %s)"; "Main PID: %u (code=%s, status=%i/%s)") and
// systemd-coredump's journal message ("Process %s (%s) of user %s dumped core.",
// src/coredump/coredump.c). They say that a service keeps dying, not why: the unit's own log
// (journalctl -u) says why, and kubewin's other findings on that log name it.
const refSystemctl = "https://www.freedesktop.org/software/systemd/man/latest/systemctl.html"

func systemdSignatures() []Signature {
	return []Signature{
		{
			ID: "SYSTEMD-UNIT-RESTART-LOOP", Component: "service", Severity: SevError,
			Title:   "a node service keeps exiting and systemd restarts it",
			Literal: "(auto-restart)",
			Pattern: `Active: activating \(auto-restart\)(?: \(Result: (?P<result>[\w-]+)\))?`,
			Cause: "The unit's main process exited[[ ({result})]] and systemd is waiting to start it again (Restart=always): it " +
				"crash-loops. For the kubelet this is expected on a node that has not been joined yet — it exits every few " +
				"seconds until kubeadm init/join writes /var/lib/kubelet/config.yaml — and a fault afterwards (bad flags or " +
				"config, swap on, cgroup driver different from the runtime's, the runtime socket missing).",
			Fix: "journalctl -u <unit> -n 50 --no-pager shows the exit reason (and kubewin diagnose on that output names it); " +
				"for the kubelet before a join, run the join; otherwise fix what the log names and systemctl restart the unit.",
			FixLinux: "journalctl -u <unit> -n 50 --no-pager shows the exit reason (and kubewin diagnose on that output names it); " +
				"for the kubelet before a join, run the join; otherwise fix what the log names and systemctl restart the unit.",
			Refs: []string{refSystemctl, "https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/kubelet-integration/"},
		},
		{
			ID: "SYSTEMD-MAIN-PROCESS-FAILED", Component: "service", Severity: SevError,
			Title:   "a node service's main process exited with a failure",
			Literal: "Main PID:",
			Pattern: `Main PID: (?P<pid>\d+) \(code=(?P<code>exited|killed|dumped), status=(?P<status>(?:[1-9]\d*|[A-Z]+)/[A-Z]+)\)`,
			Cause: "The service's main process (PID {pid}) ended with {code}, status {status}: exit status 1/FAILURE is the " +
				"program giving up on an error it logged; a signal (killed/dumped: SEGV, ABRT, KILL) is a crash or the " +
				"OOM killer.",
			Fix: "journalctl -u <unit> -n 50 --no-pager (the last lines before the exit give the reason); for signals also " +
				"dmesg | grep -i -E 'oom|segfault' and coredumpctl list.",
			Refs: []string{refSystemctl},
		},
		{
			ID: "SYSTEMD-COREDUMP", Component: "service", Severity: SevError,
			Title:   "a process crashed and dumped core",
			Literal: "dumped core",
			Pattern: `Process (?P<pid>\d+) \((?P<prog>[^)]+)\) of user (?P<uid>\d+) dumped core`,
			Cause: "{prog} (PID {pid}) crashed with a fatal signal and systemd-coredump saved its core: a bug in that release " +
				"(a known crash fixed in a later version), memory corruption, or a configuration path that triggers one; a " +
				"crashing keepalived or kubelet drops its VIPs or node status until restarted.",
			Fix: "coredumpctl info {prog} shows the signal and backtrace; upgrade {prog} to a release that fixes the crash " +
				"(search its issue tracker for the backtrace), and read its log lines just before the crash.",
			Refs: []string{"https://www.freedesktop.org/software/systemd/man/latest/systemd-coredump.html"},
		},
	}
}
