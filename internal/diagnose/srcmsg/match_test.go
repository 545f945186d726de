package srcmsg

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/diagnose/srcmsg/extract"
)

// TestMatchRealLines matches real messages (log headers removed) from the tuning corpus
// (testdata/diagnose-field/errors.tsv, quoted from public issue threads) and testdata/logs against
// the embedded index. want is the first hit; also, when set, is a cause found further in.
func TestMatchRealLines(t *testing.T) {
	ix := loadIndex(t)
	type loc struct{ comp, file, level, format, part string }
	cases := []struct {
		name  string
		msg   string
		want  loc
		exact bool
		also  *loc
	}{
		{"kubelet wrapped chain (kubernetes/kubeadm issue)",
			"failed to run Kubelet: unable to load bootstrap kubeconfig: stat /etc/kubernetes/bootstrap-kubelet.conf: no such file or directory",
			loc{"kubelet", "cmd/kubelet/app/server.go", "returned", "failed to run Kubelet: %", ""}, true,
			&loc{"kubelet", "pkg/kubelet/certificate/bootstrap/bootstrap.go", "returned", "unable to load bootstrap kubeconfig: %", ""}},
		{"kube-proxy winkernel structured",
			`"Local endpoint not found: on network" err="Endpoint 172.25.74.145 not found on network cbr0" ip="172.25.74.145" hnsNetworkName="cbr0"`,
			loc{"kube-proxy", "pkg/proxy/winkernel/proxier.go", "error", "Local endpoint not found: on network", "msg"}, true,
			&loc{"kube-proxy", "pkg/proxy/winkernel/", "returned", "Endpoint %v not found on network %s", "err"}},
		{"containerd CRI sandbox network",
			`Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "2c5073b9ca79": plugin type="nat" name="nat" failed (add): hcnCreateNetwork failed in Win32: The object already exists. (0x1392)`,
			loc{"containerd", "sandbox_run.go", "returned", "failed to setup network for sandbox %q: %w", ""}, true,
			&loc{"hcsshim", "hcserror.go", "returned", "failed in Win32: %s (0x%x)", ""}},
		{"flannel subnet manager",
			"Failed to create SubnetManager: error retrieving pod spec for 'kube-system/kube-flannel-ds-p4rmd': Get https://10.68.0.1:443/api/v1/namespaces/kube-system/pods/kube-flannel-ds-p4rmd: dial tcp 10.68.0.1:443: i/o timeout",
			loc{"flannel", "main.go", "error", "Failed to create SubnetManager: %v", ""}, true,
			&loc{"flannel", "pkg/subnet/kube/kube.go", "returned", "error retrieving pod spec for '%s/%s': %v", ""}},
		{"calico startup, logrus fields after the message",
			"Unable to ensure datastore is migrated. error=unable to query ClusterInformation to determine Calico version: connection is unauthorized",
			loc{"calico", "node/pkg/lifecycle/startup/startup.go", "error", "Unable to ensure datastore is migrated.", ""}, true,
			&loc{"calico", "libcalico-go/lib/upgrade/migrator/migrate.go", "returned", "unable to query ClusterInformation to determine Calico version: %v", ""}},
		{"keepalived netlink (C source)",
			"Netlink: Cannot open netlink socket : (-6)",
			loc{"keepalived", "keepalived/core/keepalived_netlink.c", "info", "Netlink: Cannot open netlink socket : (%s)", ""}, true, nil},
		{"keepalived config error with its (Line n) prefix",
			"(Line 13) vrrp_garp_interval '0' is invalid",
			loc{"keepalived", "keepalived/core/global_parser.c", "error", "vrrp_garp_interval '%s' is invalid", ""}, true, nil},
		{"libcni plugin lookup inside kubelet's dockershim message",
			`Error adding network: failed to find plugin "loopback" in path [/opt/loopback/bin /opt/cni/bin]`,
			loc{"cni", "pkg/invoke/find.go", "returned", "failed to find plugin %q in path %s", ""}, true, nil},
		{"kubeadm discovery CA pin",
			`cluster CA found in cluster-info configmap is invalid: none of the public keys "sha256:f2753" are pinned`,
			loc{"kubeadm", "cmd/kubeadm/app/discovery/token/token.go", "returned", "cluster CA found in %s", ""}, true,
			&loc{"kubeadm", "cmd/kubeadm/app/util/pubkeypin/pubkeypin.go", "returned", "none of the public keys %q are pinned", ""}},
		{"kubelet node registration (klog structured)",
			`"Unable to register node with API server" err="nodes is forbidden: User \"system:anonymous\" cannot create resource \"nodes\" in API group \"\" at the cluster scope" node="prow-control-plane"`,
			loc{"kubelet", "pkg/kubelet/kubelet_node_status.go", "error", "Unable to register node with API server", "msg"}, true, nil},
		{"containerd ttrpc listener on Windows",
			"containerd: failed to get listener for main ttrpc endpoint: open //./pipe/containerd-containerd.ttrpc: Access is denied.",
			loc{"containerd", "", "returned", "failed to get listener for main ttrpc endpoint: %", ""}, true, nil},
		{"hcsshim Win32 error text",
			"hcsshim::ImportLayer failed in Win32: The system cannot find the path specified. (0x3)",
			loc{"hcsshim", "internal/hcserror/hcserror.go", "returned", "failed in Win32: %s (0x%x)", ""}, true, nil},
		{"kube-proxy v1.13 typo 'speficied': near match to the later wording",
			"Unable to find Hns Network speficied by cbr0. Please check environment variable KUBE_NETWORK",
			loc{"kube-proxy", "pkg/proxy/winkernel/proxier.go", "fatal", "Unable to find Hns Network specified by %s. Please check environment variable KUBE_NETWORK", ""}, false, nil},
		{"kube-proxy winkernel policy (testdata/logs)",
			`Policy creation failed: hcnCreateLoadBalancer failed in Win32: The specified port already exists. (0x803b0013) {"Success":false,"Error":"The specified port already exists. ","ErrorCode":2151350291}`,
			loc{"kube-proxy", "pkg/proxy/winkernel/proxier.go", "error", "Policy creation failed: %v", ""}, true,
			&loc{"hcsshim", "hcserror.go", "returned", "failed in Win32: %s (0x%x)", ""}},
		{"case and spacing do not matter",
			"FAILED TO RUN KUBELET:    unable to load   bootstrap kubeconfig: x",
			loc{"kubelet", "cmd/kubelet/app/server.go", "returned", "failed to run Kubelet: %", ""}, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hits := ix.Match(c.msg)
			if len(hits) == 0 {
				t.Fatalf("no hit for %q", c.msg)
			}
			h := hits[0]
			if !fits(h, c.want.comp, c.want.file, c.want.level, c.want.format, c.want.part) || h.Exact != c.exact {
				t.Errorf("first hit %s %s %s %q part=%q exact=%v; want %+v exact=%v", h.Component, h.File, h.Level, h.Format, h.Part, h.Exact, c.want, c.exact)
			}
			if h.Start < 0 || h.End > len(h.Text) || h.Start >= h.End || h.Covered <= 0 || h.Covered > 1 || len(h.Versions) == 0 {
				t.Errorf("hit fields out of range: %+v", h)
			}
			if c.also != nil {
				found := false
				for _, o := range hits[1:] {
					if fits(o, c.also.comp, c.also.file, c.also.level, c.also.format, c.also.part) {
						found = true
						if o.Start <= h.Start && o.Part == h.Part {
							t.Errorf("cause %q starts at %d, not after the outer message at %d", o.Format, o.Start, h.Start)
						}
					}
				}
				if !found {
					t.Errorf("no hit for the cause %+v among %d hits", *c.also, len(hits))
				}
			}
		})
	}
}

func fits(h Hit, comp, file, level, format, part string) bool {
	return h.Component == comp && strings.Contains(h.File, file) && h.Level == level &&
		strings.HasPrefix(h.Format, strings.TrimSuffix(format, "%")) && h.Part == part
}

// TestMatchRejects holds the acceptance rule: trivial formats, a verb-free format inside a longer
// sentence, and text that is not a message give no hit.
func TestMatchRejects(t *testing.T) {
	ix := loadIndex(t)
	for _, msg := range []string{
		"", "   ", "error", "failed: boom", "failed to do it", "x timed out", "the quick brown fox jumps over the lazy dog",
		`"" err=""`, `"unterminated`, "%v %s %d", strings.Repeat("a ", 500),
	} {
		if hits := ix.Match(msg); len(hits) != 0 {
			t.Errorf("Match(%.40q) = %s %q, want no hit", msg, hits[0].File, hits[0].Format)
		}
	}
	// Calico's verb-free "Create failed" (libcalico-go etcdv3) must not be found inside runc's text,
	// and kubelet's "unable to process %s: pod %s/%s not found" must not be a near match of it.
	for _, h := range ix.Match(`runc create failed: unable to start container process: exec: "foo": executable file not found in $PATH`) {
		if h.Format == "Create failed" || strings.HasPrefix(h.Format, "unable to process") {
			t.Errorf("matched %q in %s", h.Format, h.File)
		}
	}
}

// TestMatchDeterministic: the same message gives the same hits, in the same order.
func TestMatchDeterministic(t *testing.T) {
	ix := loadIndex(t)
	msg := `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "abc": plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized`
	a, b := ix.Match(msg), ix.Match(msg)
	if len(a) == 0 || !reflect.DeepEqual(a, b) {
		t.Fatalf("two matches differ or are empty: %d vs %d hits", len(a), len(b))
	}
}

// synthetic writes a small index with the generator's writer, so that the matching rules are
// tested on formats chosen here rather than on whatever the upstream sources hold.
func synthetic(t testing.TB, formats ...string) *Index {
	t.Helper()
	set := extract.NewSet()
	for i, f := range formats {
		set.Add(extract.Record{Component: "test", Module: "example.com/m", File: "f.go", Func: "F",
			Level: extract.LevelError, Format: f}, []string{"v1", "v2"}[i%2])
	}
	// Filler formats give the words of the formats above realistic rarity (the specificity rule
	// weighs words by log(1+N/df), N formats, df formats containing the word): several hundred
	// formats of common words, as in the generated index.
	verbs := []string{"open", "close", "read", "write", "start", "stop", "sync", "load", "find", "create", "delete", "update"}
	objects := []string{"file", "network", "container", "pod", "config", "endpoint", "volume", "node", "image", "service"}
	for _, v := range verbs {
		for _, o := range objects {
			for _, f := range []string{"failed to " + v + " " + o + " %s: %v", "unable to " + v + " " + o + " %q", "error while trying to " + v + " the " + o + ": %v"} {
				set.Add(extract.Record{Component: "filler", Module: "example.com/m", File: "g.go", Level: extract.LevelError, Format: f}, "v1")
			}
		}
	}
	var buf bytes.Buffer
	if err := extract.WriteTSV(&buf, []string{"example.com/m@v1"}, set.Rows()); err != nil {
		t.Fatal(err)
	}
	ix, err := Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestMatchRules(t *testing.T) {
	ix := synthetic(t,
		"failed to attach endpoint %s to compartment %d: %v",
		"Volume attachment controller reported the disk as detached",
		"network %q has no gateway configured for pod %s",
		"Unable to find Hns Network specified by %s. Please check environment variable KUBE_NETWORK",
		"%s already exists",
	)
	cases := []struct {
		msg, format string // format "" = no hit
		start       int
		exact       bool
	}{
		{"failed to attach endpoint ep1 to compartment 3: access denied", "failed to attach endpoint %s to compartment %d: %v", 0, true},
		{"sync: failed to attach endpoint ep1 to compartment 3: x", "failed to attach endpoint %s to compartment %d: %v", 6, true},
		{"xfailed to attach endpoint ep1 to compartment 3: x", "failed to attach endpoint %s to compartment %d: %v", 8, false}, // not at a word boundary: a near match from the next word
		// A verb holding a name absorbs a few words, not a whole other sentence.
		{"network a b c d e f g has no gateway configured for pod p", "", 0, false},
		{`network "br0" has no gateway configured for pod web-1`, "network %q has no gateway configured for pod %s", 0, true},
		// Verb-free formats must make up a whole segment.
		{"Volume attachment controller reported the disk as detached", "Volume attachment controller reported the disk as detached", 0, true},
		{"warn: volume attachment controller reported the disk as detached.", "Volume attachment controller reported the disk as detached", 6, true},
		{"the volume attachment controller reported the disk as detached twice", "", 0, false},
		// One changed word (a typo fixed in a later release) is a near match; two are not.
		{"Unable to find Hns Network speficied by cbr0. Please check environment variable KUBE_NETWORK", "Unable to find Hns Network specified by %s. Please check environment variable KUBE_NETWORK", 0, false},
		{"Unable to locate Hns Network speficied by cbr0. Please check environment variable KUBE_NETWORK", "", 0, false},
		// A short format with a verb counts only where it is most of its segment.
		{"/etc/kubernetes/kubelet.conf already exists", "", 0, false},
		{"x already exists", "%s already exists", 0, true},
	}
	if h, ok := ix.Best("failed to attach endpoint ep1 to compartment 3: x"); !ok || !h.Specific {
		t.Errorf("a hit on a specific format is not marked Specific: %+v", h)
	}
	if h, ok := ix.Best("x already exists"); !ok || h.Specific {
		t.Errorf("a hit on a generic format is marked Specific: %+v", h)
	}
	for _, c := range cases {
		hits := ix.Match(c.msg)
		if c.format == "" {
			for _, h := range hits {
				if h.Component == "test" {
					t.Errorf("Match(%q) = %q, want none", c.msg, h.Format)
				}
			}
			continue
		}
		if len(hits) == 0 || hits[0].Format != c.format || hits[0].Start != c.start || hits[0].Exact != c.exact {
			t.Errorf("Match(%q) = %+v, want %q at %d exact=%v", c.msg, hits, c.format, c.start, c.exact)
		}
	}
}

func TestParseRejects(t *testing.T) {
	var good bytes.Buffer
	if err := extract.WriteTSV(&good, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(bytes.NewReader(good.Bytes())); err == nil {
		t.Error("an index without entries parsed")
	}
	if _, err := Parse(strings.NewReader("not gzip")); err == nil {
		t.Error("non-gzip input parsed")
	}
}

func TestSplitStructured(t *testing.T) {
	cases := []struct {
		in   string
		head string
		errs []kvPair
		ok   bool
	}{
		{`"Failed to sync pod" pod="a/b" err="boom: x"`, "Failed to sync pod", []kvPair{{"err", "boom: x"}}, true},
		{`"Observed a panic" panic="runtime error" stacktrace=<`, "Observed a panic", nil, true},
		{`"Policy creation failed" err="hcn \"x\" failed`, "Policy creation failed", []kvPair{{"err", `hcn \"x\" failed`}}, true},
		{`"msg" error=bare next="v"`, "msg", []kvPair{{"error", "bare"}}, true},
		{`plain message: "quoted" part`, "", nil, false},
		{`"unterminated`, "", nil, false},
	}
	for _, c := range cases {
		head, errs, ok := splitStructured(c.in)
		if head != c.head || ok != c.ok || !reflect.DeepEqual(errs, c.errs) {
			t.Errorf("splitStructured(%q) = %q %v %v, want %q %v %v", c.in, head, errs, ok, c.head, c.errs, c.ok)
		}
	}
}

func TestNormalizeFormat(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Failed to run Kubelet: %v", "failed to run kubelet: \x00"},
		{"100%% of %-10s  done.\n", "100% of \x00 done"},
		{"%s%v: %+v", "\x00: \x00"},
		{"Unable to ensure datastore is migrated.", "unable to ensure datastore is migrated"},
	} {
		if got := normalizeFormat(c.in); got != c.want {
			t.Errorf("normalizeFormat(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := normalizeMessage("  A\t\tB \\\"c\\\"\n"); got != `a b "c"` {
		t.Errorf("normalizeMessage = %q", got)
	}
}

func FuzzMatch(f *testing.F) {
	for _, s := range []string{
		"failed to run Kubelet: unable to load bootstrap kubeconfig: stat x: no such file or directory",
		`"Local endpoint not found: on network" err="Endpoint 1 not found on network cbr0"`,
		"Netlink: Cannot open netlink socket : (-6)", `"a" b=`, `"x" err="`, "%", "\x00\x00", ": : :",
		"Unable to find Hns Network speficied by cbr0. Please check environment variable KUBE_NETWORK",
	} {
		f.Add(s)
	}
	ix, err := Load()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		hits := ix.Match(msg)
		if len(hits) > maxHits {
			t.Fatalf("%d hits", len(hits))
		}
		for _, h := range hits {
			if h.Start < 0 || h.End > len(h.Text) || h.Start > h.End || h.Covered <= 0 || h.Covered > 1 || h.Format == "" {
				t.Fatalf("bad hit %+v for %q", h, msg)
			}
		}
		if again := ix.Match(msg); !reflect.DeepEqual(hits, again) {
			t.Fatalf("not deterministic for %q", msg)
		}
	})
}

// TestMatchConcurrent: one Index serves several goroutines (scratch space comes from a pool) and
// each gets what a lone caller gets.
func TestMatchConcurrent(t *testing.T) {
	ix := loadIndex(t)
	lines := readCorpus(t, "../../../testdata/diagnose-field/errors.tsv")
	want := make([][]Hit, len(lines))
	for i, l := range lines {
		want[i] = ix.Match(stripPrefix(l))
	}
	errs := make(chan string, 4)
	for g := 0; g < 4; g++ {
		go func(g int) {
			for i := range lines {
				k := (i + g*37) % len(lines)
				if got := ix.Match(stripPrefix(lines[k])); !reflect.DeepEqual(got, want[k]) {
					errs <- lines[k]
					return
				}
			}
			errs <- ""
		}(g)
	}
	for g := 0; g < 4; g++ {
		if l := <-errs; l != "" {
			t.Errorf("concurrent Match differs for %.80q", l)
		}
	}
}
