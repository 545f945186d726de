// Package atomicfs writes files and whole directory trees so that a reader sees either the old
// content or the new content, never a half-written mix: everything is written beside the target
// and moved into place with rename(2).
package atomicfs

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// File is one file of a tree, addressed by a slash-separated path relative to the tree root.
type File struct {
	Path string
	Data []byte
	Mode os.FileMode
}

// WriteFile replaces path with data atomically (temp file in the same directory + rename).
func WriteFile(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	defer os.Remove(name) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err := os.Chmod(name, mode); err != nil {
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return nil
}

// WriteTree replaces directory dir with exactly files. The tree is built in a sibling temporary
// directory; only when every file is written is it renamed over dir (the previous dir, if any,
// is moved aside first and removed afterwards). On error nothing at dir changes.
func WriteTree(dir string, files []File) error {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", parent, err)
	}
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("output %s exists and is not a directory", dir)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".new-*")
	if err != nil {
		return fmt.Errorf("create temporary output beside %s: %w", dir, err)
	}
	committed := false
	defer func() {
		if !committed {
			os.RemoveAll(tmp)
		}
	}()
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	for i, f := range sorted {
		if err := checkRelative(f.Path); err != nil {
			return err
		}
		if i > 0 && sorted[i-1].Path == f.Path {
			return fmt.Errorf("output file %s given twice", f.Path)
		}
		p := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("create directory for %s: %w", f.Path, err)
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		if err := os.WriteFile(p, f.Data, mode); err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
	}
	var old string
	if _, err := os.Lstat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("move previous %s aside: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			_ = os.Rename(old, dir) // put the previous output back
		}
		return fmt.Errorf("move new output into %s: %w", dir, err)
	}
	committed = true
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("remove previous output %s: %w", old, err)
		}
	}
	return nil
}

func checkRelative(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return fmt.Errorf("output path %q must be relative and slash-separated", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." || part == "." || part == "" {
			return fmt.Errorf("output path %q must not contain empty, . or .. elements", p)
		}
	}
	return nil
}
