package binaries

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// extracted is a file taken out of an archive: its mirror name, the entry it came from and its
// SHA-256.
type extracted struct {
	name, entry, sha256 string
}

// cleanEntry returns an archive entry's path cleaned ("./bridge" → "bridge", "bin/" → "bin"),
// refusing one that would leave the directory it is unpacked in — absolute, a drive letter, a
// backslash, or a ".." element — whether it is picked or not: such an archive is not what the
// project publishes.
func cleanEntry(name string) (string, error) {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, `\`) || (len(name) >= 2 && name[1] == ':') {
		return "", fmt.Errorf("entry %q: not a relative slash path", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", fmt.Errorf("entry %q leaves the archive's directory", name)
		}
	}
	return path.Clean(name), nil
}

// unpacker writes the picked entries of one archive below dir.
type unpacker struct {
	dir    string
	pick   func(string) (string, bool)
	limits Limits
	total  int64
	out    []extracted
}

// entry handles one archive entry: r its content, size as the header says, regular whether it
// is a plain file.
func (u *unpacker) entry(name string, regular, isDir bool, size int64, open func() (io.ReadCloser, error)) error {
	clean, err := cleanEntry(name)
	if err != nil {
		return err
	}
	if isDir || clean == "." {
		return nil
	}
	mirrorName, ok := u.pick(clean)
	if !ok {
		return nil
	}
	if !regular {
		// A link or device where a program should be: kubewin does not follow it.
		return fmt.Errorf("entry %q: not a regular file", name)
	}
	if size > u.limits.Entry {
		return fmt.Errorf("entry %q: %d bytes, more than the limit of %d", name, size, u.limits.Entry)
	}
	dst := filepath.Join(u.dir, filepath.FromSlash(mirrorName))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("entry %q: %w", name, err)
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("entry %q: %s comes from two entries (or two archives)", name, mirrorName)
	}
	if err != nil {
		return fmt.Errorf("entry %q: %w", name, err)
	}
	rc, err := open()
	if err != nil {
		f.Close()
		return fmt.Errorf("entry %q: %w", name, err)
	}
	defer rc.Close()
	h := sha256.New()
	// The header's size is not trusted: the copy stops one byte past the limits.
	n, cerr := io.Copy(io.MultiWriter(f, h), io.LimitReader(rc, min(u.limits.Entry, u.limits.Total-u.total)+1))
	if err := f.Close(); cerr == nil {
		cerr = err
	}
	if cerr != nil {
		return fmt.Errorf("entry %q: %w", name, cerr)
	}
	u.total += n
	if n > u.limits.Entry || u.total > u.limits.Total {
		return fmt.Errorf("entry %q: the archive unpacks to more than the limits (%d bytes a file, %d in all)", name, u.limits.Entry, u.limits.Total)
	}
	u.out = append(u.out, extracted{name: mirrorName, entry: clean, sha256: hex.EncodeToString(h.Sum(nil))})
	return nil
}

// unpackTarGz takes the picked entries of a gzip-compressed tar archive.
func (u *unpacker) unpackTarGz(archive string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("not gzip: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read tar: %w", err)
		}
		regular := hdr.Typeflag == tar.TypeReg || hdr.Typeflag == tar.TypeRegA //nolint:staticcheck // old tars write TypeRegA
		err = u.entry(hdr.Name, regular, hdr.Typeflag == tar.TypeDir, hdr.Size, func() (io.ReadCloser, error) { return io.NopCloser(tr), nil })
		if err != nil {
			return err
		}
	}
}

// unpackZip takes the picked entries of a zip archive.
func (u *unpacker) unpackZip(archive string) error {
	zr, err := zip.OpenReader(archive)
	if err != nil {
		return fmt.Errorf("read zip: %w", err)
	}
	defer zr.Close()
	for _, zf := range zr.File {
		mode := zf.Mode()
		size := int64(zf.UncompressedSize64)
		if zf.UncompressedSize64 > 1<<62 {
			size = 1 << 62
		}
		if err := u.entry(zf.Name, mode.IsRegular(), mode.IsDir(), size, zf.Open); err != nil {
			return err
		}
	}
	return nil
}
