package srcmsg

import (
	"runtime"
	"testing"
)

// heapOfLoad is the live heap a loaded index holds, measured around Load with forced collections.
func heapOfLoad(t testing.TB) (uint64, *Index) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix := loadIndex(t)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if after.HeapAlloc < before.HeapAlloc {
		return 0, ix
	}
	return after.HeapAlloc - before.HeapAlloc, ix
}

// TestIndexMemory holds the loaded index under its budget: it is loaded once per scan, beside the
// scanner's own state.
func TestIndexMemory(t *testing.T) {
	heap, ix := heapOfLoad(t)
	t.Logf("index: %d entries, %d patterns, %.1f MiB live heap", ix.Len(), ix.Patterns(), float64(heap)/(1<<20))
	if heap > 30<<20 {
		t.Errorf("loaded index holds %d bytes of heap, budget 30 MiB", heap)
	}
	runtime.KeepAlive(ix)
}

func BenchmarkLoad(b *testing.B) {
	cpu0, cpuOK := processCPU()
	for i := 0; i < b.N; i++ {
		if _, err := Load(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if cpu1, ok := processCPU(); ok && cpuOK && cpu1 > cpu0 {
		b.ReportMetric(float64((cpu1-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	}
}

// BenchmarkMatch runs the tuning corpus's error lines (prefixes stripped) through Match; the
// README reports messages per second from it.
func BenchmarkMatch(b *testing.B) {
	ix := loadIndex(b)
	lines := readCorpus(b, "../../../testdata/diagnose-field/errors.tsv")
	msgs := make([]string, len(lines))
	for i, l := range lines {
		msgs[i] = stripPrefix(l)
	}
	b.ReportAllocs()
	cpu0, cpuOK := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix.Match(msgs[i%len(msgs)])
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	if cpu1, ok := processCPU(); ok && cpuOK && cpu1 > cpu0 {
		b.ReportMetric(float64(b.N)/(cpu1-cpu0).Seconds(), "msgs/cpu-s")
	}
}
