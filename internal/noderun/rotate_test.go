package noderun

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRotatingWriter(t *testing.T) {
	tests := []struct {
		name      string
		maxBytes  int64
		maxFiles  int
		writes    []string
		wantFiles map[string]string // file name -> content
	}{
		{
			name:     "keeps maxFiles backups, newest in .1",
			maxBytes: 10,
			maxFiles: 2,
			writes:   []string{"line-0001\n", "line-0002\n", "line-0003\n", "line-0004\n", "line-0005\n"},
			wantFiles: map[string]string{
				"svc.log":   "line-0005\n",
				"svc.log.1": "line-0004\n",
				"svc.log.2": "line-0003\n",
			},
		},
		{
			name:     "fills a file before rotating",
			maxBytes: 12,
			maxFiles: 3,
			writes:   []string{"aaaa", "bbbb", "cccc", "dddd"},
			wantFiles: map[string]string{
				"svc.log":   "dddd",
				"svc.log.1": "aaaabbbbcccc",
			},
		},
		{
			name:     "a write that does not fit starts a new file whole",
			maxBytes: 10,
			maxFiles: 3,
			writes:   []string{"line1\n", "line2\n", "line3\n"},
			wantFiles: map[string]string{
				"svc.log":   "line3\n",
				"svc.log.1": "line2\n",
				"svc.log.2": "line1\n",
			},
		},
		{
			name:     "splits a write larger than a file",
			maxBytes: 4,
			maxFiles: 5,
			writes:   []string{"0123456789"},
			wantFiles: map[string]string{
				"svc.log":   "89",
				"svc.log.1": "4567",
				"svc.log.2": "0123",
			},
		},
		{
			name:     "a write larger than a file splits after a line",
			maxBytes: 12,
			maxFiles: 3,
			writes:   []string{"aaaa\nbbbb\ncccc\n"},
			wantFiles: map[string]string{
				"svc.log":   "cccc\n",
				"svc.log.1": "aaaa\nbbbb\n",
			},
		},
		{
			name:     "no backups",
			maxBytes: 4,
			maxFiles: 0,
			writes:   []string{"abcd", "ef"},
			wantFiles: map[string]string{
				"svc.log": "ef",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := openRotating(filepath.Join(dir, "svc.log"), tc.maxBytes, tc.maxFiles)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			checkFiles(t, dir, tc.wantFiles)
		})
	}
}

func TestRotatingWriterAppendsToExisting(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "svc.log")
	if err := os.WriteFile(p, []byte("before restart\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	w, err := openRotating(p, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	// 15 bytes are already there, so 10 more do not fit and rotate the old content away.
	fmt.Fprint(w, "after-001\n")
	w.Close()
	checkFiles(t, dir, map[string]string{"svc.log": "after-001\n", "svc.log.1": "before restart\n"})
}

// checkNames asserts dir holds exactly the named files.
func checkNames(t *testing.T, dir string, want ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
}

// checkFiles asserts dir holds exactly the files in want, with their content.
func checkFiles(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got, wantNames []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	for n := range want {
		wantNames = append(wantNames, n)
	}
	slices.Sort(wantNames)
	if !slices.Equal(got, wantNames) {
		t.Fatalf("files %v, want %v", got, wantNames)
	}
	for n, content := range want {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != content {
			t.Errorf("%s = %q, want %q", n, data, content)
		}
	}
}

func TestLineTail(t *testing.T) {
	var lt lineTail
	for i := 1; i <= 25; i++ {
		fmt.Fprintf(&lt, "line %d\r\n", i)
	}
	lt.Write([]byte("partial " + strings.Repeat("x", 1000)))
	got := lt.lines()
	if len(got) != tailLines {
		t.Fatalf("kept %d lines, want %d", len(got), tailLines)
	}
	if got[0] != "line 7" || got[18] != "line 25" {
		t.Errorf("kept %q ... %q, want line 7 ... line 25", got[0], got[18])
	}
	if last := got[19]; !strings.HasPrefix(last, "partial xxx") || len(last) != tailLineMax {
		t.Errorf("unterminated last line %d bytes %.20q, want %d bytes starting with partial", len(last), last, tailLineMax)
	}
}
