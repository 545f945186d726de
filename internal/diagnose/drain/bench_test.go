package drain

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// randomVariant makes the variable parts of a kubewin line from r.
func randomVariant(r *rand.Rand) variant {
	hex := func(n int) string {
		const digits = "0123456789abcdef"
		b := make([]byte, n)
		for i := range b {
			b[i] = digits[r.IntN(16)]
		}
		return string(b)
	}
	pod := fmt.Sprintf("app%c-%s-%s", 'a'+rune(r.IntN(26)), hex(10), hex(5))
	return variant{
		ns:   []string{"kube-system", "default", "monitoring", "calico-system"}[r.IntN(4)],
		pod:  pod,
		ctr:  []string{"kube-proxy", "nginx", "calico-node", "flannel"}[r.IntN(4)],
		uid:  hex(8) + "-" + hex(4) + "-" + hex(4) + "-" + hex(4) + "-" + hex(12),
		cid:  hex(64),
		ip:   fmt.Sprintf("10.%d.%d.%d", r.IntN(256), r.IntN(256), r.IntN(256)),
		dur:  fmt.Sprintf("%dm%ds", r.IntN(6), r.IntN(60)),
		hdr:  fmt.Sprintf("E%02d%02d %02d:%02d:%02d.%06d    %d ", 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000000), r.IntN(100000)),
		port: 1 + r.IntN(65535),
	}
}

// kubewinStream is n lines of the kubewin groups with random variable parts.
func kubewinStream(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	groups := kubewinGroups()
	out := make([]string, n)
	for i := range out {
		out[i] = groups[r.IntN(len(groups))].line(randomVariant(r))
	}
	return out
}

// distinctStream is n messages of 6 to 14 random words from a vocabulary of 20000 with a number
// or address here and there: nearly every message is a template of its own.
func distinctStream(n int) []string {
	r := rand.New(rand.NewPCG(3, 4))
	vocab := make([]string, 20000)
	for i := range vocab {
		var b strings.Builder
		for k := 0; k < 4+r.IntN(6); k++ {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		vocab[i] = b.String()
	}
	out := make([]string, n)
	for i := range out {
		words := make([]string, 6+r.IntN(9))
		for k := range words {
			switch r.IntN(10) {
			case 0:
				words[k] = fmt.Sprint(r.IntN(100000))
			case 1:
				words[k] = fmt.Sprintf("10.0.%d.%d:%d", r.IntN(256), r.IntN(256), r.IntN(65536))
			default:
				words[k] = vocab[r.IntN(len(vocab))]
			}
		}
		out[i] = strings.Join(words, " ")
	}
	return out
}

func reportRate(b *testing.B, msgs []string) {
	n := 0
	for _, s := range msgs {
		n += len(s)
	}
	b.SetBytes(int64(n / len(msgs)))
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkAdd: kubewin error lines, few templates (the common case); B/op and allocs/op are
// per message.
func BenchmarkAdd(b *testing.B) {
	msgs := kubewinStream(10000)
	m := New(Config{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Add(msgs[i%len(msgs)])
	}
	reportRate(b, msgs)
}

// BenchmarkAddDistinct: nearly every message a new template, so the cluster cap evicts.
func BenchmarkAddDistinct(b *testing.B) {
	msgs := distinctStream(100000)
	m := New(Config{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Add(msgs[i%len(msgs)])
	}
	reportRate(b, msgs)
}

// BenchmarkMask: the built-in masks alone on kubewin lines.
func BenchmarkMask(b *testing.B) {
	msgs := kubewinStream(10000)
	m := New(Config{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Mask(msgs[i%len(msgs)])
	}
	reportRate(b, msgs)
}

// BenchmarkMemory100k reports the heap a Miner holds after 100,000 distinct-ish messages with
// the default cluster cap and a smaller one (one op = one miner fed the whole stream). Without a
// cap the same stream keeps ~100,000 clusters (36 MiB) and takes ~40 s: every leaf scan grows.
func BenchmarkMemory100k(b *testing.B) {
	msgs := distinctStream(100000)
	for _, c := range []struct {
		name string
		max  int
	}{{"cap4096", DefaultMaxClusters}, {"cap1024", 1024}} {
		b.Run(c.name, func(b *testing.B) {
			var heap uint64
			var m *Miner
			for i := 0; i < b.N; i++ {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				m = New(Config{MaxClusters: c.max})
				for _, s := range msgs {
					m.Add(s)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				heap = after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
				runtime.KeepAlive(m)
			}
			b.ReportMetric(float64(heap)/(1<<20), "heapMiB")
			b.ReportMetric(float64(m.Len()), "clusters")
			b.ReportMetric(float64(m.Evicted().Clusters), "evicted")
		})
	}
}
