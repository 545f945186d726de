package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"hash"
	"time"
)

func newSHA256() hash.Hash { return sha256.New() }

// Archive packs the executable exe (its bytes) for t into the archive format of t's OS, with
// every varying field fixed so that the same binary gives the same archive bytes: the entry's
// modification time is mtime (the commit's time), owner root (uid/gid 0, no names), mode 0755,
// and the gzip header carries no name and no time.
func Archive(t Target, exe []byte, mtime time.Time) ([]byte, error) {
	if t.OS == "windows" {
		return zipArchive(ExeName(t), exe, mtime)
	}
	return tarGzArchive(ExeName(t), exe, mtime)
}

func tarGzArchive(name string, exe []byte, mtime time.Time) ([]byte, error) {
	var out bytes.Buffer
	gz, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("gzip %s: %w", name, err)
	}
	tw := tar.NewWriter(gz)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Mode:     0o755,
		Size:     int64(len(exe)),
		ModTime:  mtime.UTC().Truncate(time.Second),
		Format:   tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("tar %s: %w", name, err)
	}
	if _, err := tw.Write(exe); err != nil {
		return nil, fmt.Errorf("tar %s: %w", name, err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("tar %s: %w", name, err)
	}
	if err := gz.Close(); err != nil {
		return nil, fmt.Errorf("gzip %s: %w", name, err)
	}
	return out.Bytes(), nil
}

func zipArchive(name string, exe []byte, mtime time.Time) ([]byte, error) {
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	// zip stores local (DOS) times from 1980 on; a commit is never older.
	fh := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: mtime.UTC().Truncate(time.Second)}
	fh.SetMode(0o755)
	w, err := zw.CreateHeader(fh)
	if err != nil {
		return nil, fmt.Errorf("zip %s: %w", name, err)
	}
	if _, err := w.Write(exe); err != nil {
		return nil, fmt.Errorf("zip %s: %w", name, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("zip %s: %w", name, err)
	}
	return out.Bytes(), nil
}
