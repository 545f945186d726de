package render

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/atomicfs"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/testgen"
)

// The 5,000-node benchmark of the core issue: testgen.Cluster(4000, 1000, 3) (4,000 Linux and
// 1,000 Windows nodes, 3 keepalived gateway groups). Target: plan + render + write under 5 s on
// the 2-core machines. Peak memory is the process's VmHWM (reset before the loop), reported as
// peak-RSS-MB; numbers go to bench/README.md.

func BenchmarkRender5000(b *testing.B) {
	c := testgen.Cluster(4000, 1000, 3)
	resetPeakRSS(b)
	b.ReportAllocs()
	cpu0 := cpuTime()
	var files, bytes int
	for b.Loop() {
		p, err := plan.New(c)
		if err != nil {
			b.Fatal(err)
		}
		fs, err := Render(p)
		if err != nil {
			b.Fatal(err)
		}
		files, bytes = len(fs), totalBytes(fs)
	}
	reportBundle(b, files, bytes, cpu0)
}

// BenchmarkRender5000Write adds writing the bundle with atomicfs.WriteTree, as `kubewin plan`
// does (temporary directory, then rename over the previous bundle).
func BenchmarkRender5000Write(b *testing.B) {
	c := testgen.Cluster(4000, 1000, 3)
	dir := filepath.Join(b.TempDir(), "out")
	resetPeakRSS(b)
	b.ReportAllocs()
	cpu0 := cpuTime()
	var files, bytes int
	for b.Loop() {
		p, err := plan.New(c)
		if err != nil {
			b.Fatal(err)
		}
		fs, err := Render(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := atomicfs.WriteTree(dir, fs); err != nil {
			b.Fatal(err)
		}
		files, bytes = len(fs), totalBytes(fs)
	}
	reportBundle(b, files, bytes, cpu0)
}

func totalBytes(fs []atomicfs.File) int {
	n := 0
	for _, f := range fs {
		n += len(f.Data)
	}
	return n
}

func reportBundle(b *testing.B, files, bytes int, cpu0 time.Duration) {
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(files), "files")
	b.ReportMetric(float64(bytes)/(1<<20), "bundle-MB")
	if hwm, ok := peakRSS(); ok {
		b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MB")
	}
}

// resetPeakRSS clears VmHWM (writing 5 to /proc/self/clear_refs) so the reported peak belongs to
// this benchmark, not to the fixtures or earlier benchmarks.
func resetPeakRSS(b *testing.B) {
	if runtime.GOOS != "linux" {
		return
	}
	runtime.GC()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("cannot reset peak RSS: %v", err)
	}
}

// peakRSS reads VmHWM from /proc/self/status, in bytes.
func peakRSS() (int64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
