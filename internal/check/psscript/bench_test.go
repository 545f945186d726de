package psscript

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkEvaluateUpstream evaluates the real scripts in testdata/upstream (about 2,000 lines
// of PowerShell, branches and embedded scripts included) once per operation.
func BenchmarkEvaluateUpstream(b *testing.B) {
	files, _ := filepath.Glob(fieldScripts)
	var srcs []string
	size := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, string(data))
		size += len(data)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range srcs {
			Evaluate(s)
		}
	}
}
