// Package mixgen writes a deterministic mix of Windows node log lines (kubelet, kube-proxy,
// containerd, flanneld) for benchmarking `kubewin diagnose`: mostly klog info chatter, some
// warnings, unknown errors with varying ids, known failures from the signature catalogue, Go-escaped
// GBK output and an occasional multi-megabyte line.
package mixgen

import (
	"bufio"
	"io"
	"math/rand"
	"strconv"
)

// Mix proportions per 10,000 lines.
const (
	perHit     = 150 // known failures
	perUnknown = 400 // E lines no signature explains
	perWarn    = 600
	perLogrus  = 40
	perEscaped = 10
)

var info = []string{
	`kubelet_node_status.go:294] Setting node annotation to enable volume controller attach/detach`,
	`reconciler.go:224] "operationExecutor.VerifyControllerAttachedVolume started for volume \"default-token-%x\" (UniqueName: \"kubernetes.io/secret/%u-default-token\") pod \"web-%n\" (UID: \"%u\")"`,
	`proxier.go:1001] "Syncing proxy rules" took=%nms services=%n endpoints=%n`,
	`kuberuntime_manager.go:640] computePodActions got {KillPod:false CreateSandbox:false SandboxID:%x Attempt:0 NextInitContainerToStart:nil ContainersToStart:[] ContainersToKill:map[]}`,
	`generic.go:155] GenericPLEG: %u/%x: non-existent -> running`,
	`round_trippers.go:443] GET https://10.0.0.1:6443/api/v1/nodes/node009?timeout=10s 200 OK in %n milliseconds`,
	`hns.go:350] "Queried load balancer" vip="10.96.%n.%n" id="%u"`,
	`main.go:386] flanneld: lease renewed, new expiration: 2024-09-13 %n:%n:00 +0000 UTC`,
}

var warn = []string{
	`pod_container_deletor.go:79] Container "%x" not found in pod's containers`,
	`cni.go:237] Unable to update cni config: retrying in %ns`,
	`reflector.go:424] watch of *v1.Pod ended with: an error on the server ("unable to decode an event from the watch stream") has prevented the request from succeeding`,
}

var unknown = []string{
	`kubelet.go:2263] "Error syncing pod, skipping" err="failed to \"StartContainer\" for \"web\" with CrashLoopBackOff: \"back-off %ns restarting failed container=web pod=web-%n_default(%u)\"" pod="default/web-%n"`,
	`remote_runtime.go:334] "ContainerStatus from runtime service failed" err="rpc error: code = NotFound desc = an error occurred when try to find container \"%x\": not found" containerID="%x"`,
	`controller.go:144] failed to ensure lease exists, will retry in %ns, error: Get "https://10.0.0.1:6443/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node009?timeout=10s": context deadline exceeded`,
	`proxier.go:1412] "Remote endpoint creation failed" err="hnsCall failed in Win32: The object already exists. (0x1392)" ip="10.244.%n.%n"`,
}

var hits = []string{
	`proxier.go:1231] Policy creation failed: hcnCreateLoadBalancer failed in Win32: The specified port already exists. (0x803b0013) {"Success":false,"Error":"The specified port already exists. ","ErrorCode":2151350291}`,
	`proxier.go:1192] Endpoint information not available for service rtx/rtx-service-%n:rtx-service. Not applying any policy`,
	`kuberuntime_sandbox.go:72] "Failed to create sandbox for pod" err="rpc error: code = Unknown desc = failed to setup network for sandbox \"%x\": plugin type=\"win-bridge\" failed (add): hcnCreateEndpoint failed in Win32: The provided IP address is invalid. (0x803b001e)"`,
	`kubelet.go:2855] "Container runtime network not ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"`,
	`server.go:749] kubelet needs to run as uid ` + "`0`" + `. It is being run as -1`,
	`image_gc_manager.go:300] [imageGCManager]: Disk usage on image filesystem is at 9%n% which is over the high threshold (85%). Trying to free 11687732838 bytes down to the low threshold (80%).`,
	`reflector.go:138] Failed to watch *v1.Node: failed to list *v1.Node: Get "https://10.0.0.1:6443/api/v1/nodes?limit=500": x509: certificate has expired or is not yet valid: current time 2024-09-12T15:20:00Z is after 2024-08-30T09:00:00Z`,
	`kubelet.go:2263] node "node0%n" not found`,
}

const escaped = `driver-call.go:267] Failed to unmarshal output for command: init, output: "RunFlexVolume : \xce\u07b7\xa8\xbd\xab\xa1\xb0RunFlexVolume\xa1\xb1\xcf\xeeʶ\xb1\xf0Ϊ cmdlet\xa1\xa2\xba\xaf\xca\xfd\r\n", error: invalid character 'R' looking for beginning of value`

// Write writes at least size bytes of log lines to w, deterministic for a seed. Every
// longLineEvery bytes (0: never) one line of about 2 MiB is written.
func Write(w io.Writer, size int64, seed int64, longLineEvery int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	r := rand.New(rand.NewSource(seed))
	var (
		written  int64
		nextLong = longLineEvery
		line     []byte
		sec      int64 = 8 * 3600
		micro    int64
	)
	for written < size {
		micro += int64(r.Intn(20000))
		if micro >= 1e6 {
			sec += micro / 1e6
			micro %= 1e6
		}
		line = line[:0]
		n := r.Intn(10000)
		switch {
		case n < perHit:
			line = klogHeader(line, 'E', sec, micro)
			line = expand(line, hits[r.Intn(len(hits))], r)
		case n < perHit+perUnknown:
			line = klogHeader(line, 'E', sec, micro)
			line = expand(line, unknown[r.Intn(len(unknown))], r)
		case n < perHit+perUnknown+perWarn:
			line = klogHeader(line, 'W', sec, micro)
			line = expand(line, warn[r.Intn(len(warn))], r)
		case n < perHit+perUnknown+perWarn+perLogrus:
			line = append(line, `time="2024-09-12T`...)
			line = appendClock(line, sec, micro)
			line = append(line, `Z" level=error msg="failed to load cni during init, please check CRI plugin status before setting up network for pods" error="cni config load failed: no network config found in C:\\Program Files\\containerd\\cni\\conf: cni plugin not initialized: failed to load cni config"`...)
		case n < perHit+perUnknown+perWarn+perLogrus+perEscaped:
			line = klogHeader(line, 'E', sec, micro)
			line = append(line, escaped...)
		default:
			line = klogHeader(line, 'I', sec, micro)
			line = expand(line, info[r.Intn(len(info))], r)
		}
		if longLineEvery > 0 && written >= nextLong {
			nextLong += longLineEvery
			for len(line) < 2<<20 {
				line = append(line, " payload=0123456789abcdef"...)
			}
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
		written += int64(len(line))
	}
	return bw.Flush()
}

func klogHeader(b []byte, sev byte, sec, micro int64) []byte {
	day := 12 + sec/86400
	b = append(b, sev, '0', '9')
	b = append2(b, day)
	b = append(b, ' ')
	b = appendClock(b, sec, micro)
	return append(b, "    4120 "...)
}

func appendClock(b []byte, sec, micro int64) []byte {
	s := sec % 86400
	b = append2(b, s/3600)
	b = append(b, ':')
	b = append2(b, s/60%60)
	b = append(b, ':')
	b = append2(b, s%60)
	b = append(b, '.')
	m := strconv.AppendInt(nil, micro+1e6, 10)
	return append(b, m[1:]...)
}

func append2(b []byte, v int64) []byte { return append(b, byte('0'+v/10%10), byte('0'+v%10)) }

// expand fills %n (small number), %x (64-bit hex id) and %u (UUID) in a template.
func expand(b []byte, tmpl string, r *rand.Rand) []byte {
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '%' || i+1 == len(tmpl) {
			b = append(b, tmpl[i])
			continue
		}
		switch tmpl[i+1] {
		case 'n':
			b = strconv.AppendInt(b, int64(r.Intn(250)), 10)
		case 'x':
			b = strconv.AppendUint(b, r.Uint64()|1<<60, 16)
			b = strconv.AppendUint(b, r.Uint64()|1<<60, 16)
		case 'u':
			x := strconv.FormatUint(r.Uint64()|1<<63, 16) + strconv.FormatUint(r.Uint64()|1<<63, 16)
			b = append(b, x[0:8]...)
			b = append(b, '-')
			b = append(b, x[8:12]...)
			b = append(b, '-')
			b = append(b, x[12:16]...)
			b = append(b, '-')
			b = append(b, x[16:20]...)
			b = append(b, '-')
			b = append(b, x[20:32]...)
		default:
			b = append(b, '%', tmpl[i+1])
		}
		i++
	}
	return b
}
