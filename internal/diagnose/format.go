package diagnose

import (
	"bytes"
	"strconv"
)

// The format layer: a line reaches the catalogue and the unmatched summary with its severity,
// component and message whatever wraps it. Collectors add envelopes (journald/syslog, CRI log
// files, timestamps, markdown quoting when pasted into an issue); each is removed in turn until
// a component's own layout is recognised. Lines with no layout get a severity from the
// component's own conventions where one exists (kubeadm's "[ERROR …]", PowerShell error records,
// Go panics) and from the wording otherwise.

const maxEnvelopes = 5

// parseEnveloped is ParseLine's loop: strip envelopes until a layout is recognised.
func parseEnveloped(b []byte) Line {
	comp := ""
	rest := b
	for range maxEnvelopes {
		if l, ok := parseFormats(rest); ok {
			if l.Component == "" {
				l.Component = comp
			}
			return l
		}
		next, c, ok := stripEnvelope(rest)
		if !ok {
			break
		}
		if c != "" {
			comp = c
		}
		rest = next
	}
	l, ok := parseRecord(rest)
	if !ok {
		l = Line{Format: FormatPlain, Msg: rest, Repeat: 1}
		if comp != "" {
			l.Format = FormatSyslog
		}
		l.Severity = wordingSeverity(rest)
	}
	if l.Component == "" {
		l.Component = comp
	}
	return l
}

// stripEnvelope removes one collector prefix and returns the rest and the component the prefix
// names ("" when it names none).
func stripEnvelope(b []byte) (rest []byte, component string, ok bool) {
	if len(b) == 0 {
		return nil, "", false
	}
	// Leading blanks, markdown quote markers ("> ", "| ") and inline-code backticks of a pasted line.
	if b[0] == ' ' || b[0] == '\t' || b[0] == '`' || ((b[0] == '>' || b[0] == '|') && len(b) > 1 && b[1] == ' ') {
		i := 0
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '`' || ((b[i] == '>' || b[i] == '|') && i+1 < len(b) && b[i+1] == ' ')) {
			i++
		}
		return bytes.TrimRight(b[i:], "` "), "", true
	}
	if r, ok := stripWrapper(b); ok {
		return r, wrapperComponent(b, r), true
	}
	// RFC 5424 syslog: "<34>1 2003-10-11T22:14:15.003Z host app procid msgid - msg".
	if b[0] == '<' {
		if i := bytes.IndexByte(b[:min(len(b), 6)], '>'); i > 1 {
			if _, err := strconv.Atoi(string(b[1:i])); err == nil {
				r := b[i+1:]
				if len(r) > 2 && r[0] == '1' && r[1] == ' ' {
					return rfc5424Message(r[2:])
				}
				return r, "", true
			}
		}
	}
	// An RFC 3339 / ISO timestamp column, then a CRI log file's "stdout F " / "stderr P "
	// (kubelet's CRI logging format: k8s.io/cri-client/pkg/logs), a host, or the message.
	if n := isoTimestampLen(b); n > 0 {
		r := bytes.TrimLeft(b[n:], " \t")
		for _, s := range []string{"stdout F ", "stderr F ", "stdout P ", "stderr P "} {
			if bytes.HasPrefix(r, []byte(s)) {
				return r[len(s):], "", true
			}
		}
		if p, c, ok := stripProgram(r, true); ok {
			return p, c, true
		}
		return r, "", true
	}
	if p, c, ok := stripProgram(b, false); ok {
		return p, c, true
	}
	return nil, "", false
}

// wrapperComponent names the program of a syslog wrapper ("May 10 09:26:40 host kubelet[1046]: ").
func wrapperComponent(full, rest []byte) string {
	head := full[:len(full)-len(rest)]
	head = bytes.TrimRight(head, ": ")
	if i := bytes.LastIndexByte(head, ' '); i >= 0 {
		head = head[i+1:]
	}
	if i := bytes.IndexByte(head, '['); i > 0 {
		head = head[:i]
	}
	return componentOf(head)
}

// rfc5424Message skips TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA (RFC 5424 §6).
func rfc5424Message(b []byte) ([]byte, string, bool) {
	fields := 0
	app := []byte(nil)
	for fields < 5 {
		i := bytes.IndexByte(b, ' ')
		if i < 0 {
			return b, componentOf(app), true
		}
		if fields == 2 {
			app = b[:i]
		}
		b = b[i+1:]
		fields++
	}
	if len(b) > 0 && b[0] == '[' {
		if i := bytes.Index(b, []byte("] ")); i >= 0 {
			b = b[i+2:]
		}
	} else if len(b) > 1 && b[0] == '-' && b[1] == ' ' {
		b = b[2:]
	}
	return b, componentOf(app), true
}

// stripProgram removes "prog[pid]: ", "host prog[pid]: " (afterTime) or "prog: " where prog is
// a known component ("kubelet: E0310 …", "Keepalived_vrrp[1234]: …").
func stripProgram(b []byte, afterTime bool) ([]byte, string, bool) {
	limit := b[:min(len(b), 96)]
	colon := bytes.Index(limit, []byte(": "))
	if colon <= 0 {
		return nil, "", false
	}
	head := limit[:colon]
	words := bytes.Fields(head)
	if len(words) == 0 || len(words) > 2 || (len(words) == 2 && !afterTime) {
		return nil, "", false
	}
	prog := words[len(words)-1]
	if i := bytes.IndexByte(prog, '['); i > 0 && prog[len(prog)-1] == ']' {
		if _, err := strconv.Atoi(string(prog[i+1 : len(prog)-1])); err != nil {
			return nil, "", false
		}
		return b[colon+2:], componentOf(prog[:i]), true
	}
	if c := componentOf(prog); c != "" && knownProgram(prog) {
		return b[colon+2:], c, true
	}
	return nil, "", false
}

// componentOf maps a program or unit name to the component family diagnose reports.
func componentOf(prog []byte) string {
	p := string(bytes.ToLower(bytes.TrimSuffix(bytes.TrimSuffix(prog, []byte(".exe")), []byte(".service"))))
	switch {
	case p == "":
		return ""
	case len(p) >= 10 && p[:10] == "keepalived":
		return "keepalived"
	case p == "kubelet", p == "kube-proxy", p == "kubeadm", p == "containerd", p == "kube-apiserver", p == "etcd", p == "crio", p == "dockerd":
		return p
	case p == "flanneld", p == "flannel":
		return "flannel"
	case p == "calico-node", p == "calico", p == "calico-felix", p == "felix", p == "confd", p == "typha", p == "calico-typha":
		return "calico"
	case p == "kernel":
		return "kernel"
	case p == "systemd":
		return "systemd"
	}
	return p
}

// knownProgram reports names that may prefix a line without a pid ("kubelet: …").
func knownProgram(prog []byte) bool {
	switch componentOf(prog) {
	case "keepalived", "kubelet", "kube-proxy", "kubeadm", "containerd", "flannel", "calico", "kernel", "crio", "dockerd", "etcd", "kube-apiserver":
		return true
	}
	return false
}

// isoTimestampLen returns the length of an RFC 3339 / ISO 8601 timestamp at the start of b
// ("2024-01-02T03:04:05.123456789Z", "2024-01-02 03:04:05,123", "+0000" offsets), 0 if none.
func isoTimestampLen(b []byte) int {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != ' ') || b[13] != ':' || b[16] != ':' {
		return 0
	}
	for _, i := range []int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if !isDigit(b[i]) {
			return 0
		}
	}
	i := 19
	if i < len(b) && (b[i] == '.' || b[i] == ',') {
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	switch {
	case i < len(b) && b[i] == 'Z':
		i++
	case i+5 <= len(b) && (b[i] == '+' || b[i] == '-') && isDigit(b[i+1]):
		i += 3
		if i < len(b) && b[i] == ':' {
			i++
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && b[i] != ' ' && b[i] != '\t' {
		return 0
	}
	return i
}

// parseRecord recognises layouts that have no timestamp: kubeadm's CLI output, PowerShell error
// records, Go panics.
func parseRecord(b []byte) (Line, bool) {
	switch {
	// kubeadm preflight: "[ERROR Swap]: …" aborts the join (kubeadm
	// cmd/kubeadm/app/preflight/checks.go RunChecks returns an error for every [ERROR] line unless
	// --ignore-preflight-errors names it); "[WARNING Swap]: …" is printed and the join goes on.
	case bytes.HasPrefix(b, []byte("[ERROR ")):
		return Line{Format: FormatKubeadm, Severity: 'E', Component: "kubeadm", Msg: b, Repeat: 1}, true
	case bytes.HasPrefix(b, []byte("[WARNING ")):
		return Line{Format: FormatKubeadm, Severity: 'W', Component: "kubeadm", Msg: b, Repeat: 1}, true
	case bytes.HasPrefix(b, []byte("error execution phase ")), bytes.HasPrefix(b, []byte("couldn't validate the identity of the API Server")):
		return Line{Format: FormatKubeadm, Severity: 'E', Component: "kubeadm", Msg: b, Repeat: 1}, true
	case len(b) > 3 && b[0] == '[' && kubeadmPhase(b):
		return Line{Format: FormatKubeadm, Severity: wordingSeverity(b), Component: "kubeadm", Msg: b, Repeat: 1}, true
	// Go runtime: "panic: …" and "fatal error: …" end the process (runtime/panic.go printpanics,
	// runtime.fatal).
	case bytes.HasPrefix(b, []byte("panic: ")), bytes.HasPrefix(b, []byte("fatal error: ")):
		return Line{Format: FormatPanic, Severity: 'F', Msg: b, Repeat: 1}, true
	}
	return parsePowerShellRecord(b)
}

// kubeadmPhase reports kubeadm's phase-prefixed output: "[preflight] …", "[kubelet-start] …".
func kubeadmPhase(b []byte) bool {
	end := bytes.IndexByte(b[:min(len(b), 32)], ']')
	if end < 2 || end+1 >= len(b) || b[end+1] != ' ' {
		return false
	}
	for _, c := range b[1:end] {
		if !(c >= 'a' && c <= 'z' || c == '-') {
			return false
		}
	}
	return true
}

// parsePowerShellRecord recognises the lines of a PowerShell ErrorRecord as the console host
// prints it (about_Error_Handling; System.Management.Automation.ErrorRecord: the message line
// "Cmdlet-Name : message", the position "At C:\x.ps1:12 char:5", the "+ CategoryInfo : …" and
// "+ FullyQualifiedErrorId : …" lines), Write-Warning's "WARNING: " and exceptions.
func parsePowerShellRecord(b []byte) (Line, bool) {
	t := bytes.TrimLeft(b, " ")
	switch {
	case bytes.HasPrefix(t, []byte("+ CategoryInfo")), bytes.HasPrefix(t, []byte("+ FullyQualifiedErrorId")):
		msg := t
		if i := bytes.Index(t, []byte(": ")); i >= 0 {
			msg = t[i+2:]
		}
		return Line{Format: FormatPowerShell, Severity: 'E', Component: "powershell", Msg: msg, Repeat: 1, Continuation: true}, true
	case bytes.HasPrefix(t, []byte("At line:")), psScriptPosition(t), bytes.HasPrefix(t, []byte("+ ")) && len(t) > 2 && (t[2] == '~' || t[2] == ' '):
		return Line{Format: FormatPowerShell, Severity: 'I', Component: "powershell", Msg: t, Repeat: 1, Continuation: true}, true
	case bytes.Contains(t, []byte("Check the spelling of the name, or if a path was included")) && !bytes.Contains(t, []byte("not recognized")):
		// The second half of CommandNotFoundException's message where the console wrapped it
		// (PowerShell's DiscoveryExceptions.resx CommandNotFoundException text): part of the
		// record whose message line came just before.
		return Line{Format: FormatPowerShell, Severity: 'E', Component: "powershell", Msg: t, Repeat: 1, Continuation: true}, true
	case bytes.HasPrefix(t, []byte("WARNING: ")):
		return Line{Format: FormatPowerShell, Severity: 'W', Component: "powershell", Msg: t[len("WARNING: "):], Repeat: 1}, true
	case bytes.HasPrefix(t, []byte("VERBOSE: ")):
		return Line{Format: FormatPowerShell, Severity: 'I', Component: "powershell", Msg: t[len("VERBOSE: "):], Repeat: 1}, true
	case bytes.HasPrefix(t, []byte("Exception calling ")), bytes.HasPrefix(t, []byte("Exception setting ")):
		return Line{Format: FormatPowerShell, Severity: 'E', Component: "powershell", Msg: t, Repeat: 1}, true
	}
	if n := cmdletHeaderLen(t); n > 0 {
		return Line{Format: FormatPowerShell, Severity: 'E', Component: "powershell", Msg: t[n:], Repeat: 1}, true
	}
	return Line{}, false
}

// psScriptPosition reports the position row of an error record raised in a script or module:
// "At C:\k\start.ps1:42 char:5" (the console's error view; "At line:N char:M" when typed).
func psScriptPosition(t []byte) bool {
	if !bytes.HasPrefix(t, []byte("At ")) {
		return false
	}
	i := bytes.LastIndex(t, []byte(" char:"))
	if i < 5 || t[i-1] < '0' || t[i-1] > '9' {
		return false
	}
	for _, c := range bytes.TrimRight(t[i+len(" char:"):], " ") {
		if !isDigit(c) {
			return false
		}
	}
	return len(bytes.TrimRight(t[i+len(" char:"):], " ")) > 0
}

// cmdletHeaderLen returns the length of "Verb-Noun : " (a cmdlet or function name, PowerShell's
// Verb-Noun naming) at the start of an error record's message line, 0 if none. The name is
// printed as the user typed it ("stop-process : Cannot find a process …"), so in any case.
func cmdletHeaderLen(b []byte) int {
	i := bytes.Index(b[:min(len(b), 64)], []byte(" : "))
	if i < 3 || !(b[0] >= 'A' && b[0] <= 'Z' || b[0] >= 'a' && b[0] <= 'z') {
		return 0
	}
	name := b[:i]
	dash := bytes.IndexByte(name, '-')
	if dash < 2 || dash == len(name)-1 {
		return 0
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return 0
		}
	}
	return i + 3
}

// wordingSeverity gives a line that carries no level one from its wording: what Go components
// print when something fails ("failed to", "error:", "unable to", errno texts) is an error,
// "warning" a warning. A line that only says no error happened is not one.
func wordingSeverity(b []byte) byte {
	if len(b) > 512 {
		b = b[:512]
	}
	low := bytes.ToLower(b)
	// conmon (CRI-O's container monitor) tags its own levels: "<ninfo>", "<nwarn>", "<error>"
	// (containers/conmon src/utils.h).
	switch {
	case bytes.Contains(low, []byte("<ninfo>")):
		return 'I'
	case bytes.Contains(low, []byte("<nwarn>")):
		return 'W'
	}
	for _, benign := range []string{"no error", "without error", "0 errors", "err=<nil>", "error=<nil>", "error: <nil>", "errors=0", "successfully", "succeeded"} {
		if bytes.Contains(low, []byte(benign)) {
			return 0
		}
	}
	for _, p := range []string{"error", "fatal", "panic", "failed", "failure", "unable to", "cannot ", "can't ", "could not", "couldn't", "exception", "invalid "} {
		if bytes.HasPrefix(low, []byte(p)) {
			return 'E'
		}
	}
	for _, p := range []string{"warning", "warn:", "warn ", "deprecated"} {
		if bytes.HasPrefix(low, []byte(p)) {
			return 'W'
		}
	}
	for _, w := range []string{"failed to ", " failed:", " failed with", " error: ", " error:", "error=", "err=", "error while", "unable to ", "cannot ", "could not ",
		"not found", "permission denied", "access is denied", "connection refused", "no such file", "timed out", "is not running", "exited with", "not supported",
		" is invalid", "invalid value", "unknown keyword", "refused", "forbidden", "does not exist", " is denied"} {
		if bytes.Contains(low, []byte(w)) {
			return 'E'
		}
	}
	if hasWord(low, "error") || hasWord(low, "errors") {
		return 'E'
	}
	if bytes.Contains(low, []byte("warning")) {
		return 'W'
	}
	return 0
}

// hasWord reports whether w occurs in b as a whole word.
func hasWord(b []byte, w string) bool {
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(w))
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !isAlnum(b[j-1])) && (end == len(b) || !isAlnum(b[end])) {
			return true
		}
		i = j + 1
	}
}

type nodeOS uint8

const (
	osUnknown nodeOS = iota
	osLinux
	osWindows
)

// osOf is the OS a finding's lines show: Linux or Windows when its lines say only that one.
func osOf(linux, windows bool) nodeOS {
	switch {
	case linux && !windows:
		return osLinux
	case windows && !linux:
		return osWindows
	}
	return osUnknown
}

// String is the OS as Finding.OS names it ("" when unknown).
func (o nodeOS) String() string {
	switch o {
	case osLinux:
		return "linux"
	case osWindows:
		return "windows"
	}
	return ""
}

// lineOS tells from a line's own text which OS wrote it: Windows drive paths, named pipes,
// .exe names, HNS/HCS calls; Linux absolute paths under the FHS directories kubelet and
// containerd use, systemd/journald, unix sockets. Lines that show neither (or both) say nothing.
func lineOS(b []byte) nodeOS {
	win := bytes.Contains(b, []byte(`:\`)) || bytes.Contains(b, []byte(`\\.\pipe`)) || bytes.Contains(b, []byte("npipe:")) ||
		bytes.Contains(b, []byte(".exe")) || bytes.Contains(b, []byte("hcsshim")) || bytes.Contains(b, []byte("HNS")) || bytes.Contains(b, []byte("hcn"))
	lin := false
	for _, m := range []string{" /etc/", " /var/", " /run/", " /proc/", " /sys/", " /opt/", " /usr/", `"/etc/`, `"/var/`, `"/run/`, `"/opt/`,
		"unix:///", "systemd", "journalctl", "iptables", "br_netfilter", "cgroup"} {
		if bytes.Contains(b, []byte(m)) {
			lin = true
			break
		}
	}
	switch {
	case win && !lin:
		return osWindows
	case lin && !win:
		return osLinux
	}
	return osUnknown
}
