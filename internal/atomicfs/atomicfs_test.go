package atomicfs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteTreeReplacesWholeDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := WriteTree(dir, []File{{Path: "a/b.txt", Data: []byte("one")}, {Path: "stale.txt", Data: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	if err := WriteTree(dir, []File{{Path: "a/b.txt", Data: []byte("two")}}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "a", "b.txt"))
	if err != nil || string(got) != "two" {
		t.Fatalf("a/b.txt = %q, %v; want two", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "stale.txt")); !os.IsNotExist(err) {
		t.Fatalf("stale.txt survived the rewrite: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Fatalf("temporary directories left behind: %v", entries)
	}
}

func TestWriteTreeFailureLeavesPreviousOutput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := WriteTree(dir, []File{{Path: "keep.txt", Data: []byte("old")}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		files []File
	}{
		{"escape", []File{{Path: "ok.txt"}, {Path: "../evil"}}},
		{"absolute", []File{{Path: "/etc/passwd"}}},
		{"duplicate", []File{{Path: "x"}, {Path: "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := WriteTree(dir, tt.files); err == nil {
				t.Fatal("WriteTree accepted a bad path")
			}
			got, err := os.ReadFile(filepath.Join(dir, "keep.txt"))
			if err != nil || string(got) != "old" {
				t.Fatalf("previous output damaged: %q, %v", got, err)
			}
			entries, _ := os.ReadDir(filepath.Dir(dir))
			if len(entries) != 1 {
				t.Fatalf("temporary directories left behind: %v", entries)
			}
		})
	}
}

func TestWriteFileAtomic(t *testing.T) {
	p := filepath.Join(t.TempDir(), "keepalived.conf")
	for _, content := range []string{"first", "second"} {
		if err := WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		if string(got) != content {
			t.Fatalf("got %q want %q", got, content)
		}
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("temp files left: %v", entries)
	}
}
