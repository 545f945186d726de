package drain
import ("testing";"runtime";"time")
func TestTmpNoCap(t *testing.T) {
	msgs := distinctStream(100000)
	var before, after runtime.MemStats
	runtime.GC(); runtime.ReadMemStats(&before)
	start := time.Now()
	m := New(Config{MaxClusters: len(msgs)+1})
	for _, s := range msgs { m.Add(s) }
	el := time.Since(start)
	runtime.GC(); runtime.ReadMemStats(&after)
	t.Logf("nocap: %d clusters, %.1f MiB, %v", m.Len(), float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), el)
	runtime.KeepAlive(m)
}
