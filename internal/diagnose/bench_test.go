package diagnose

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubewin/kubewin/bench/diagnose/mixgen"
)

// BenchmarkScan measures end-to-end throughput on the benchmark mix (bench/diagnose runs the
// same mix at 1 GiB against ripgrep).
func BenchmarkScan(b *testing.B) {
	const size = 32 << 20
	p := filepath.Join(b.TempDir(), "mix.log")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	if err := mixgen.Write(f, size, 1, 0); err != nil {
		b.Fatal(err)
	}
	f.Close()
	cat := mustCatalogue(b)
	for _, workers := range []int{1, 2} {
		b.Run(map[int]string{1: "workers=1", 2: "workers=2"}[workers], func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				r := Scan(context.Background(), cat, []string{p}, nil, Options{Workers: workers})
				if len(r.Findings) == 0 {
					b.Fatal("no findings")
				}
			}
		})
	}
}

func BenchmarkParseKlog(b *testing.B) {
	line := []byte(`E0425 01:27:31.053862    8064 proxier.go:1231] Policy creation failed: hcnCreateLoadBalancer failed in Win32: The specified port already exists. (0x803b0013)`)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, ok := ParseKlog(line); !ok {
			b.Fatal("not parsed")
		}
	}
}
