package diagnose

// serviceSignatures: Windows Service Control Manager and nssm messages, as found in event-log
// text exports (wevtutil qe /f:text, Get-WinEvent) and console transcripts.
func serviceSignatures() []Signature {
	return []Signature{
		{
			ID: "SERVICE-TERMINATED-UNEXPECTEDLY", Component: "service", Severity: SevError,
			Title:   "Windows service crashed (SCM 7031/7034)",
			Literal: "service terminated unexpectedly",
			Pattern: `The (?P<service>[\w .-]+?) service terminated unexpectedly\.\s+It has done this (?P<times>\d+) time`,
			Cause:   "{service} exited {times} time(s) without being stopped; the reason is in its own log, not in the event log.",
			Fix:     "Read the service's log (nssm get {service} AppStdout / --log-file), run the binary by hand with the same arguments (sc qc {service}), fix the first error it prints.",
			Refs:    []string{"https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/sc-query"},
		},
		{
			ID: "SERVICE-FAILED-TO-START", Component: "service", Severity: SevError,
			Title:   "Windows service failed to start (SCM 7000)",
			Literal: "service failed to start due to the following error",
			Pattern: `The (?P<service>[\w .-]+?) service failed to start due to the following error:?\s*(?P<reason>.*)`,
			Cause:   "The SCM could not start {service}: {reason}",
			Fix:     "sc qc {service} to check the binary path and account; fix the path/permissions and Start-Service {service}.",
			Refs:    []string{"https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/sc-config"},
		},
		{
			ID: "SERVICE-START-TIMEOUT", Component: "service", Severity: SevError,
			Title:   "service did not talk to the SCM (SCM 7009)",
			Literal: "while waiting for the",
			Pattern: `A timeout was reached \((?P<ms>\d+) milliseconds\) while waiting for the (?P<service>[\w .-]+?) service to connect`,
			Cause:   "{service} was registered with sc.exe but its binary does not implement the service protocol (kubelet/kube-proxy without --windows-service, flanneld).",
			Fix:     "Add --windows-service to the kubelet/kube-proxy arguments (sc config {service} binPath= \"...\\kubelet.exe --windows-service ...\") or wrap the binary with nssm.",
			Refs:    []string{"https://kubernetes.io/docs/setup/production-environment/windows/"},
		},
		{
			ID: "SERVICE-DEPENDENTS-RUNNING", Component: "service", Severity: SevWarning,
			Title:   "cannot stop a service others depend on",
			Literal: "a service that other running services are dependent on",
			Pattern: `A stop control has been sent to a service that other running services are dependent on`,
			Cause:   "Stopping/restarting the service (e.g. kubelet) is refused while a dependent service (kube-proxy, DependOnService) runs; the old process keeps running with the old arguments.",
			Fix:     "Restart-Service -Force kubelet (restarts dependants too), or stop kube-proxy first; verify the new PID with sc queryex.",
			Refs:    []string{"https://nssm.cc/commands"},
		},
		{
			ID: "SERVICE-DEPENDENCY-FAILED", Component: "service", Severity: SevError,
			Title:   "service not started because its dependency failed (SCM 7001)",
			Literal: "service which failed to start because of the following error",
			Pattern: `The (?P<service>[\w .-]+?) service depends on the (?P<dependency>[\w .-]+?) service which failed to start`,
			Cause:   "{service} waits for {dependency}, which failed to start.",
			Fix:     "Fix {dependency} first (see its own finding), then Start-Service {service}.",
			Refs:    []string{"https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/sc-config"},
		},
		{
			ID: "SERVICE-LOGON-FAILED", Component: "service", Severity: SevError,
			Title:   "service account cannot log on (SCM 7038)",
			Literal: "service was unable to log on as",
			Pattern: `The (?P<service>[\w .-]+?) service was unable to log on as (?P<account>\S+) with the currently configured password`,
			Cause:   "{service} runs as {account} whose password changed or lacks 'Log on as a service'.",
			Fix:     "sc config {service} obj= LocalSystem (or set the new password / grant SeServiceLogonRight).",
			Refs:    []string{"https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/sc-config"},
		},
		{
			ID: "NSSM-PROGRAM-EXITED", Component: "service", Severity: SevWarning,
			Title:   "nssm: program exited",
			Literal: "exited with return code",
			Pattern: `Program (?P<program>.+?) for service (?P<service>\S+) exited with return code (?P<code>-?\d+)`,
			Cause:   "{program} (service {service}) exited with code {code}; nssm restarts it according to AppExit.",
			Fix:     "Read the program's output (nssm get {service} AppStdout / AppStderr); nssm set {service} AppStdout C:\\k\\{service}.log if none is captured.",
			Refs:    []string{"https://nssm.cc/usage"},
		},
		{
			ID: "NSSM-THROTTLED", Component: "service", Severity: SevError,
			Title:   "nssm: service crash-looping (throttled)",
			Literal: "ran for less than",
			Pattern: `Service (?P<service>\S+) ran for less than (?P<ms>\d+) milliseconds\.\s*(?:Restart will be delayed by (?P<delay>\d+) milliseconds)?`,
			Cause:   "{service} exits right after starting (within {ms} ms), so nssm throttles restarts: a bad flag, missing file or unreachable dependency.",
			Fix:     "Run the binary by hand with the arguments from nssm get {service} AppParameters to see the error; fix it and nssm restart {service}.",
			Refs:    []string{"https://nssm.cc/usage"},
		},
		{
			ID: "NSSM-CANNOT-LAUNCH", Component: "service", Severity: SevError,
			Title:   "nssm: program could not be launched",
			Literal: "couldn't be launched",
			Pattern: `Failed to start service (?P<service>\S+)\.\s+Program (?P<program>.+?) couldn't be launched`,
			Cause:   "nssm could not execute {program} for {service} (path wrong, file missing or blocked).",
			Fix:     "nssm get {service} Application; check the path exists (Test-Path) and is not blocked (Unblock-File); nssm set {service} Application <path>.",
			Refs:    []string{"https://nssm.cc/usage"},
		},
	}
}
