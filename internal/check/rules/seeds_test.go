package rules

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/check"
)

var update = flag.Bool("update", false, "rewrite golden files")

// seedDir holds command lines, configs and manifests copied verbatim from ../shared/seeds.
const seedDir = "../../../testdata/check/seeds"

type seedCase struct {
	name      string
	files     []string
	manifests []string
	example   bool
	version   string
	// want are findings that must be present, as "RULE flag-or-field" or "RULE @line".
	want []string
	// absent are rule IDs that must not fire.
	absent []string
}

var seedCases = []seedCase{
	{name: "seed000-kubelet-2.7-v1.37", files: []string{"seed000-kubelet-2.7.cmd", "seed000-l2bridge.conf"}, example: true, version: "1.37",
		want: []string{"KW1105 --pod-infra-container-image", "KW1105 --network-plugin", "KW1105 --cni-bin-dir", "KW1105 --cni-conf-dir",
			"KW1105 --image-pull-progress-deadline", "KW1105 --log-dir", "KW1105 --log-file", "KW1105 --logtostderr",
			"KW1108 --feature-gates", "KW1115", "KW1805", "KW1806", "KW0008 --logtostderr", "KW1304 AdditionalArgs[0]"},
		absent: []string{"KW1101", "KW1102", "KW1103", "KW1104", "KW1116", "KW0003", "KW1301", "KW1302", "KW1303", "KW1306"}},
	{name: "seed000-kubelet-2.7-v1.23", files: []string{"seed000-kubelet-2.7.cmd"}, version: "1.23",
		want:   []string{"KW1106 --network-plugin", "KW1106 --log-dir", "KW1108 --feature-gates", "KW0014"},
		absent: []string{"KW1105", "KW1106 --pod-infra-container-image"}}, // --pod-infra-container-image: deprecated only from 1.24 (kubernetes/kubernetes#108045)
	{name: "seed000-kubelet-2.3", files: []string{"seed000-kubelet-2.3.cmd"}, example: true,
		want:   []string{"KW1103", "KW1104", "KW1115", "KW1111"},
		absent: []string{"KW1101", "KW1102", "KW1105", "KW0003"}},
	{name: "seed000-kube-proxy-2.7", files: []string{"seed000-kube-proxy-2.7.cmd"}, example: true,
		want:   []string{"KW1105 --log-file", "KW1105 --logtostderr"},
		absent: []string{"KW1201", "KW1202", "KW1203", "KW1205", "KW1209", "KW1212", "KW0003"}},
	{name: "seed000-kube-proxy-dsr-2.7", files: []string{"seed000-kube-proxy-dsr-2.7.cmd"},
		want: []string{"KW0007 --feature-gates", "KW0007 --enable-dsr", "KW0003 --enable-dsr", "KW1110 --feature-gates"}},
	{name: "seed000-services", files: []string{"seed000-services.cmd"},
		absent: []string{"KW1113", "KW1103", "KW1104", "KW1115", "KW0010"}},
	{name: "seed000-l2bridge.conf", files: []string{"seed000-l2bridge.conf"}, example: true,
		want:   []string{"KW1304 AdditionalArgs[0]"},
		absent: []string{"KW0001", "KW1301", "KW1302", "KW1303", "KW1305", "KW1306", "KW1307", "KW1310", "KW1316", "KW1317"}},
	{name: "seed000-keepalived.conf", files: []string{"seed000-keepalived.conf"}, example: true,
		want:   []string{"KW1803 @17", "KW1513 @19", "KW1514 @6", "KW1514 @7", "KW1512 @16"},
		absent: []string{"KW0001", "KW1501", "KW1502", "KW1504", "KW1505", "KW1405", "KW1409"}},
	{name: "seed000-host-setup", files: []string{"seed000-daemon.json", "seed000-firewall.ps1"},
		want: []string{"KW1802 @1", "KW1802 @2", "KW1804 insecure-registries[0]", "KW1804 insecure-registries[1]", "KW1605"}},
	{name: "seed001-nssm-l2bridge", files: []string{"seed001-nssm-l2bridge.ps1"},
		want: []string{"KW0010 --hostname-override", "KW0010 --cluster-dns", "KW0013 @10", "KW1105 --pod-infra-container-image",
			"KW1105 --allow-privileged", "KW1105 --image-pull-progress-deadline", "KW1105 --network-plugin", "KW1105 --log-dir"},
		absent: []string{"KW1101", "KW1102", "KW1103", "KW1201", "KW1113", "KW1114"}},
	{name: "seed001-nssm-overlay", files: []string{"seed001-nssm-overlay.ps1"},
		want:   []string{"KW1110 --feature-gates", "KW0010 --source-vip", "KW1105 --log-dir"},
		absent: []string{"KW1201", "KW1204", "KW1208"}},
	{name: "seed001-sc", files: []string{"seed001-sc.cmd"},
		want: []string{"KW1113", "KW0003 --service", "KW0006 --hostname-override", "KW0010 @2"}},
	{name: "seed001-kube-proxy-hostname", files: []string{"seed001-kube-proxy-hostname.ps1"},
		want: []string{"KW1201", "KW0009 --hostname-override"}, absent: []string{"KW1203"}},
	{name: "seed001-manifests", manifests: []string{"seed001-iis-hyperv.yaml", "seed001-win-webserver.yaml", "seed001-runtimeclass.yaml", "seed001-iis-2019.yaml"}, example: true,
		want: []string{"KW1705 spec.template.metadata.annotations.experimental.windows.kubernetes.io/isolation-type", "KW1701 spec.template.spec",
			"KW1703 spec.template.spec", "KW1606 handler", "KW0001 @27",
			// The seed's webserver runs ltsc2019 images; the example's node009 is Windows
			// Server 2022 (see example.yaml), where a process-isolated 2019 image cannot run.
			"KW1704 spec.template.spec.containers[0].image"},
		absent: []string{"KW1709"}},
	{name: "seed002-kubeletstart", files: []string{"seed002-kubeletstart.ps1"},
		want: []string{"KW1802 @19", "KW1105 --azure-container-registry-config", "KW1105 --cloud-config", "KW1105 --cloud-provider",
			"KW1105 --dynamic-config-dir", "KW1105 --image-pull-progress-deadline", "KW1105 --keep-terminated-pod-volumes",
			"KW1105 --network-plugin", "KW1105 --non-masquerade-cidr", "KW1105 --pod-infra-container-image", "KW1105 --cni-bin-dir",
			"KW1105 --cni-conf-dir", "KW1115"},
		absent: []string{"KW0009", "KW1101", "KW1102", "KW1103", "KW1104", "KW1111", "KW1805", "KW1806", "KW0003"}},
	{name: "seed002-hyperv-gates", files: []string{"seed002-hyperv-gates.flags"},
		want: []string{"KW1108 --feature-gates"}},
	{name: "seed002-deployments", manifests: []string{"seed002-deployment-v1beta2.yaml", "seed002-whoami.yaml"},
		want: []string{"KW1709 apiVersion", "KW1705 spec.template.metadata.annotations.experimental.windows.kubernetes.io/isolation-type", "KW0011 @1"}},
	{name: "seed003-kubelet", files: []string{"seed003-kubelet.ps1"},
		want: []string{"KW0007 --hostname-override", "KW0007 --api_servers", "KW1105 --api_servers", "KW1105 --pod-infra-container-image",
			"KW0010 --hostname-override", "KW0013 @1"}},
	{name: "seed003-kube-proxy", files: []string{"seed003-kube-proxy.ps1"},
		// no KW1201: the network name is a kernelspace requirement, due once KW1205's mode is fixed
		want: []string{"KW1105 --proxy-mode", "KW1205 --proxy-mode", "KW0007 --proxy-mode"}, absent: []string{"KW1201"}},
	{name: "seed003-pod", manifests: []string{"seed003-pod.json"}, example: true,
		want: []string{"KW1713 spec.nodeSelector.beta.kubernetes.io/os", "KW1703 spec"}, absent: []string{"KW1701"}},
}

func seedPaths(names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, filepath.Join(seedDir, n))
	}
	return out
}

// findingKey renders a finding for want/absent matching and golden files.
func matches(f check.Finding, want string) bool {
	id, rest, _ := strings.Cut(want, " ")
	if f.RuleID != id {
		return false
	}
	switch {
	case rest == "":
		return true
	case strings.HasPrefix(rest, "@"):
		return fmt.Sprintf("@%d", f.Location.Line) == rest
	default:
		return f.Location.Flag == rest || f.Location.Field == rest
	}
}

func goldenText(rep *check.Report) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# target %s (%s)\n", rep.Version, rep.VersionFrom)
	for _, f := range rep.Findings {
		l := f.Location
		l.File = filepath.Base(l.File)
		fmt.Fprintf(&b, "%s %-7s %s | %s\n", f.RuleID, f.Severity, l, f.Message)
	}
	return b.Bytes()
}

// TestSeeds runs every seed command line, config and manifest through check and asserts the
// findings (the named ones explicitly, all of them through a golden file).
func TestSeeds(t *testing.T) {
	for _, sc := range seedCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx, bad, err := check.Load(check.Input{Files: seedPaths(sc.files), Manifests: seedPaths(sc.manifests),
				UseExample: sc.example, KubernetesVersion: sc.version})
			if err != nil || bad {
				t.Fatalf("Load: %v (spec bad %v)", err, bad)
			}
			rep := check.Run(ctx, All(), check.Options{})
			for _, w := range sc.want {
				found := false
				for _, f := range rep.Findings {
					if matches(f, w) {
						found = true
					}
				}
				if !found {
					t.Errorf("missing finding %q", w)
				}
			}
			for _, a := range sc.absent {
				if got := findingsOf(rep, a); len(got) > 0 {
					t.Errorf("unexpected %s: %s", a, got[0].Message)
				}
			}
			golden := filepath.Join(seedDir, "golden", sc.name+".txt")
			got := goldenText(rep)
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("findings differ from %s (run with -update after checking the diff):\n%s", golden, got)
			}
		})
	}
}
