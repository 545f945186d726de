package diagnose

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/bench/diagnose/mixgen"
)

// naiveMatches is the reference for foldScanner: every (overlapping) occurrence of every key in
// b, compared byte by byte after ASCII folding, or exactly for exact keys.
func naiveMatches(keys []string, exact []bool, b []byte) []int {
	fold := func(s []byte) []byte {
		out := make([]byte, len(s))
		for i, c := range s {
			out[i] = foldASCII(c)
		}
		return out
	}
	fb := fold(b)
	var got []int
	for ki, k := range keys {
		hay, needle := fb, fold([]byte(k))
		if exact[ki] {
			hay, needle = b, []byte(k)
		}
		for i := 0; i+len(k) <= len(b); i++ {
			if bytes.Equal(hay[i:i+len(k)], needle) {
				got = append(got, ki)
			}
		}
	}
	slices.Sort(got)
	return got
}

func scannerMatches(t testing.TB, m *foldScanner, b []byte) []int {
	t.Helper()
	got := m.appendMatches(nil, b)
	slices.Sort(got)
	return got
}

func TestFoldScanner(t *testing.T) {
	keys := []string{"rror", "Unable to find H", "ailed", "]: E", ": E0", "hcnCreateLoadBalancer", "a", "aa", "ü-Grün", "[ERROR]"}
	exact := []bool{false, false, false, true, true, false, false, false, false, false}
	m, err := newFoldScanner(keys, exact)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"unable to find HNS Network specified by cbr0", []string{"Unable to find H", "a"}},
		{"UNABLE TO FIND hns", []string{"Unable to find H", "a"}},
		{"ERROR: HCNCREATELOADBALANCER FAILED", []string{"rror", "hcnCreateLoadBalancer", "a", "a", "a", "a", "a", "ailed"}},
		{"kubelet[12]: E0101 x", []string{"]: E", ": E0"}},
		{"kubelet[12]: e0101 x", nil},
		{"aaa", []string{"a", "a", "a", "aa", "aa"}},
		{"ü-grün [error]", []string{"ü-Grün", "[ERROR]", "rror"}},
		{"Ü-grün", nil}, // only ASCII letters fold
		{"", nil},
	} {
		var want []int
		for _, w := range tc.want {
			want = append(want, slices.Index(keys, w))
		}
		slices.Sort(want)
		if got := scannerMatches(t, m, []byte(tc.line)); !slices.Equal(got, want) {
			t.Errorf("%q: got keys %v, want %v", tc.line, got, want)
		}
		if ref := naiveMatches(keys, exact, []byte(tc.line)); !slices.Equal(ref, want) {
			t.Errorf("%q: reference disagrees with the table: %v", tc.line, ref)
		}
	}
	if _, err := newFoldScanner([]string{"Abc", "aBC"}, []bool{false, false}); err == nil || !strings.Contains(err.Error(), "fold to the same") {
		t.Errorf("keys equal after folding: got %v, want an error", err)
	}
	if _, err := newFoldScanner([]string{""}, []bool{false}); err == nil {
		t.Error("empty key accepted")
	}
}

// TestFoldScannerCatalogue runs the catalogue's own prefilter over the benchmark mix's lines
// and the seed logs against the naive reference.
func TestFoldScannerCatalogue(t *testing.T) {
	cat := mustCatalogue(t)
	m := cat.scanner
	var buf bytes.Buffer
	writeMix(t, &buf, 1<<20)
	n := 0
	for ln := range bytes.Lines(buf.Bytes()) {
		ln = bytes.TrimRight(ln, "\n")
		if got, want := scannerMatches(t, m, ln), naiveMatches(m.keys, m.exact, ln); !slices.Equal(got, want) {
			t.Fatalf("line %q: scanner %v, reference %v", ln, got, want)
		}
		n++
	}
	if n < 5000 {
		t.Fatalf("only %d lines in the mix", n)
	}
}

// writeMix writes size bytes of the benchmark mix (bench/diagnose/mixgen, seed 1).
func writeMix(t testing.TB, w io.Writer, size int64) {
	t.Helper()
	if err := mixgen.Write(w, size, 1, 0); err != nil {
		t.Fatal(err)
	}
}

func FuzzFoldScanner(f *testing.F) {
	for _, s := range []string{"unable to find HNS", "kubelet[1]: E0101", "RRORrror", "aaaa", "\xff\xfeÜü"} {
		f.Add(s, "rror", "]: E", "aa")
	}
	f.Fuzz(func(t *testing.T, line, k1, k2, k3 string) {
		var keys []string
		var exact []bool
		seen := map[string]bool{}
		for i, k := range []string{k1, k2, k3} {
			fb := []byte(k)
			for j := range fb {
				fb[j] = foldASCII(fb[j])
			}
			fk := string(fb)
			if k == "" || seen[fk] {
				continue
			}
			seen[fk] = true
			keys = append(keys, k)
			exact = append(exact, i == 1)
		}
		if len(keys) == 0 {
			return
		}
		m, err := newFoldScanner(keys, exact)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := scannerMatches(t, m, []byte(line)), naiveMatches(keys, exact, []byte(line)); !slices.Equal(got, want) {
			t.Fatalf("line %q keys %q: scanner %v, reference %v", line, keys, got, want)
		}
	})
}
