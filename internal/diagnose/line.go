package diagnose

import (
	"bytes"
	"time"
)

// Format names the layout a line was recognised as.
type Format uint8

const (
	FormatPlain      Format = iota
	FormatKlog              // Lmmdd hh:mm:ss.uuuuuu pid file:line] msg (kubelet, kube-proxy, flanneld)
	FormatLogrus            // time="..." level=... msg="..." (containerd, CNI plugins)
	FormatEvent             // kubectl describe / kubectl get events rows
	FormatEventLog          // Windows event-log exports (wevtutil /f:text, Get-WinEvent tables)
	FormatCalico            // 2019-04-19 16:56:55.642 [ERROR][1436] file.go 824: msg (Felix, confd, calico-node, Calico CNI)
	FormatKubeadm           // kubeadm CLI output: [ERROR Check]: msg, [preflight] msg, error execution phase …
	FormatPowerShell        // PowerShell error records (Cmdlet : msg, + CategoryInfo …), WARNING: lines
	FormatPanic             // Go runtime: panic: …, fatal error: …
	FormatSyslog            // a message under a syslog/journald program prefix and no level of its own (keepalived)
)

func (f Format) String() string {
	switch f {
	case FormatKlog:
		return "klog"
	case FormatLogrus:
		return "logrus"
	case FormatEvent:
		return "events"
	case FormatEventLog:
		return "eventlog"
	case FormatCalico:
		return "calico"
	case FormatKubeadm:
		return "kubeadm"
	case FormatPowerShell:
		return "powershell"
	case FormatPanic:
		return "panic"
	case FormatSyslog:
		return "syslog"
	}
	return "plain"
}

// Timestamp is a log time. klog headers carry no year; such times keep year 0 and NoYear set, so
// they order correctly among themselves and print without an invented year.
type Timestamp struct {
	T      time.Time
	NoYear bool
}

// IsZero reports whether no time was found.
func (t Timestamp) IsZero() bool { return t.T.IsZero() && !t.NoYear }

// String renders the time as found: "01-14 09:48:35.398102" without a year, RFC 3339 otherwise.
func (t Timestamp) String() string {
	if t.IsZero() {
		return ""
	}
	if t.NoYear {
		return t.T.Format("01-02 15:04:05.000000")
	}
	return t.T.Format(time.RFC3339Nano)
}

func (t Timestamp) before(u Timestamp) bool { return t.T.Before(u.T) }

// Line is one parsed log line. Msg aliases the input; copy it before keeping it.
type Line struct {
	Format   Format
	Severity byte // 'I', 'W', 'E', 'F', 'D' or 0 when the format has none
	Time     Timestamp
	PID      int
	Source   string // klog file:line
	Msg      []byte
	Node     string // node named by the line itself (kubectl events "kubelet, node009")
	Repeat   int    // occurrences a single line stands for (kubectl events "x12"); at least 1
	// Component named by the line's envelope or layout (journald unit, keepalived's syslog
	// ident, kubeadm, powershell); "" when nothing names it.
	Component string
	// Continuation marks the lines of a PowerShell error record after its message line (the
	// position, the "+ ~~~" marker, CategoryInfo, FullyQualifiedErrorId): they are shown only
	// when the record's message line was not seen just before them.
	Continuation bool
}

// isErrorSeverity reports whether the line is an error that must not be dropped silently.
func (l *Line) isErrorSeverity() bool { return l.Severity == 'E' || l.Severity == 'F' }

// abortsOperation reports whether the line's component treats it as fatal to what it was doing,
// whatever a matching entry's severity: kubeadm stops at an "[ERROR …]" preflight line
// (cmd/kubeadm/app/preflight/checks.go RunChecks returns an error for it unless
// --ignore-preflight-errors names the check).
func (l *Line) abortsOperation() bool { return l.Format == FormatKubeadm && l.Severity == 'E' }

// widenSpan widens the time span [*first, *last] to cover [f, l]; zero times say nothing.
func widenSpan(first, last *Timestamp, f, l Timestamp) {
	if !f.IsZero() && (first.IsZero() || f.before(*first)) {
		*first = f
	}
	if !l.IsZero() && (last.IsZero() || last.before(l)) {
		*last = l
	}
}

// isSurfaced reports whether a line no entry explains is shown in the unmatched summary: every
// error, and warnings (grouped, ranked after errors).
func (l *Line) isSurfaced() bool { return l.isErrorSeverity() || l.Severity == 'W' }

// sevPending marks a group whose severity the source index decides (a line with no level).
const sevPending = 'P'

// severityRank orders line severities, most severe first.
func severityRank(s byte) int {
	switch s {
	case 'F':
		return 0
	case 'E':
		return 1
	case 'W':
		return 2
	}
	return 3
}

// leadingBlanksTrimmed skips the spaces and tabs a pasted or indented log line starts with.
func leadingBlanksTrimmed(b []byte) []byte {
	i := 0
	for i < len(b) && i < 16 && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return b[i:]
}

// ParseLine recognises a line's layout under any collector envelope (format.go) and returns its
// severity, component and message; a line with no layout is FormatPlain (or FormatSyslog under a
// program prefix) with a severity from its wording. It never fails and never panics on any input.
func ParseLine(b []byte) Line {
	return parseEnveloped(bytes.TrimRight(b, "\r\n"))
}

func parseFormats(b []byte) (Line, bool) {
	if l, ok := ParseKlog(b); ok {
		return l, true
	}
	if l, ok := parseLogrus(b); ok {
		return l, true
	}
	if l, ok := parseCalico(b); ok {
		return l, true
	}
	if l, ok := parseLogrusText(b); ok {
		return l, true
	}
	if l, ok := parseJSONLog(b); ok {
		return l, true
	}
	if l, ok := parseEventRow(b); ok {
		return l, true
	}
	if l, ok := parseWinEventRow(b); ok {
		return l, true
	}
	if l, ok := parseCSVEventRow(b); ok {
		return l, true
	}
	return Line{}, false
}

// stripWrapper removes one collector prefix: journald/syslog ("May 10 09:26:40 host kubelet[1046]: "),
// a bracketed date ("[2021-05-08 12:20:58] "), or a host name before a logrus line
// ("ip-10-0-131-233.ec2.internal time=...").
func stripWrapper(b []byte) ([]byte, bool) {
	switch {
	case len(b) > 22 && b[0] == '[' && b[5] == '-' && b[20] == ']' && b[21] == ' ':
		return b[22:], true
	case len(b) > 17 && b[3] == ' ' && b[6] == ' ' && b[9] == ':' && b[12] == ':' && b[15] == ' ' &&
		b[0] >= 'A' && b[0] <= 'Z':
		if i := bytes.Index(b[16:min(len(b), 216)], []byte(": ")); i >= 0 {
			return b[16+i+2:], true
		}
	}
	if i := bytes.Index(b[:min(len(b), 100)], []byte(` time="`)); i > 0 && bytes.IndexByte(b[:i], ' ') < 0 {
		return b[i+1:], true
	}
	return nil, false
}

func levelSeverity(lv []byte) byte {
	switch string(bytes.ToLower(lv)) {
	case "error", "erro", "err":
		return 'E'
	case "fatal", "fata", "panic", "pani", "critical", "crit":
		return 'F'
	case "warning", "warn":
		return 'W'
	case "info":
		return 'I'
	case "debug", "debu", "trace", "trac":
		return 'D'
	}
	return 0
}

// parseCalico parses Calico's own layout: "2019-04-19 16:56:55.642 [FATAL][1436] int_dataplane.go
// 824: msg" (Felix, confd, calico-node startup, the Calico CNI; the Python Felix of 2016 wrote a
// comma before the milliseconds and "[CRITICAL][307/4]").
func parseCalico(b []byte) (Line, bool) {
	if len(b) < 27 || b[4] != '-' || b[7] != '-' || b[10] != ' ' || b[13] != ':' || b[16] != ':' ||
		(b[19] != '.' && b[19] != ',') || b[23] != ' ' || b[24] != '[' {
		return Line{}, false
	}
	end := bytes.IndexByte(b[25:min(len(b), 40)], ']')
	if end < 0 {
		return Line{}, false
	}
	sev := levelSeverity(b[25 : 25+end])
	if sev == 0 {
		return Line{}, false
	}
	l := Line{Format: FormatCalico, Severity: sev, Repeat: 1, Msg: b[25+end+1:]}
	ts := []byte(string(b[:23]))
	ts[19] = '.'
	if t, err := time.Parse("2006-01-02 15:04:05.000", string(ts)); err == nil {
		l.Time = Timestamp{T: t}
	}
	if i := bytes.Index(l.Msg, []byte(": ")); i >= 0 && i < 80 {
		l.Msg = l.Msg[i+2:]
	}
	return l, true
}

// parseLogrusText parses logrus's text formatter on a terminal: "ERRO[0000] msg",
// "FATA[2019-05-23T03:43:13Z] msg" (runc, containerd, docker, k3s).
func parseLogrusText(b []byte) (Line, bool) {
	if len(b) < 7 || b[4] != '[' {
		return Line{}, false
	}
	sev := levelSeverity(b[:4])
	if sev == 0 || b[0] < 'A' || b[0] > 'Z' {
		return Line{}, false
	}
	end := bytes.IndexByte(b[5:min(len(b), 45)], ']')
	if end < 0 {
		return Line{}, false
	}
	return Line{Format: FormatLogrus, Severity: sev, Repeat: 1, Msg: bytes.TrimLeft(b[5+end+1:], " ")}, true
}

// parseJSONLog parses one-object-per-line JSON logs: logrus/zap JSON ("level"), klog's JSON
// format, which has no level key — info records carry "v", error records carry "err" and no "v"
// (k8s.io/component-base/logs/json: zapr.LogInfoLevel("v"), zapr.ErrorKey("err")) — and ETW /
// event records with a numeric "Level" (1 critical, 2 error, 3 warning, 4 information, 5 verbose:
// the TRACE_LEVEL_* values of evntrace.h) or "LevelDisplayName". The message comes from
// "msg"/"message"/"Message".
func parseJSONLog(b []byte) (Line, bool) {
	if len(b) < 10 || b[0] != '{' {
		return Line{}, false
	}
	var sev byte
	if v, ok := jsonValue(b, "level", "severity", "Severity", "LevelDisplayName", "lvl"); ok {
		sev = levelSeverity(bytes.Trim(v, `"`))
	}
	if sev == 0 {
		if v, ok := jsonValue(b, "Level"); ok {
			switch string(bytes.Trim(v, `"`)) {
			case "1", "Critical":
				sev = 'F'
			case "2", "Error":
				sev = 'E'
			case "3", "Warning":
				sev = 'W'
			case "4", "5", "0", "Information", "Verbose":
				sev = 'I'
			}
		}
	}
	if sev == 0 {
		_, hasV := jsonValue(b, "v")
		_, hasErr := jsonValue(b, "err")
		_, hasMsg := jsonValue(b, "msg")
		switch {
		case hasMsg && hasV:
			sev = 'I'
		case hasMsg && hasErr:
			sev = 'E'
		}
	}
	if sev == 0 {
		return Line{}, false
	}
	l := Line{Format: FormatLogrus, Severity: sev, Repeat: 1, Msg: b}
	for _, k := range []string{`"msg":"`, `"message":"`, `"Message":"`, `"msg": "`, `"message": "`} {
		if i := bytes.Index(b, []byte(k)); i >= 0 {
			l.Msg = b[i+len(k):]
			break
		}
	}
	return l, true
}

// jsonValue returns the raw value of the first of keys found at the top of a one-line JSON
// object (a string with its quotes, or a number up to the next ',' or '}'). It is a scan, not a
// parser: good enough to read a level, and it never allocates.
func jsonValue(b []byte, keys ...string) ([]byte, bool) {
	for _, k := range keys {
		for off := 0; off < len(b); {
			i := bytes.Index(b[off:], []byte(`"`+k+`"`))
			if i < 0 {
				break
			}
			i += off
			rest := bytes.TrimLeft(b[i+len(k)+2:], " ")
			off = i + 1
			if len(rest) == 0 || rest[0] != ':' || (i > 0 && b[i-1] != '{' && b[i-1] != ',' && b[i-1] != ' ') {
				continue
			}
			rest = bytes.TrimLeft(rest[1:], " ")
			if len(rest) > 0 && rest[0] == '"' {
				if j := bytes.IndexByte(rest[1:], '"'); j >= 0 {
					return rest[:j+2], true
				}
				return nil, false
			}
			end := bytes.IndexAny(rest, ",}")
			if end < 0 {
				end = len(rest)
			}
			return bytes.TrimSpace(rest[:end]), true
		}
	}
	return nil, false
}

// isKlogSeverity reports whether b starts like a klog header of the given severities
// (cheap check used on every line).
func klogSeverityAt(b []byte) byte {
	if len(b) < 5 {
		return 0
	}
	switch b[0] {
	case 'I', 'W', 'E', 'F':
	default:
		return 0
	}
	if !isDigit(b[1]) || !isDigit(b[2]) || !isDigit(b[3]) || !isDigit(b[4]) {
		return 0
	}
	return b[0]
}

// klogHeaderLen returns the length of a klog header prefix "Lmmdd hh:mm:ss.uuuuuu pid " (0 if
// ln does not start with one). No catalogue literal can lie inside it (Compile checks that every
// literal has a byte outside the header alphabet), so the prefilter skips it.
func klogHeaderLen(ln []byte) int {
	if len(ln) < 24 || klogSeverityAt(ln) == 0 || ln[5] != ' ' || ln[8] != ':' || ln[11] != ':' || ln[14] != '.' {
		return 0
	}
	i := 15
	for i < len(ln) && isDigit(ln[i]) {
		i++
	}
	for i < len(ln) && ln[i] == ' ' {
		i++
	}
	for i < len(ln) && isDigit(ln[i]) {
		i++
	}
	if i < len(ln) && ln[i] == ' ' {
		return i + 1
	}
	return 0
}

// inKlogHeaderAlphabet reports whether every byte of s could occur in a klog header.
func inKlogHeaderAlphabet(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isDigit(c) && c != ' ' && c != ':' && c != '.' && c != 'I' && c != 'W' && c != 'E' && c != 'F' {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func atoiN(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// ParseKlog parses a klog/glog header: "Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg".
// The thread id is space padded; the fraction may have 1-9 digits (6 in klog itself).
func ParseKlog(b []byte) (Line, bool) {
	sev := klogSeverityAt(b)
	if sev == 0 || len(b) < 15 || b[5] != ' ' {
		return Line{}, false
	}
	month, _ := atoiN(b[1:3])
	day, _ := atoiN(b[3:5])
	if month < 1 || month > 12 || day < 1 || day > 31 {
		return Line{}, false
	}
	t := b[6:]
	if len(t) < 8 || t[2] != ':' || t[5] != ':' {
		return Line{}, false
	}
	hh, ok1 := atoiN(t[0:2])
	mm, ok2 := atoiN(t[3:5])
	ss, ok3 := atoiN(t[6:8])
	if !ok1 || !ok2 || !ok3 || hh > 23 || mm > 59 || ss > 60 {
		return Line{}, false
	}
	rest := t[8:]
	nsec := 0
	if len(rest) > 0 && rest[0] == '.' {
		i := 1
		for i < len(rest) && i <= 9 && isDigit(rest[i]) {
			i++
		}
		if i == 1 {
			return Line{}, false
		}
		frac, _ := atoiN(rest[1:i])
		for k := i - 1; k < 9; k++ {
			frac *= 10
		}
		nsec = frac
		rest = rest[i:]
	}
	// thread id
	j := 0
	for j < len(rest) && rest[j] == ' ' {
		j++
	}
	if j == 0 {
		return Line{}, false
	}
	k := j
	for k < len(rest) && isDigit(rest[k]) {
		k++
	}
	pid, ok := atoiN(rest[j:k])
	if !ok {
		return Line{}, false
	}
	rest = rest[k:]
	if len(rest) == 0 || rest[0] != ' ' {
		return Line{}, false
	}
	rest = rest[1:]
	end := bytes.IndexByte(rest, ']')
	if end <= 0 || end > 256 {
		return Line{}, false
	}
	src := rest[:end]
	if bytes.IndexByte(src, ' ') >= 0 || bytes.IndexByte(src, ':') < 0 {
		return Line{}, false
	}
	msg := rest[end+1:]
	if len(msg) > 0 && msg[0] == ' ' {
		msg = msg[1:]
	}
	ts := time.Date(0, time.Month(month), day, hh, mm, ss, nsec, time.UTC)
	return Line{
		Format: FormatKlog, Severity: sev, PID: pid, Source: string(src), Msg: msg, Repeat: 1,
		Time: Timestamp{T: ts, NoYear: true},
	}, true
}

// parseLogrus parses logrus text output as containerd and the CNI plugins write it:
// time="2024-01-02T03:04:05.123Z" level=error msg="..." key=value...
func parseLogrus(b []byte) (Line, bool) {
	const pfx = `time="`
	if !bytes.HasPrefix(b, []byte(pfx)) {
		return Line{}, false
	}
	end := bytes.IndexByte(b[len(pfx):], '"')
	if end < 0 {
		return Line{}, false
	}
	l := Line{Format: FormatLogrus, Repeat: 1, Msg: b}
	if t, err := time.Parse(time.RFC3339Nano, string(b[len(pfx):len(pfx)+end])); err == nil {
		l.Time = Timestamp{T: t.UTC()}
	}
	rest := b[len(pfx)+end+1:]
	if i := bytes.Index(rest, []byte("level=")); i >= 0 {
		lv := rest[i+len("level="):]
		if k := bytes.IndexByte(lv, ' '); k >= 0 {
			lv = lv[:k]
		}
		switch string(bytes.Trim(lv, `"`)) {
		case "error":
			l.Severity = 'E'
		case "fatal", "panic":
			l.Severity = 'F'
		case "warning", "warn":
			l.Severity = 'W'
		case "info":
			l.Severity = 'I'
		case "debug", "trace":
			l.Severity = 'D'
		}
	}
	if i := bytes.Index(rest, []byte("msg=")); i >= 0 {
		l.Msg = rest[i+len("msg="):]
	}
	return l, true
}

// splitColumns splits a table row on runs of two or more spaces (kubectl's column padding).
func splitColumns(b []byte, max int) [][]byte {
	var cols [][]byte
	b = bytes.TrimLeft(b, " \t")
	for len(b) > 0 && len(cols) < max-1 {
		i := bytes.Index(b, []byte("  "))
		if i < 0 {
			break
		}
		cols = append(cols, b[:i])
		b = bytes.TrimLeft(b[i:], " ")
	}
	if len(b) > 0 {
		cols = append(cols, b)
	}
	return cols
}

// parseEventRow parses rows of `kubectl describe` Events tables
// ("Warning  Reason  10m (x12 over 13m)  kubelet, node009  Message") and `kubectl get events`
// ("10m  Warning  Reason  pod/name  Message").
func parseEventRow(b []byte) (Line, bool) {
	t := bytes.TrimLeft(b, " \t")
	if !(bytes.HasPrefix(t, []byte("Warning ")) || bytes.HasPrefix(t, []byte("Normal ")) ||
		bytes.Contains(t[:min(len(t), 24)], []byte(" Warning ")) || bytes.Contains(t[:min(len(t), 24)], []byte(" Normal "))) {
		return Line{}, false
	}
	cols := splitColumns(t, 5)
	if len(cols) < 4 {
		return Line{}, false
	}
	l := Line{Format: FormatEvent, Repeat: 1}
	var typ []byte
	switch {
	case string(cols[0]) == "Warning" || string(cols[0]) == "Normal":
		typ = cols[0]
		age, from := cols[2], cols[3]
		if i := bytes.Index(age, []byte("(x")); i >= 0 {
			if j := bytes.IndexByte(age[i:], ' '); j > 2 {
				if n, ok := atoiN(age[i+2 : i+j]); ok && n > 0 {
					l.Repeat = n
				}
			}
		}
		if i := bytes.IndexByte(from, ','); i >= 0 {
			l.Node = string(bytes.TrimSpace(from[i+1:]))
		}
		if len(cols) == 5 {
			l.Msg = cols[4]
		}
	case string(cols[1]) == "Warning" || string(cols[1]) == "Normal":
		typ = cols[1]
		if len(cols) == 5 {
			l.Msg = cols[4]
		}
	default:
		return Line{}, false
	}
	if string(typ) == "Warning" {
		l.Severity = 'W'
	} else {
		l.Severity = 'I'
	}
	return l, true
}

// parseWinTime parses the date formats Get-WinEvent / Get-EventLog print (en-US, zh-CN, ISO).
func parseWinTime(v string) (time.Time, bool) {
	// en-US first; then day-first dates (en-GB, fr-FR "28/05/2018 13:54:07", de-DE "28.05.2018 13:54:07").
	for _, layout := range []string{"1/2/2006 3:04:05 PM", "2006/1/2 15:04:05", "2006-01-02 15:04:05", "1/2/2006 15:04:05", "2/1/2006 15:04:05", "2.1.2006 15:04:05"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseWinEventRow parses a table row of Get-WinEvent/Get-EventLog output:
// "5/8/2020 8:36:43 AM   7031 Error   The kubelet service terminated unexpectedly..."
func parseWinEventRow(b []byte) (Line, bool) {
	if len(b) < 12 || !isDigit(b[0]) {
		return Line{}, false
	}
	cols := splitColumns(b, 4)
	if len(cols) < 3 {
		return Line{}, false
	}
	t, ok := parseWinTime(string(cols[0]))
	if !ok {
		return Line{}, false
	}
	l := Line{Format: FormatEventLog, Time: Timestamp{T: t}, Repeat: 1, Msg: b}
	for _, c := range cols[1:3] {
		if sev := eventLevel(c); sev != 0 {
			l.Severity = sev
		}
	}
	return l, true
}

// parseCSVEventRow parses a row of Get-WinEvent | Export-Csv (or ConvertTo-Csv) output that
// starts with the time: "9/12/2024 2:00:01 PM","7031","Error","The kubelet service ...". The
// level is taken from the first short fields; the message field may continue on later lines.
func parseCSVEventRow(b []byte) (Line, bool) {
	if len(b) < 12 || b[0] != '"' || !isDigit(b[1]) {
		return Line{}, false
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 {
		return Line{}, false
	}
	t, ok := parseWinTime(string(b[1 : 1+end]))
	if !ok {
		return Line{}, false
	}
	l := Line{Format: FormatEventLog, Time: Timestamp{T: t}, Repeat: 1, Msg: b}
	fields := bytes.SplitN(b[1+end+1:], []byte(`","`), 5)
	for _, f := range fields[:min(len(fields), 4)] {
		if sev := eventLevel(bytes.Trim(f, `",`)); sev != 0 && len(f) < 24 {
			l.Severity = sev
			break
		}
	}
	return l, true
}

func eventLevel(b []byte) byte {
	for _, f := range bytes.Fields(b) {
		switch string(f) {
		case "Error", "错误":
			return 'E'
		case "Critical", "关键":
			return 'F'
		case "Warning", "警告":
			return 'W'
		case "Information", "信息":
			return 'I'
		}
	}
	return 0
}

// eventLogState carries record context through event-log text exports whose records span lines:
// wevtutil qe /f:text ("Event[3]:", "  Date: ...", "  Level: Error", "  Description:", text...)
// and Get-WinEvent | Format-List ("TimeCreated : ...", "LevelDisplayName : Error",
// "Message : text", indented continuation lines).
type eventLogState struct {
	time  Timestamp
	level byte
}

// eventLine classifies a line of an event-log export.
type eventLine uint8

const (
	evText       eventLine = iota // record text (or anything else)
	evHeader                      // a record field that is not the message
	evDescLabel                   // "Description:" alone; the message follows on the next lines
	evDescInline                  // "Message : text"; the message starts on this line
)

// isEventLogExport recognises an event-log text export from its first decoded bytes.
func isEventLogExport(head []byte) bool {
	return (bytes.Contains(head, []byte("Event[")) && bytes.Contains(head, []byte("Log Name:"))) ||
		(bytes.Contains(head, []byte("TimeCreated")) && bytes.Contains(head, []byte("ProviderName")))
}

// fieldValue returns the value of a Format-List line "Name   : value" if its name is name.
func fieldValue(t []byte, name string) ([]byte, bool) {
	if !bytes.HasPrefix(t, []byte(name)) {
		return nil, false
	}
	rest := bytes.TrimLeft(t[len(name):], " ")
	if len(rest) == 0 || rest[0] != ':' {
		return nil, false
	}
	return bytes.TrimSpace(rest[1:]), true
}

// apply updates the state from a line and classifies it.
func (s *eventLogState) apply(b []byte) eventLine {
	t := bytes.TrimSpace(b)
	if v, ok := fieldValue(t, "TimeCreated"); ok {
		*s = eventLogState{}
		if tt, ok := parseWinTime(string(v)); ok {
			s.time = Timestamp{T: tt}
		}
		return evHeader
	}
	if v, ok := fieldValue(t, "LevelDisplayName"); ok {
		s.level = eventLevel(v)
		return evHeader
	}
	if _, ok := fieldValue(t, "Message"); ok {
		return evDescInline
	}
	if _, ok := fieldValue(t, "ProviderName"); ok {
		return evHeader
	}
	if _, ok := fieldValue(t, "Id"); ok {
		return evHeader
	}
	switch {
	case bytes.Equal(t, []byte("Description:")):
		return evDescLabel
	case bytes.HasPrefix(t, []byte("Event[")):
		*s = eventLogState{}
		return evHeader
	case bytes.HasPrefix(t, []byte("Date: ")):
		v := string(bytes.TrimSpace(t[len("Date: "):]))
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.0000000", "2006-01-02T15:04:05.000", "2006-01-02T15:04:05"} {
			if tt, err := time.Parse(layout, v); err == nil {
				s.time = Timestamp{T: tt.UTC()}
				break
			}
		}
		return evHeader
	case bytes.HasPrefix(t, []byte("Level: ")):
		s.level = eventLevel(t[len("Level: "):])
		return evHeader
	case bytes.HasPrefix(t, []byte("Log Name: ")), bytes.HasPrefix(t, []byte("Source: ")),
		bytes.HasPrefix(t, []byte("Event ID: ")), bytes.HasPrefix(t, []byte("Computer: ")):
		return evHeader
	}
	return evText
}
