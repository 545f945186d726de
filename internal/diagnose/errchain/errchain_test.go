package errchain

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseChains(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		innermost string
		segments  int // 0: not checked
		codes     []Code
		objects   []Object
	}{
		{
			// containerd errdefs appends the gRPC class: the reason is the segment before it.
			name:      "errdefs class suffix",
			msg:       `failed to create containerd task: failed to create shim task: hcs::CreateComputeSystem web: The directory name is invalid.: unknown`,
			innermost: `The directory name is invalid.`,
		},
		{
			name:      "gRPC Unknown desc with errdefs suffix",
			msg:       `rpc error: code = Unknown desc = failed to start containerd task: stat /app: no such file or directory: unknown`,
			innermost: `no such file or directory`,
		},
		{
			name:      "fmt.Errorf chain",
			msg:       `failed to run Kubelet: failed to create kubelet: misconfiguration: kubelet cgroup driver: "systemd" is different from docker cgroup driver: "cgroupfs"`,
			innermost: `kubelet cgroup driver: "systemd" is different from docker cgroup driver: "cgroupfs"`,
			segments:  4,
		},
		{
			name:      "klog structured err with gRPC",
			msg:       `"RunPodSandbox from runtime service failed" err="rpc error: code = Unknown desc = failed to setup network for sandbox \"abc\": plugin type=\"sdnbridge\" name=\"nat\" failed (add): error while GETHNSNewtorkByName(l2bridge): Network l2bridge not found"`,
			innermost: `Network l2bridge not found`,
			codes:     []Code{{"grpc", "Unknown"}},
			objects:   []Object{{"network", "l2bridge"}},
		},
		{
			name:      "kube-proxy winkernel lower case",
			msg:       `unable to find HNS Network specified by cbr0. Please check network name and CNI deployment`,
			innermost: `unable to find HNS Network specified by cbr0. Please check network name and CNI deployment`,
			objects:   []Object{{"network", "cbr0"}},
		},
		{
			name:      "errno with file",
			msg:       `failed to load Kubelet config file /var/lib/kubelet/config.yaml, error failed to read kubelet config file "/var/lib/kubelet/config.yaml", error: open /var/lib/kubelet/config.yaml: no such file or directory`,
			innermost: `no such file or directory`,
			codes:     []Code{{"errno", "ENOENT"}},
			objects:   []Object{{"file", "/var/lib/kubelet/config.yaml"}},
		},
		{
			name:      "kubeadm preflight",
			msg:       `[ERROR FileContent--proc-sys-net-ipv4-ip_forward]: /proc/sys/net/ipv4/ip_forward contents are not set to 1`,
			innermost: `/proc/sys/net/ipv4/ip_forward contents are not set to 1`,
			objects:   []Object{{"check", "FileContent--proc-sys-net-ipv4-ip_forward"}, {"file", "/proc/sys/net/ipv4/ip_forward"}},
		},
		{
			name:      "HRESULT in parentheses",
			msg:       `hcs::CreateComputeSystem 4f2e: The system cannot find the file specified. (0x80070002)`,
			innermost: `The system cannot find the file specified. (0x80070002)`,
			codes:     []Code{{"win32", "0x80070002"}},
		},
		{
			name:      "addresses, times and URLs are not split",
			msg:       `Get "https://10.0.0.1:6443/api/v1/nodes?limit=500": dial tcp 10.0.0.1:6443: connect: connection refused`,
			innermost: `connection refused`,
			codes:     []Code{{"errno", "ECONNREFUSED"}},
			objects:   []Object{{"url", "https://10.0.0.1:6443/api/v1/nodes?limit=500"}, {"endpoint", "10.0.0.1:6443"}},
		},
		{
			name:      "config field",
			msg:       `failed to decode: strict decoding error: unknown field "clusterCIDRs"`,
			innermost: `unknown field "clusterCIDRs"`,
			objects:   []Object{{"field", "clusterCIDRs"}},
		},
		{
			name:      "yaml line",
			msg:       `error converting YAML to JSON: yaml: line 12: did not find expected key`,
			innermost: `did not find expected key`,
			objects:   []Object{{"line", "12"}},
		},
		{
			name:      "apostrophes do not open quotes",
			msg:       `can't open the file: no such file or directory`,
			innermost: `no such file or directory`,
			segments:  2,
		},
		{name: "empty", msg: ``, innermost: ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Parse(tc.msg)
			if got := c.Innermost(); got != tc.innermost {
				t.Errorf("innermost %q, want %q (segments %q)", got, tc.innermost, c.Segments)
			}
			if tc.segments > 0 && len(c.Segments) != tc.segments {
				t.Errorf("%d segments %q, want %d", len(c.Segments), c.Segments, tc.segments)
			}
			for _, want := range tc.codes {
				if !contains(c.Codes, want) {
					t.Errorf("codes %v lack %v", c.Codes, want)
				}
			}
			for _, want := range tc.objects {
				if !contains(c.Objects, want) {
					t.Errorf("objects %v lack %v", c.Objects, want)
				}
			}
		})
	}
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// A label followed by a number keeps its value in the same segment: "exit code: 2" is one cause.
func TestLabelsDoNotSplit(t *testing.T) {
	c := Parse(`process exited: exit code: 2`)
	if got := c.Innermost(); got != "exit code: 2" {
		t.Errorf("innermost %q", got)
	}
}

func TestDeterministic(t *testing.T) {
	msg := `a: b: open C:\etc\kubernetes\kubelet.conf: The system cannot find the path specified. (0x3) in \\.\pipe\containerd-containerd`
	if a, b := Parse(msg), Parse(msg); !reflect.DeepEqual(a, b) {
		t.Fatalf("not deterministic: %v vs %v", a, b)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`failed: "x" err="rpc error: code = Unknown desc = a: b"`,
		`[ERROR Swap]: running with swap on is not supported. Please disable swap`,
		`x: "unterminated`, `err="\x`, `((((: ))))`, `a: b: c: d: e: f: g: h: i: j: k: l: m: n: o: p: q: r: s`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		c := Parse(msg)
		if len(c.Segments) > maxSegments || len(c.Objects) > maxObjects {
			t.Fatalf("unbounded: %d segments, %d objects", len(c.Segments), len(c.Objects))
		}
		for _, s := range c.Segments {
			if s == "" || strings.TrimSpace(s) != s {
				t.Fatalf("segment %q not trimmed", s)
			}
		}
		if !reflect.DeepEqual(c, Parse(msg)) {
			t.Fatal("not deterministic")
		}
	})
}
