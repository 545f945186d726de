package v1alpha1

import (
	"fmt"
	"strings"
	"testing"
)

// largeSpec writes an upstream-tor/keepalived cluster with n nodes (a quarter of them Windows)
// on a /16 node network, three gateway members, and every node's pod CIDR given.
func largeSpec(n int) []byte {
	var b strings.Builder
	b.WriteString(`apiVersion: kubewin.io/v1alpha1
kind: Cluster
metadata: {name: large}
spec:
  networking:
    podCIDRs: [10.128.0.0/9]
    serviceCIDR: 172.30.0.0/16
    clusterDNS: 172.30.0.10
    dnsSearch: [corp.example.com]
  design: upstream-tor/keepalived
  linuxCNI: {type: calico}
  gatewayGroups:
  - name: gw
    members: [{node: n00000}, {node: n00001}, {node: n00002}]
    routerVIPs: [192.168.255.250]
  nodes:
`)
	for i := range n {
		os, build := "linux", ""
		if i%4 == 3 {
			os, build = "windows", "\n    windowsBuild: ltsc2022"
		}
		fmt.Fprintf(&b, `  - name: n%05d
    os: %s%s
    podCIDR: 10.%d.%d.0/24
    labels: {example.com/rack: r%d}
    nics:
    - name: eth0
      mac: 00:15:5d:%02x:%02x:01
      ip: 192.168.%d.%d
      prefix: 16
      gateway: 192.168.0.1
`, i, os, build, 128+i/256, i%256, i%40, i/256, i%256, i/250, i%250+2)
	}
	return []byte(b.String())
}

func TestLargeSpecIsValid(t *testing.T) {
	if _, _, err := Parse("large.yaml", largeSpec(2000)); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkParse measures decoding, defaulting and validating a 5000-node description.
func BenchmarkParse(b *testing.B) {
	for _, n := range []int{100, 5000} {
		data := largeSpec(n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			start := processCPU()
			for b.Loop() {
				if _, _, err := Parse("large.yaml", data); err != nil {
					b.Fatal(err)
				}
			}
			if cpu := processCPU() - start; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
