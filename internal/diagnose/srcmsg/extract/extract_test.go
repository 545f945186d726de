package extract

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

func fixtureSource(version string) GoSource {
	return GoSource{FS: os.DirFS("testdata/fixturemod"), Module: "example.com/fixture", Version: version,
		Component: func(string) string { return "fixture" }}
}

func TestExtractGo(t *testing.T) {
	set := NewSet()
	if _, err := ExtractGo(fixtureSource("v1"), set); err != nil {
		t.Fatal(err)
	}
	got := map[string]Row{}
	for _, r := range set.Rows() {
		got[r.Format] = r
	}
	want := []struct {
		format, level, os, fn string
	}{
		{"Failed to sync pod", LevelError, "", "Syncer.Sync"},
		{"Retrying pod sync", LevelInfoErr, "", "Syncer.Sync"},
		{"Sync of pod %s failed: %v", LevelInfoErr, "", "Syncer.Sync"},
		{"failed to mount %s on %s: %v", LevelError, "", "Syncer.Sync"},         // format from a constant
		{"Unable to attach volume %s to node", LevelWarning, "", "Syncer.Sync"}, // constant + literal
		{"Cannot open netlink socket: %v", LevelError, "", "Syncer.Sync"},       // klog.Error's Sprint
		{"Failed to start watcher", LevelError, "", "Syncer.Sync"},              // logr
		{"Watcher stopped with an error", LevelInfoErr, "", "Syncer.Sync"},      // logr Info with err
		{"could not remove stale endpoint", LevelWarning, "", "Syncer.Sync"},    // log.G(ctx).WithError
		{"Endpoint gone away unexpectedly", LevelInfoErr, "", "Syncer.Sync"},    // WithError(..).Info
		{"cannot continue without network %q", LevelFatal, "", "Syncer.Sync"},
		{"Failed to watch the node object", LevelError, "", "Syncer.Sync"}, // utilruntime.HandleErrorWithContext
		{"failed to open the store: %v", LevelReturned, "", "Syncer.Sync"}, // pkg/errors.Wrap
		{"pod sandbox %q not found anywhere", LevelReturned, "", "Syncer.Sync"},
		{"unable to load bootstrap kubeconfig: %w", LevelReturned, "", "Syncer.Sync"},
		{"no such plugin at 100%% load", LevelReturned, "", ""}, // package-level errors.New, % escaped
		{"hcn network %s was not found on this host", LevelReturned, "windows", "network"},
		{"iptables-restore failed with status %d", LevelReturned, "linux", "iptables"},
		{"failed in Win32: %s (0x%x)", LevelReturned, "", "Win32Error.Error"},
		{"network %v is not ready yet", LevelReturned, "", "plainError.Error"},
	}
	for _, w := range want {
		r, ok := got[w.format]
		if !ok {
			t.Errorf("format %q not extracted", w.format)
			continue
		}
		if r.Level != w.level || r.OS != w.os || r.Func != w.fn || r.Component != "fixture" ||
			r.Module != "example.com/fixture" || strings.Join(r.Versions, ",") != "v1" {
			t.Errorf("%q: got level=%s os=%q func=%s comp=%s module=%s versions=%v; want level=%s os=%q func=%s",
				w.format, r.Level, r.OS, r.Func, r.Component, r.Module, r.Versions, w.level, w.os, w.fn)
		}
		if !strings.HasPrefix(r.File, "pkg/a/") {
			t.Errorf("%q: file %q", w.format, r.File)
		}
	}
	for f := range got {
		for _, never := range []string{"never indexed", "Started pod sync", "started"} {
			if strings.Contains(f, never) {
				t.Errorf("extracted %q, which must not be (test file, ignored build, vendor, or info without error)", f)
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("extracted %d formats, want %d: %v", len(got), len(want), keys(got))
	}
}

func keys(m map[string]Row) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestExtractC(t *testing.T) {
	set := NewSet()
	n, err := ExtractC(CSource{FS: os.DirFS("testdata/keepalived"), Module: "keepalived", Version: "2.2.7",
		Component: "keepalived", OS: "linux"}, set)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{ // format → level, function
		"(%s) Entering MASTER STATE":                                      {"info", "vrrp_state_become_master"},
		"Netlink: Cannot open netlink socket : (%s)":                      {LevelError, "netlink_socket"},
		"Received %d bytes, more than the expected %zu":                   {LevelWarning, "netlink_socket"}, // PRIu32 + adjacent literals
		"vrrp_garp_interval '%s' is invalid":                              {LevelError, "garp_handler"},
		"vrrp_garp_interval is deprecated - use vrrp_garp_master_refresh": {LevelWarning, "garp_handler"},
	}
	rows := set.Rows()
	if n != len(want) || len(rows) != len(want) {
		t.Errorf("extracted %d calls, %d rows; want %d", n, len(rows), len(want))
	}
	for _, r := range rows {
		w, ok := want[r.Format]
		if !ok {
			t.Errorf("unexpected format %q", r.Format)
			continue
		}
		if r.Level != w[0] || r.Func != w[1] || r.File != "vrrp.c" || r.OS != "linux" {
			t.Errorf("%q: level=%s func=%s file=%s os=%s; want %v", r.Format, r.Level, r.Func, r.File, r.OS, w)
		}
	}
}

// TestWriteDeterministic extracts the fixture twice, in two versions whose sources differ in one
// message, and requires identical bytes from both runs and merged versions for shared formats.
func TestWriteDeterministic(t *testing.T) {
	build := func() []byte {
		set := NewSet()
		for _, v := range []string{"v1.10.0", "v1.9.0"} {
			if _, err := ExtractGo(fixtureSource(v), set); err != nil {
				t.Fatal(err)
			}
		}
		changed := fstest.MapFS{"pkg/b/b.go": {Data: []byte("package b\n\nimport \"fmt\"\n\nfunc f() error { return fmt.Errorf(\"only in the newest release: %v\", 1) }\n")}}
		if _, err := ExtractGo(GoSource{FS: changed, Module: "example.com/fixture", Version: "v1.10.0",
			Component: func(string) string { return "fixture" }}, set); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteTSV(&buf, []string{"example.com/fixture@v1.9.0", "example.com/fixture@v1.10.0"}, set.Rows()); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	a, b := build(), build()
	if !bytes.Equal(a, b) {
		t.Fatal("two runs over the same sources wrote different bytes")
	}
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header carries name %q / time %v", zr.Name, zr.ModTime)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	if lines[0] != Header {
		t.Errorf("header %q", lines[0])
	}
	var sawMerged, sawNew bool
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if strings.HasPrefix(l, "#") {
			continue
		}
		if len(f) != 8 {
			t.Fatalf("row with %d fields: %q", len(f), l)
		}
		switch f[7] {
		case "Failed to sync pod":
			sawMerged = f[6] == "v1.9.0,v1.10.0" // numeric version order, not string order
		case "only in the newest release: %v":
			sawNew = f[6] == "v1.10.0"
		}
	}
	if !sawMerged || !sawNew {
		t.Errorf("versions not merged in order (merged %v, new %v):\n%s", sawMerged, sawNew, text)
	}
}

func TestEscapeRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "tab\there", "nl\nhere", `back\slash`, "cr\r\\t literal"} {
		if got := UnescapeField(escapeField(s)); got != s {
			t.Errorf("round trip of %q gave %q", s, got)
		}
		if strings.ContainsAny(escapeField(s), "\t\n\r") {
			t.Errorf("escaped %q still has a separator", s)
		}
	}
}

func TestMeaningful(t *testing.T) {
	for _, c := range []struct {
		f    string
		want bool
	}{
		{"%v", false}, {"failed: %w", false}, {"error %s: %v", false}, {"no such host", true},
		{"failed to run Kubelet: %v", true}, {"%s%s%d", false}, {"Failed to %s", false}, {"%s timed out", false},
	} {
		if got := Meaningful(c.f); got != c.want {
			t.Errorf("Meaningful(%q) = %v, want %v", c.f, got, c.want)
		}
	}
}

func TestVersionLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"v1.9.0", "v1.13.0", true}, {"v1.13.0", "v1.9.0", false}, {"v0.8.26", "v0.15.0", true},
		{"2.2.7", "2.10.0", true}, {"v1.0.0", "v1.0.0", false},
	} {
		if got := VersionLess(c.a, c.b); got != c.want {
			t.Errorf("VersionLess(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
