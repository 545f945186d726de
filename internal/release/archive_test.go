package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
	"time"
)

func TestArchive(t *testing.T) {
	exe := bytes.Repeat([]byte("kubewin\x00"), 1000)
	mtime := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for _, tg := range []Target{{"linux", "amd64"}, {"windows", "amd64"}} {
		a, err := Archive(tg, exe, mtime)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Archive(tg, exe, mtime)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two archives of the same binary differ", tg)
		}
		if c, _ := Archive(tg, exe, mtime.Add(time.Hour)); bytes.Equal(a, c) {
			t.Errorf("%s: the entry time is not in the archive", tg)
		}
		var name string
		var mode int64
		var got []byte
		var mt time.Time
		if tg.OS == "windows" {
			zr, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
			if err != nil || len(zr.File) != 1 {
				t.Fatalf("zip: %v, %d files", err, len(zr.File))
			}
			f := zr.File[0]
			rc, _ := f.Open()
			got, _ = io.ReadAll(rc)
			name, mode, mt = f.Name, int64(f.Mode().Perm()), f.Modified
		} else {
			gz, err := gzip.NewReader(bytes.NewReader(a))
			if err != nil {
				t.Fatal(err)
			}
			if gz.Name != "" || !gz.ModTime.IsZero() {
				t.Errorf("gzip header carries name %q time %v", gz.Name, gz.ModTime)
			}
			tr := tar.NewReader(gz)
			h, err := tr.Next()
			if err != nil {
				t.Fatal(err)
			}
			got, _ = io.ReadAll(tr)
			if _, err := tr.Next(); err != io.EOF {
				t.Errorf("more than one entry: %v", err)
			}
			if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
				t.Errorf("owner %d:%d %q:%q", h.Uid, h.Gid, h.Uname, h.Gname)
			}
			name, mode, mt = h.Name, h.Mode, h.ModTime
		}
		if name != ExeName(tg) || mode != 0o755 || !bytes.Equal(got, exe) || !mt.Equal(mtime) {
			t.Errorf("%s: entry %q mode %o time %v, %d bytes", tg, name, mode, mt, len(got))
		}
	}
}
