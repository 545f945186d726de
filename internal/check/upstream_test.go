package check

// Drift tests: kubewin's check links only generated tables, the versioned config types and
// ports of a few k8s.io/kubernetes functions. These tests import the real packages (test-only)
// and fail when the ports or tables no longer behave like the pinned release.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	proxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
	_ "k8s.io/kubernetes/pkg/features"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
	kubeletdefaults "k8s.io/kubernetes/pkg/kubelet/apis/config/v1beta1"
	kubeletvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	proxyconfig "k8s.io/kubernetes/pkg/proxy/apis/config"
	proxyscheme "k8s.io/kubernetes/pkg/proxy/apis/config/scheme"
	proxydefaults "k8s.io/kubernetes/pkg/proxy/apis/config/v1alpha1"
	proxyvalidation "k8s.io/kubernetes/pkg/proxy/apis/config/validation"

	"github.com/kubewin/kubewin/internal/platform"
)

// configDir holds KubeletConfiguration and KubeProxyConfiguration files, valid and invalid,
// that exercise every ported validation check.
const configDir = "../../testdata/check/configs"

// realKubeletFlags is the kubelet's real flag set (Linux build), fresh for every call because
// flag values keep state between Set calls.
func realKubeletFlags(t testing.TB) *pflag.FlagSet {
	t.Helper()
	s, err := options.NewKubeletServer()
	if err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	s.AddFlags(fs)
	options.AddGlobalFlags(fs)
	return fs
}

// flagValueCorpus are values of every shape the kubelet's flags take, valid and not.
var flagValueCorpus = []string{
	"", "true", "false", "True", "1", "0", "-1", "0x10", "2147483648", "9223372036854775808", "abc", "1.5", " 1",
	"10s", "-5m", "1h2m", "100", "3.0", "a=b", "a=b,c=d", "a=true,b=false", "a=maybe", "a", "a=", "=b", ",",
	"memory.available<1Gi", "memory.available<1Gi,nodefs.available<10%", "memory.available=1Gi", "a<b<c",
	"1.2.3.4", "::1", "1.2.3", "0.0.0.0", "fe80::1%eth0",
	"key=value:NoSchedule", "key:NoExecute", "k=v:Bad", "k=v", "k=v:NoSchedule,k=w:NoSchedule", "k-", "k=v:NoSchedule-",
	"bad key!=v:NoSchedule", "k=bad value!:NoSchedule", "a=b=c:NoSchedule", "a:b:c", "os=windows:NoSchedule,os=windows:NoExecute",
	"0:memory=1Gi", "0:memory=1Gi;1:memory=2Gi,hugepages-2Mi=1Gi", "x:memory=1Gi", "0:cpu=1", "0:memory=abc", "0:memory", "0",
	"raw", "2", "x", "foo=2", "foo=2,bar=x", "foo*=3", "1Q", "1Mi", "a:b,c:d", ":x", "a:", "text", "json",
	"cpu=200m,memory=500Mi", "memory=2Gi", "full-pcpus-only=true,x=y", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
}

// Every kubelet flag kubewin knows parses every corpus value as the real flag set does: same
// verdict, same message (KW0006 quotes it).
func TestCheckFlagValuesMatchRealKubelet(t *testing.T) {
	for _, v := range flagValueCorpus {
		real := realKubeletFlags(t)
		cats, err := NewCatalogs()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		real.VisitAll(func(f *pflag.Flag) {
			n++
			spec, ok := cats.Kubelet.Lookup(f.Name)
			if !ok {
				t.Errorf("--%s is in the real flag set but not in kubewin's table", f.Name)
				return
			}
			compareFlagValue(t, f, spec, v)
		})
		if n != len(platform.KubeletFlags()) {
			t.Errorf("real flag set has %d flags, the table %d", n, len(platform.KubeletFlags()))
		}
	}
}

func compareFlagValue(t testing.TB, f *pflag.Flag, spec *FlagSpec, v string) {
	t.Helper()
	if f.Name == "version" && strings.HasPrefix(v, "v") {
		// The real --version=vX.Y.Z compares with the linked component-base version, which in
		// a test binary is not a release; see TestVersionFlagValues.
		return
	}
	want := f.Value.Set(v)
	got := spec.Validate(v)
	switch {
	case (want == nil) != (got == nil):
		t.Errorf("--%s=%q: kubelet says %v, kubewin says %v", f.Name, v, want, got)
	case want != nil && want.Error() != got.Error():
		t.Errorf("--%s=%q: kubelet's message %q, kubewin's %q", f.Name, v, want, got)
	}
}

// FuzzCheckKubeletFlagValues compares kubewin's parser of one flag with the real one on any
// value; the seeds cover the ported parsers (IP, taints, reserved memory).
func FuzzCheckKubeletFlagValues(f *testing.F) {
	for _, v := range flagValueCorpus {
		for _, name := range []string{"address", "register-with-taints", "reserved-memory", "node-labels", "eviction-hard", "feature-gates", "max-pods", "v"} {
			f.Add(name, v)
		}
	}
	f.Fuzz(func(t *testing.T, name, v string) {
		real := realKubeletFlags(t)
		rf := real.Lookup(name)
		if rf == nil {
			return
		}
		cats, err := NewCatalogs()
		if err != nil {
			t.Fatal(err)
		}
		spec, ok := cats.Kubelet.Lookup(name)
		if !ok {
			t.Fatalf("--%s missing from the table", name)
		}
		compareFlagValue(t, rf, spec, v)
	})
}

// verflag's parser: raw, booleans, and vX.Y.Z (semantic versions).
func TestVersionFlagValues(t *testing.T) {
	for v, ok := range map[string]bool{"raw": true, "true": true, "false": true, "1": true, "v1.37.1": true, "v1.37.1-custom.1": true,
		"v1.37": false, "vnext": false, "yes": false, "": false} {
		if err := validateVersionFlag(v); (err == nil) != ok {
			t.Errorf("--version=%q: %v, want ok=%v", v, err, ok)
		}
	}
}

// The gate registry built from the generated table is the real registry: same specs, same
// dependencies, and setting gates fails or succeeds with the same messages.
func TestCheckGateRegistryMatchesKubernetes(t *testing.T) {
	g, err := NewGateRegistry()
	if err != nil {
		t.Fatal(err)
	}
	real := utilfeature.DefaultMutableFeatureGate
	if !reflect.DeepEqual(g.gate.GetAllVersioned(), real.GetAllVersioned()) {
		t.Error("the generated feature gate specs differ from k8s.io/kubernetes/pkg/features")
	}
	// The registry also lists gates with no dependencies (empty lists), which constrain nothing
	// and are not in the table.
	nonEmpty := func(m map[featuregate.Feature][]featuregate.Feature) map[featuregate.Feature][]featuregate.Feature {
		out := map[featuregate.Feature][]featuregate.Feature{}
		for k, v := range m {
			if len(v) > 0 {
				out[k] = v
			}
		}
		return out
	}
	if mine, theirs := nonEmpty(g.gate.Dependencies()), nonEmpty(real.Dependencies()); len(theirs) == 0 || !reflect.DeepEqual(mine, theirs) {
		t.Errorf("the generated feature gate dependencies (%d) differ from k8s.io/kubernetes/pkg/features (%d)", len(mine), len(theirs))
	}
	if got, want := g.gate.EmulationVersion().String(), real.EmulationVersion().String(); got != want {
		t.Errorf("emulation version %s, real %s", got, want)
	}
	for _, m := range []map[string]bool{
		nil, {"WinDSR": true}, {"WinOverlay": false}, {"HyperVContainer": true}, {"AllAlpha": true}, {"AllBeta": false},
		{"DRAFractionalCapacityRange": true, "DRAConsumableCapacity": false}, {"NodeSwap": false}, {"MemoryQoS": false},
	} {
		mine, err := g.Effective(m)
		theirs := real.DeepCopy()
		rerr := theirs.SetFromMap(m)
		// Dependency errors come in map order; compare them as sets.
		if (err == nil) != (rerr == nil) || err != nil && !reflect.DeepEqual(splitAggregate(err), splitAggregate(rerr)) {
			t.Errorf("%v: kubewin %v, real %v", m, err, rerr)
		}
		for _, name := range []string{"WinDSR", "MemoryQoS", "NodeSwap", "GracefulNodeShutdown", "KubeletCrashLoopBackOffMax", "DRAConsumableCapacity"} {
			if mine.Enabled(featuregate.Feature(name)) != theirs.Enabled(featuregate.Feature(name)) {
				t.Errorf("%v: %s enabled %v, real %v", m, name, mine.Enabled(featuregate.Feature(name)), theirs.Enabled(featuregate.Feature(name)))
			}
		}
	}
}

// configFiles lists the component config files of configDir plus the ones kubewin renders.
func configFiles(t *testing.T, kind string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(configDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rendered := map[string]string{"KubeletConfiguration": "kubelet", "KubeProxyConfiguration": "kube-proxy"}[kind]
	files = append(files, filepath.Join("../../testdata/golden/example/nodes/node009", rendered, "config.yaml"))
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "kind: "+kind) {
			out = append(out, f)
		}
	}
	if len(out) < 3 {
		t.Fatalf("only %d %s files", len(out), kind)
	}
	return out
}

// loadOne runs check's loading over one file.
func loadOne(t *testing.T, file string) *Context {
	t.Helper()
	ctx, _, err := Load(Input{Files: []string{file}})
	if err != nil {
		t.Fatal(err)
	}
	return ctx
}

func problems(ctx *Context, id, prefix string) []Problem {
	var out []Problem
	for _, p := range ctx.Problems {
		if p.RuleID == id && strings.HasPrefix(p.Message, prefix) {
			out = append(out, p)
		}
	}
	return out
}

// reHiddenMetrics matches the version showHiddenMetricsForVersion is compared with: the linked
// component-base's (not a release in a test binary) upstream, the target's in kubewin.
var reHiddenMetrics = regexp.MustCompile(`have the value '[^']*'`)

func normalizeMessage(m string) string {
	return reHiddenMetrics.ReplaceAllString(m, "have the value '<previous minor>'")
}

// officialKubelet runs the kubelet's own loading (strict, then lenient decoding into the
// internal type with defaulting) and validation as the previous implementation did: the
// host-dependent OS part is neutralised by clearing the fields it reads.
func officialKubelet(t *testing.T, data []byte) (msgs []string, decodeErr error) {
	t.Helper()
	_, strict, err := kubeletscheme.NewSchemeAndCodecs(serializer.EnableStrict)
	if err != nil {
		t.Fatal(err)
	}
	_, lenient, err := kubeletscheme.NewSchemeAndCodecs()
	if err != nil {
		t.Fatal(err)
	}
	var obj runtime.Object
	panicked := func() (p any) {
		defer func() { p = recover() }()
		obj, _, err = strict.UniversalDecoder().Decode(data, nil, nil)
		if err != nil && runtime.IsStrictDecodingError(err) {
			obj, _, err = lenient.UniversalDecoder().Decode(data, nil, nil)
		}
		return nil
	}()
	if panicked != nil {
		// Defaulting applies the file's featureGates first and panics on the error that
		// ValidateKubeletConfiguration would return as its only problem.
		raw := decodeVersioned[*kubeletv1beta1.KubeletConfiguration](t, data, kubeletv1beta1.AddToScheme)
		serr := utilfeature.DefaultFeatureGate.DeepCopy().SetFromMap(raw.FeatureGates)
		if serr == nil {
			t.Fatalf("kubelet decoding panicked: %v", panicked)
		}
		return splitAggregate(serr), nil
	}
	if err != nil {
		return nil, err
	}
	cp := obj.(*kubeletconfig.KubeletConfiguration).DeepCopy()
	cp.FailCgroupV1, cp.SingleProcessOOMKill, cp.UserNamespaces = false, nil, nil
	if err := kubeletvalidation.ValidateKubeletConfiguration(cp, utilfeature.DefaultFeatureGate); err != nil {
		return splitAggregate(err), nil
	}
	return nil, nil
}

func decodeVersioned[T runtime.Object](t testing.TB, data []byte, register func(*runtime.Scheme) error) T {
	t.Helper()
	s := runtime.NewScheme()
	if err := register(s); err != nil {
		t.Fatal(err)
	}
	obj, _, err := serializer.NewCodecFactory(s).UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(T)
}

// reWindowsPodLogs are the podLogsDir messages of the Linux kubelet code that the Windows kubelet
// does not give for a Windows path (kubewin judges Windows configurations with Windows rules).
var reWindowsPodLogs = regexp.MustCompile(`^invalid configuration: pod logs path "(.*)" must be (absolute path|normalized)$`)

// The kubelet's own validation reports nothing on testdata/check/configs that check does not,
// and check reports nothing it does not, apart from the documented differences: the version
// showHiddenMetricsForVersion is compared with, and Windows path rules for Windows files.
func TestCheckKubeletValidationCoversUpstream(t *testing.T) {
	fired := map[string]bool{}
	for _, file := range configFiles(t, "KubeletConfiguration") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want, decodeErr := officialKubelet(t, data)
			ctx := loadOne(t, file)
			if decodeErr != nil {
				if len(problems(ctx, "KW0001", "KubeletConfiguration: ")) == 0 {
					t.Errorf("the kubelet cannot decode the file (%v); check reports no KW0001", decodeErr)
				}
				return
			}
			if len(ctx.KubeletConfigs) != 1 {
				t.Fatalf("check did not load the file: %+v", ctx.Problems)
			}
			windows := ctx.KubeletConfigs[0].OS == OSWindows
			var expect []string
			for _, m := range want {
				if sm := reWindowsPodLogs.FindStringSubmatch(m); windows && sm != nil {
					p, err := strconv.Unquote(`"` + sm[1] + `"`)
					if err != nil {
						t.Fatal(err)
					}
					if (sm[2] == "absolute path" && isAbsWindows(p)) || (sm[2] == "normalized" && isPathCleanWindows(p)) {
						continue // documented: the Windows kubelet accepts it
					}
				}
				expect = append(expect, normalizeMessage(m))
			}
			var got []string
			for _, p := range problems(ctx, "KW0012", "KubeletConfiguration: ") {
				got = append(got, normalizeMessage(strings.TrimPrefix(p.Message, "KubeletConfiguration: ")))
				fired[p.Location.Field] = true
			}
			sort.Strings(expect)
			sort.Strings(got)
			if !reflect.DeepEqual(expect, got) {
				t.Errorf("kubelet validation and check differ\nkubelet: %s\ncheck:   %s", strings.Join(expect, "\n         "), strings.Join(got, "\n         "))
			}
		})
	}
	// Every ported check fires on some test file, so this test really compares each of them.
	for _, c := range kubeletChecks {
		if !fired[c.Field] && c.Field != "containerRuntimeEndpoint" { // defaulting never leaves it empty
			t.Errorf("no file in %s makes the %s check fire", configDir, c.Field)
		}
	}
	if !fired["featureGates"] {
		t.Errorf("no file in %s has a feature gate problem", configDir)
	}
}

// internalToVersioned maps the field paths of kube-proxy's internal type, which its
// validation reports, to the paths of the file (the versioned type).
func internalToVersioned(path string, mode string) string {
	section := "iptables"
	if mode == "ipvs" || mode == "nftables" {
		section = mode
	}
	for _, r := range []struct{ from, to string }{
		{"KubeProxyConfiguration.KubeProxyIPTablesConfiguration.MasqueradeBit", "iptables.masqueradeBit"},
		{"KubeProxyConfiguration.KubeProxyLinuxConfiguration.KubeProxyConntrackConfiguration.MaxPerCore", "conntrack.maxPerCore"},
		{"KubeProxyConfiguration.KubeProxyLinuxConfiguration.KubeProxyConntrackConfiguration.Min", "conntrack.min"},
		{"KubeProxyConfiguration.KubeProxyLinuxConfiguration.KubeProxyConntrackConfiguration.TCPEstablishedTimeout", "conntrack.tcpEstablishedTimeout"},
		{"KubeProxyConfiguration.KubeProxyLinuxConfiguration.KubeProxyConntrackConfiguration.TCPCloseWaitTimeout", "conntrack.tcpCloseWaitTimeout"},
		{"KubeProxyConfiguration.KubeProxyLinuxConfiguration.KubeProxyConntrackConfiguration.UDPTimeout", "conntrack.udpTimeout"},
		{"KubeProxyConfiguration.KubeProxyLinuxConfiguration.KubeProxyConntrackConfiguration.UDPStreamTimeout", "conntrack.udpStreamTimeout"},
		{"KubeProxyConfiguration.KubeProxyLinuxConfiguration.OOMScoreAdj", "oomScoreAdj"},
		{"KubeProxyConfiguration.ClientConnection.Burst", "clientConnection.burst"},
		{"KubeProxyConfiguration.ConfigSyncPeriod", "configSyncPeriod"},
		{"KubeProxyConfiguration.MinSyncPeriod", section + ".minSyncPeriod"},
		{"KubeProxyConfiguration.SyncPeriod", section + ".syncPeriod"},
		{"KubeProxyConfiguration.BindAddress", "bindAddress"},
		{"KubeProxyConfiguration.HealthzBindAddress", "healthzBindAddress"},
		{"KubeProxyConfiguration.MetricsBindAddress", "metricsBindAddress"},
		{"KubeProxyConfiguration.NodePortAddresses", "nodePortAddresses"},
		{"KubeProxyConfiguration.ShowHiddenMetricsForVersion", "showHiddenMetricsForVersion"},
		{"KubeProxyConfiguration.DetectLocalMode", "detectLocalMode"},
		{"KubeProxyConfiguration.DetectLocalConfiguration.InterfaceName", "detectLocal.bridgeInterface"},
		{"KubeProxyConfiguration.DetectLocalConfiguration.InterfacePrefix", "detectLocal.interfaceNamePrefix"},
		{"KubeProxyConfiguration.DetectLocalConfiguration.ClusterCIDRs", "clusterCIDR"},
		{"KubeProxyConfiguration.featureGates", "featureGates"},
		{"KubeProxyConfiguration.logging", "logging"},
	} {
		if path == r.from || strings.HasPrefix(path, r.from+".") || strings.HasPrefix(path, r.from+"[") {
			return r.to + path[len(r.from):]
		}
	}
	return "UNMAPPED:" + path
}

// kube-proxy's own validation, with its paths translated to the file's, reports exactly what
// check reports on testdata/check/configs (apart from the showHiddenMetricsForVersion version).
func TestCheckKubeProxyValidationCoversUpstream(t *testing.T) {
	fired := map[string]bool{}
	for _, file := range configFiles(t, "KubeProxyConfiguration") {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ctx := loadOne(t, file)
			obj, _, err := proxyscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
			if err != nil && runtime.IsStrictDecodingError(err) {
				obj, _, err = serializer.NewCodecFactory(proxyscheme.Scheme, serializer.DisableStrict).UniversalDecoder().Decode(data, nil, nil)
			}
			if err != nil {
				if len(problems(ctx, "KW0001", "KubeProxyConfiguration: ")) == 0 {
					t.Errorf("kube-proxy cannot decode the file (%v); check reports no KW0001", err)
				}
				return
			}
			cp := obj.(*proxyconfig.KubeProxyConfiguration).DeepCopy()
			mode := string(cp.Mode)
			cp.Mode = "" // as before: the mode is judged against the host OS; KW1205 covers it
			var expect []string
			for _, e := range proxyvalidation.Validate(cp) {
				v := *e
				v.Field = internalToVersioned(e.Field, mode)
				v.Detail = strings.ReplaceAll(v.Detail, "KubeProxyConfiguration.MinSyncPeriod", internalToVersioned("KubeProxyConfiguration.MinSyncPeriod", mode))
				expect = append(expect, normalizeMessage(v.Error()))
			}
			var got []string
			for _, p := range problems(ctx, "KW0012", "KubeProxyConfiguration: ") {
				got = append(got, normalizeMessage(strings.TrimPrefix(p.Message, "KubeProxyConfiguration: ")))
				fired[strings.SplitN(p.Location.Field, "[", 2)[0]] = true
			}
			sort.Strings(expect)
			sort.Strings(got)
			if !reflect.DeepEqual(expect, got) {
				t.Errorf("kube-proxy validation and check differ\nkube-proxy: %s\ncheck:      %s", strings.Join(expect, "\n            "), strings.Join(got, "\n            "))
			}
		})
	}
	for _, f := range []string{"featureGates", "iptables.masqueradeBit", "conntrack.maxPerCore", "conntrack.min", "conntrack.tcpEstablishedTimeout",
		"conntrack.tcpCloseWaitTimeout", "conntrack.udpTimeout", "conntrack.udpStreamTimeout", "oomScoreAdj", "clientConnection.burst",
		"configSyncPeriod", "iptables.syncPeriod", "iptables.minSyncPeriod", "bindAddress", "healthzBindAddress", "metricsBindAddress",
		"nodePortAddresses", "showHiddenMetricsForVersion", "detectLocalMode", "detectLocal.bridgeInterface", "detectLocal.interfaceNamePrefix",
		"clusterCIDR", "logging.format"} {
		if !fired[f] {
			t.Errorf("no file in %s makes the %s check fire", configDir, f)
		}
	}
}

// diffJSON renders the fields where two objects differ.
func diffJSON(t testing.TB, a, b any) string {
	t.Helper()
	var ma, mb map[string]any
	for _, x := range []struct {
		v   any
		dst *map[string]any
	}{{a, &ma}, {b, &mb}} {
		data, err := json.Marshal(x.v)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, x.dst); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	for k := range keys {
		if !reflect.DeepEqual(ma[k], mb[k]) {
			out = append(out, fmt.Sprintf("%s: upstream %v, kubewin %v", k, ma[k], mb[k]))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// compareKubeletDefaults defaults c with the real function and with kubewin's port.
func compareKubeletDefaults(t testing.TB, c *kubeletv1beta1.KubeletConfiguration) {
	t.Helper()
	gates, err := NewGateRegistry()
	if err != nil {
		t.Fatal(err)
	}
	gate, err := gates.Effective(c.FeatureGates)
	if err != nil {
		return // the real defaulting panics on these; loadKubeletConfig reports the gate error
	}
	want, got := c.DeepCopy(), c.DeepCopy()
	kubeletdefaults.SetObjectDefaults_KubeletConfiguration(want)
	setKubeletDefaults(got, gate)
	if !reflect.DeepEqual(want, got) {
		t.Errorf("kubelet defaults differ:\n%s", diffJSON(t, want, got))
	}
}

func compareKubeProxyDefaults(t testing.TB, c *proxyv1alpha1.KubeProxyConfiguration) {
	t.Helper()
	want, got := c.DeepCopy(), c.DeepCopy()
	proxydefaults.SetObjectDefaults_KubeProxyConfiguration(want)
	setKubeProxyDefaults(got)
	if !reflect.DeepEqual(want, got) {
		t.Errorf("kube-proxy defaults differ:\n%s", diffJSON(t, want, got))
	}
}

// The ported defaulting equals the real one on an empty file and every test file.
func TestCheckDefaultsMatchUpstream(t *testing.T) {
	compareKubeletDefaults(t, &kubeletv1beta1.KubeletConfiguration{})
	compareKubeProxyDefaults(t, &proxyv1alpha1.KubeProxyConfiguration{})
	compareKubeProxyDefaults(t, &proxyv1alpha1.KubeProxyConfiguration{BindAddress: "fd00::1", HealthzBindAddress: "::1", MetricsBindAddress: "10.0.0.1"})
	for _, file := range configFiles(t, "KubeletConfiguration") {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s := runtime.NewScheme()
		if err := kubeletv1beta1.AddToScheme(s); err != nil {
			t.Fatal(err)
		}
		if obj, _, err := serializer.NewCodecFactory(s).UniversalDeserializer().Decode(data, nil, nil); err == nil {
			compareKubeletDefaults(t, obj.(*kubeletv1beta1.KubeletConfiguration))
		}
	}
	for _, file := range configFiles(t, "KubeProxyConfiguration") {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s := runtime.NewScheme()
		if err := proxyv1alpha1.AddToScheme(s); err != nil {
			t.Fatal(err)
		}
		if obj, _, err := serializer.NewCodecFactory(s).UniversalDeserializer().Decode(data, nil, nil); err == nil {
			compareKubeProxyDefaults(t, obj.(*proxyv1alpha1.KubeProxyConfiguration))
		}
	}
}

// FuzzCheckKubeletDefaults compares the ported kubelet defaulting with the real one on any
// JSON the versioned type decodes.
func FuzzCheckKubeletDefaults(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"maxParallelImagePulls": 3}`))
	f.Add([]byte(`{"maxParallelImagePulls": 1, "podPidsLimit": -5, "nodeStatusUpdateFrequency": "7s"}`))
	f.Add([]byte(`{"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1.0001Ki"}}]}`))
	f.Add([]byte(`{"featureGates": {"KubeletCrashLoopBackOffMax": false, "KubeletEnsureSecretPulledImages": false}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c kubeletv1beta1.KubeletConfiguration
		if json.Unmarshal(data, &c) != nil {
			return
		}
		compareKubeletDefaults(t, &c)
	})
}

// FuzzCheckKubeProxyDefaults does the same for kube-proxy.
func FuzzCheckKubeProxyDefaults(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"bindAddress": "::", "healthzBindAddress": "1.2.3.4", "metricsBindAddress": "[::1]:99"}`))
	f.Add([]byte(`{"bindAddress": "nope", "healthzBindAddress": "x:y"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c proxyv1alpha1.KubeProxyConfiguration
		if json.Unmarshal(data, &c) != nil {
			return
		}
		compareKubeProxyDefaults(t, &c)
	})
}

// FuzzCheckKubeProxyValidation compares the ported kube-proxy validation with the real one on
// any JSON the versioned type decodes (mode cleared, as check does).
func FuzzCheckKubeProxyValidation(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"bindAddress": "x", "healthzBindAddress": "1.2.3.4:0", "nodePortAddresses": ["all", "all", "1.2.3.0/24"], "detectLocalMode": "ClusterCIDR", "clusterCIDR": "10.0.0.0/8,fd00::/8"}`))
	f.Add([]byte(`{"iptables": {"syncPeriod": "1s", "minSyncPeriod": "2s"}, "conntrack": {"min": -1}, "clientConnection": {"burst": -3}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c proxyv1alpha1.KubeProxyConfiguration
		if json.Unmarshal(data, &c) != nil {
			return
		}
		c.SetGroupVersionKind(proxyv1alpha1.SchemeGroupVersion.WithKind("KubeProxyConfiguration"))
		raw, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := proxyscheme.Codecs.UniversalDecoder().Decode(raw, nil, nil)
		if err != nil {
			return
		}
		cp := obj.(*proxyconfig.KubeProxyConfiguration)
		cp.Mode = "" // as check: the mode is judged against the host OS
		var want []string
		for _, e := range proxyvalidation.Validate(cp) {
			v := *e
			v.Field = internalToVersioned(e.Field, string(c.Mode))
			v.Detail = strings.ReplaceAll(v.Detail, "KubeProxyConfiguration.MinSyncPeriod", internalToVersioned("KubeProxyConfiguration.MinSyncPeriod", string(c.Mode)))
			want = append(want, normalizeMessage(v.Error()))
		}
		gates, err := NewGateRegistry()
		if err != nil {
			t.Fatal(err)
		}
		d := c.DeepCopy()
		setKubeProxyDefaults(d)
		var got []string
		for _, e := range validateKubeProxy(d, gates, platform.NewestKubernetes()) {
			got = append(got, normalizeMessage(e.Error()))
		}
		sort.Strings(want)
		sort.Strings(got)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s\nkube-proxy: %q\nkubewin:    %q", raw, want, got)
		}
	})
}

// FuzzCheckKubeletValidation compares the ported kubelet validation with the real one on any
// JSON the versioned type decodes (a Linux configuration: Linux path rules).
func FuzzCheckKubeletValidation(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"maxPods": -1, "imageGCLowThresholdPercent": 90, "enforceNodeAllocatable": ["pods", "none"], "cgroupsPerQOS": false}`))
	f.Add([]byte(`{"registerWithTaints": [{"key": "a b", "effect": "X"}], "reservedMemory": [{"numaNode": 1, "limits": {"memory": "0"}}], "podLogsDir": "x/../y"}`))
	f.Add([]byte(`{"shutdownGracePeriod": "2s", "shutdownGracePeriodCriticalPods": "3s", "memorySwap": {"swapBehavior": "x"}, "topologyManagerScope": "x"}`))
	f.Add([]byte(`{"featureGates": {"DefaultPodSysctls": true}, "defaultPodSysctls": {"kernel.shm_rmid_forced": "1", "a..b": "1"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c kubeletv1beta1.KubeletConfiguration
		if json.Unmarshal(data, &c) != nil {
			return
		}
		gates, err := NewGateRegistry()
		if err != nil {
			t.Fatal(err)
		}
		gate, gateProblems, ok := validateKubeletFeatureGates(gates, c.FeatureGates)
		if !ok {
			return // the real decoding panics; TestCheckKubeletValidationCoversUpstream covers the gate error
		}
		c.SetGroupVersionKind(kubeletv1beta1.SchemeGroupVersion.WithKind("KubeletConfiguration"))
		raw, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		want, decodeErr := officialKubelet(t, raw)
		if decodeErr != nil {
			return
		}
		d := c.DeepCopy()
		setKubeletDefaults(d, gate)
		var got []string
		for _, p := range validateKubelet(d, gateProblems, &kubeletEnv{Gate: gate, OS: OSLinux, Version: platform.NewestKubernetes()}) {
			got = append(got, normalizeMessage(p.Message))
		}
		for i := range want {
			want[i] = normalizeMessage(want[i])
		}
		sort.Strings(want)
		sort.Strings(got)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s\nkubelet: %q\nkubewin: %q", raw, want, got)
		}
	})
}
