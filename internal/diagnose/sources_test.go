package diagnose

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/kubewin/kubewin/internal/diagnose/srcmsg"
)

var (
	sourcesOnce sync.Once
	sourcesIx   *srcmsg.Index
	sourcesErr  error
)

func testSources(t testing.TB) *srcmsg.Index {
	t.Helper()
	sourcesOnce.Do(func() { sourcesIx, sourcesErr = srcmsg.Load() })
	if sourcesErr != nil {
		t.Fatal(sourcesErr)
	}
	return sourcesIx
}

func scanLineSources(t testing.TB, c *Catalogue, line string) *Report {
	return Scan(context.Background(), c, []string{"-"}, strings.NewReader(line+"\n"), Options{Workers: 1, Sources: testSources(t)})
}

var verb = regexp.MustCompile(`%[-+# 0-9.*]*[a-zA-Z]`)

// instantiate fills a source format's verbs with plausible values, as the program would.
func instantiate(format string) string {
	s := verb.ReplaceAllStringFunc(format, func(v string) string {
		switch v[len(v)-1] {
		case 'd', 'x', 'u', 'i':
			return "42"
		case 'q':
			return `"eth0"`
		}
		return "eth0"
	})
	return strings.NewReplacer("\n", " ", "\t", " ", "%%", "%").Replace(s)
}

// envelope writes a message as its component logs it: keepalived to syslog without a level,
// kubeadm's preflight checks as "[ERROR Name]: " lines (checks.go PreflightError), the Go
// components as klog error lines.
func envelope(component, file, msg string) string {
	switch {
	case component == "keepalived":
		return "Mar 10 12:00:00 lb1 Keepalived_vrrp[77]: " + msg
	case component == "kubeadm" && strings.HasSuffix(file, "preflight/checks.go"):
		return "\t[ERROR SomeCheck]: " + msg
	}
	return "E0310 12:00:00.000000       1 x.go:1] " + msg
}

// TestSourceEntriesFire: every source entry explains a message printed from its code path (a
// format of the index from a file it covers, filled in), and does not explain a message of the
// same component from a file it does not cover.
func TestSourceEntriesFire(t *testing.T) {
	ix := testSources(t)
	c, err := DefaultCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.sources {
		e := &c.sources[i]
		t.Run(e.ID, func(t *testing.T) {
			tried, fired, other := 0, "", ""
			for _, ent := range ix.Entries() {
				h := srcmsg.Hit{Entry: ent}
				if ent.Component != e.Component || len(strings.Fields(ent.Format)) < 4 || strings.Count(ent.Format, "%") > 2 {
					continue
				}
				line := envelope(ent.Component, ent.File, instantiate(ent.Format))
				if e.matches(&h) {
					if fired != "" || tried >= 40 {
						continue
					}
					tried++
					if hasFinding(scanLineSources(t, c, line), e.ID) {
						fired = line
					}
				} else if other == "" && !strings.Contains(ent.File, "parser") {
					if r := scanLineSources(t, c, line); len(r.Findings)+len(r.Unmatched)+len(r.Warnings) > 0 {
						if hasFinding(r, e.ID) {
							t.Errorf("fires on a message from %s (%s): %s", ent.File, ent.Func, line)
						}
						other = line
					}
				}
			}
			if fired == "" {
				t.Errorf("no message of its code path (%d tried) gives %s", tried, e.ID)
			}
			if other == "" {
				t.Errorf("no message outside its code path found to check it stays silent")
			}
		})
	}
}

func hasFinding(r *Report, id string) bool {
	for _, f := range r.Findings {
		if f.ID == id {
			return true
		}
	}
	return false
}

// TestPendingSeverityFromSource: a keepalived syslog line has no level; the level of the format
// that printed it decides whether it is shown.
func TestPendingSeverityFromSource(t *testing.T) {
	ix := testSources(t)
	c := mustCatalogue(t)
	var errLine, infoLine string
	for _, ent := range ix.Entries() {
		if ent.Component != "keepalived" || len(strings.Fields(ent.Format)) < 5 || strings.Contains(ent.Format, "%") {
			continue
		}
		if w := wordingSeverity([]byte(ent.Format)); w != 0 {
			continue // judged by its wording already
		}
		switch ent.Level {
		case "error":
			if errLine == "" {
				errLine = envelope("keepalived", ent.File, ent.Format)
			}
		}
	}
	infoLine = envelope("keepalived", "", "(VI_1) Entering MASTER STATE")
	if errLine == "" {
		t.Fatal("no keepalived error format without error words in the index")
	}
	r := scanLineSources(t, c, errLine)
	if len(r.Unmatched) != 1 || r.Unmatched[0].Source == nil || r.Unmatched[0].Source.Component != "keepalived" {
		t.Errorf("%s: unmatched %+v", errLine, r.Unmatched)
	}
	if r := scanLineSources(t, c, infoLine); len(r.Unmatched)+len(r.Warnings) != 0 {
		t.Errorf("%s: shown as %+v %+v", infoLine, r.Unmatched, r.Warnings)
	}
	// Without the index, a line with no level and no error wording is not shown.
	if r := scanLine(c, errLine); len(r.Unmatched)+len(r.Warnings) != 0 {
		t.Errorf("without sources: %+v", r.Unmatched)
	}
}

func TestSourceEntriesCompile(t *testing.T) {
	for _, bad := range []SourceEntry{
		{ID: "x", Component: "c", File: "f", Severity: SevError, Title: "t", Cause: "c", Fix: "f"},
		{ID: "X", Component: "c", File: "(", Severity: SevError, Title: "t", Cause: "c", Fix: "f"},
		{ID: "X", Component: "c", File: "f", Severity: "bad", Title: "t", Cause: "c", Fix: "f"},
		{ID: "X", Component: "", File: "f", Severity: SevError, Title: "t", Cause: "c", Fix: "f"},
	} {
		if _, err := Compile(nil, bad); err == nil {
			t.Errorf("%+v compiled", bad)
		}
	}
	if _, err := Compile(DefaultSignatures(), append(DefaultSourceEntries(), DefaultSourceEntries()[0])...); err == nil {
		t.Error("duplicate source entry ID compiled")
	}
}

// TestSourceEntryScope: an entry explains failures of its own component only: a kubelet line
// whose wrapped cause comes from the iptables helpers kube-proxy shares is not a kube-proxy
// failure, and a warning-level format is not explained by an error entry.
func TestSourceEntryScope(t *testing.T) {
	c, err := DefaultCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	for line, notID := range map[string]string{
		`E0420 14:54:48.290436     816 kubelet_network.go:274] Failed to ensure that nat chain KUBE-MARK-DROP exists: error creating chain "KUBE-MARK-DROP": executable file not found in %PATH%:`: "KUBEPROXY-SRC-IPTABLES",
		`W0719 08:59:54.024786       1 proxier.go:355] IPVS scheduler not specified, use rr by default`:                                                                                            "KUBEPROXY-SRC-IPVS",
	} {
		if r := scanLineSources(t, c, line); hasFinding(r, notID) {
			t.Errorf("%s explained as %s", line, notID)
		}
	}
	// The same message from kube-proxy's own iptables proxier is its failure.
	r := scanLineSources(t, c, `E0420 14:54:48.290436       1 proxier.go:1] Failed to ensure that nat chain KUBE-SERVICES exists: error creating chain "KUBE-SERVICES": exit status 3: iptables v1.8.7 (legacy): can't initialize iptables table `+"`nat'"+`: Table does not exist (do you need to insmod?)`)
	if !hasFinding(r, "KUBEPROXY-SRC-IPTABLES") {
		t.Errorf("kube-proxy's own chain failure not explained: %+v %+v", r.Findings, r.Unmatched)
	}
}
