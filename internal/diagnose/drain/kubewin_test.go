package drain

import (
	"fmt"
	"strings"
	"testing"
)

// variant is what changes between two occurrences of one error on a node: pod and container
// names, pod UIDs, container ids, addresses, back-off durations, times.
type variant struct {
	ns, pod, ctr, uid, cid, ip, dur, hdr string
	port                                 int
}

func variants() []variant {
	return []variant{
		{"kube-system", "kube-proxy-x7k2p", "kube-proxy", "3f2a1b4c-1d2e-4f5a-8b9c-0d1e2f3a4b5c",
			"4d3c2b1a0f9e8d7c6b5a4d3c2b1a0f9e8d7c6b5a4d3c2b1a0f9e8d7c6b5a4d3c", "10.96.0.1", "10s",
			"E1128 16:50:47.123456    4321 ", 443},
		{"kube-flannel", "kube-flannel-ds-windows-amd64-q9zt4", "kube-flannel", "9b1d2c3e-4f50-4a6b-9c7d-8e9f0a1b2c3d",
			"aa11bb22cc33dd44ee55ff6600771188aa11bb22cc33dd44ee55ff6600771188", "172.30.0.17", "5m0s",
			"E1129 01:02:03.000001    1 ", 6443},
		{"default", "web-5d78c9869d-abcde", "nginx", "00000000-0000-4000-8000-0000000000ff",
			"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "fd00:10:96::1", "2m40s",
			"E0101 23:59:59.999999   88888 ", 10250},
		{"calico-system", "calico-node-windows-8jx2l", "calico-node", "7e6d5c4b-3a29-4817-a6f5-e4d3c2b1a098",
			"ffffeeeeddddccccbbbbaaaa99998888777766665555444433332222111100ff", "192.168.122.5", "1m20.5s",
			"E1128 16:50:48.5    4321 ", 9099},
	}
}

type lineGroup struct {
	name string
	line func(v variant) string
}

// kubewinGroups are error lines as kubelet, kube-proxy, containerd, flannel and the CNI plugins
// print them on Windows and Linux nodes (formats from kubernetes v1.37.1
// pkg/kubelet/pod_workers.go, pkg/kubelet/kubelet_volumes.go, staging/src/k8s.io/client-go/tools/cache/reflector.go,
// pkg/proxy/winkernel/proxier.go, containerd's CRI plugin and flannel's logs). Each group is one
// message whose variable parts differ by variant.
func kubewinGroups() []lineGroup {
	return []lineGroup{
		{"crashloop", func(v variant) string {
			return v.hdr + `pod_workers.go:1301] "Error syncing pod, skipping" err="failed to \"StartContainer\" for \"` + v.ctr +
				`\" with CrashLoopBackOff: \"back-off ` + v.dur + ` restarting failed container=` + v.ctr + ` pod=` + v.pod +
				`_` + v.ns + `(` + v.uid + `)\"" pod="` + v.ns + `/` + v.pod + `" podUID="` + v.uid + `"`
		}},
		{"list services timeout", func(v variant) string {
			return v.hdr + `reflector.go:158] "Unhandled Error" err="k8s.io/client-go/informers/factory.go:160: Failed to watch *v1.Service: failed to list *v1.Service: Get \"https://` +
				hostPort(v.ip, v.port) + `/api/v1/services?limit=500&resourceVersion=0\": dial tcp ` + hostPort(v.ip, v.port) + `: i/o timeout" logger="UnhandledError"`
		}},
		{"list services refused", func(v variant) string {
			return v.hdr + `reflector.go:158] "Unhandled Error" err="k8s.io/client-go/informers/factory.go:160: Failed to watch *v1.Service: failed to list *v1.Service: Get \"https://` +
				hostPort(v.ip, v.port) + `/api/v1/services?limit=500&resourceVersion=0\": dial tcp ` + hostPort(v.ip, v.port) + `: connect: connection refused" logger="UnhandledError"`
		}},
		{"orphaned volumes", func(v variant) string {
			return `"There were many similar errors. Turn up verbosity to see them." err="orphaned pod \"` + v.uid +
				`\" found, but error occurred when trying to remove the volumes dir: not a directory" numErrs=` + fmt.Sprint(v.port%7+1)
		}},
		{"stop sandbox", func(v variant) string {
			return `"StopPodSandbox from runtime service failed" err="rpc error: code = Unknown desc = failed to destroy network for sandbox \"` +
				v.cid + `\": plugin type=\"sdnbridge\" failed (delete): hcnDeleteEndpoint failed in Win32: The endpoint was not found. (0x803b0002)" podSandboxID="` + v.cid + `"`
		}},
		{"containerd remove", func(v variant) string {
			return `time="2026-11-28T16:50:47.` + fmt.Sprint(v.port) + `Z" level=error msg="RemoveContainer for \"` + v.cid +
				`\" failed" error="rpc error: code = NotFound desc = an error occurred when try to find container \"` + v.cid + `\": not found"`
		}},
		{"cni bridge address", func(v variant) string {
			return `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "` + v.cid +
				`": plugin type="flannel" failed (add): failed to delegate add: failed to set bridge addr: "cni0" already has an IP address different from ` + v.ip + `/24`
		}},
		{"hns policy", func(v variant) string {
			return v.hdr + `proxier.go:1370] "Policy creation failed" err="hcnCreateLoadBalancer failed in Win32: The specified port already exists. (0x803b0013)" endpointIP="` +
				v.ip + `" port=` + fmt.Sprint(v.port)
		}},
		{"volume mount", func(v variant) string {
			return `MountVolume.SetUp failed for volume "kube-api-access-` + v.pod[len(v.pod)-5:] + `" : mount C:\var\lib\kubelet\pods\` + v.uid +
				`\volumes\kubernetes.io~projected\kube-api-access failed: The system cannot find the path specified.`
		}},
		{"probe failed", func(v variant) string {
			return `Readiness probe failed: Get "http://` + hostPort(v.ip, v.port) + `/healthz": context deadline exceeded (Client.Timeout exceeded while awaiting headers) after ` + v.dur
		}},
	}
}

func hostPort(ip string, port int) string {
	if strings.Contains(ip, ":") {
		return fmt.Sprintf("[%s]:%d", ip, port)
	}
	return fmt.Sprintf("%s:%d", ip, port)
}

// kubewinCorpus interleaves the groups: variant by variant, group by group.
func kubewinCorpus() []string {
	var out []string
	for _, v := range variants() {
		for _, g := range kubewinGroups() {
			out = append(out, g.line(v))
		}
	}
	return out
}

// TestKubewinLines: lines that differ only in pod names, UIDs, container ids, IPs and durations
// share one template; different messages do not.
func TestKubewinLines(t *testing.T) {
	m := New(Config{})
	groups := kubewinGroups()
	ids := make([][]int, len(groups))
	for _, v := range variants() {
		for gi, g := range groups {
			id, _ := m.Add(g.line(v))
			ids[gi] = append(ids[gi], id)
		}
	}
	owner := map[int]string{}
	for gi, g := range groups {
		for _, id := range ids[gi] {
			if id != ids[gi][0] {
				t.Errorf("%s: variants went to clusters %v, want one", g.name, ids[gi])
				break
			}
		}
		if o, ok := owner[ids[gi][0]]; ok {
			t.Errorf("%s and %s share cluster %d", o, g.name, ids[gi][0])
		}
		owner[ids[gi][0]] = g.name
	}
	if got, want := m.Len(), len(groups); got != want {
		t.Errorf("%d clusters, want %d", got, want)
	}
	// The templates show no variable of any variant.
	for _, c := range m.Clusters() {
		for _, v := range variants() {
			for _, x := range []string{v.pod, v.uid, v.cid, v.ip, v.dur} {
				if strings.Contains(c.Template, x) {
					t.Errorf("template keeps %q: %s", x, c.Template)
				}
			}
		}
		if c.Count != int64(len(variants())) {
			t.Errorf("count %d for %s", c.Count, c.Template)
		}
	}
	if testing.Verbose() {
		for _, c := range m.Clusters() {
			t.Logf("%d × %s", c.Count, c.Template)
		}
	}
}
