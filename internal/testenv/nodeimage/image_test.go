package nodeimage

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// readTar returns the regular files of a tarball by name, and all entry names in order.
func readTar(t *testing.T, data []byte) (map[string][]byte, []string, map[string]*tar.Header) {
	t.Helper()
	files := map[string][]byte{}
	headers := map[string]*tar.Header{}
	var names []string
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
		headers[hdr.Name] = hdr
		if hdr.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[hdr.Name] = b
		}
	}
	return files, names, headers
}

func TestBuildImage(t *testing.T) {
	src := t.TempDir()
	exe := filepath.Join(src, "exe")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho hi\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(src, "data")
	if err := os.WriteFile(data, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"/usr/local/bin/check": exe, "/etc/check.conf": data}

	out1, out2 := t.TempDir(), t.TempDir()
	p1, err := BuildImage(out1, "kubewin.test/check:1", files, []string{"/usr/local/bin/check", "-v"})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := BuildImage(out2, "kubewin.test/check:1", files, []string{"/usr/local/bin/check", "-v"})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p1) != "kubewin.test_check_1.tar" || filepath.Dir(p1) != out1 {
		t.Errorf("tarball path %s", p1)
	}
	b1, err := os.ReadFile(p1)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := os.ReadFile(p2)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1, b2) {
		t.Error("two builds of the same image differ")
	}

	blobs, _, _ := readTar(t, b1)
	for name, b := range blobs {
		if dir, enc := filepath.Split(name); dir == "blobs/sha256/" && digest.FromBytes(b).Encoded() != enc {
			t.Errorf("blob %s has digest %s", name, digest.FromBytes(b))
		}
	}
	var layout ocispec.ImageLayout
	mustUnmarshal(t, blobs["oci-layout"], &layout)
	if layout.Version != ocispec.ImageLayoutVersion {
		t.Errorf("oci-layout version %q", layout.Version)
	}
	var index ocispec.Index
	mustUnmarshal(t, blobs["index.json"], &index)
	if len(index.Manifests) != 1 {
		t.Fatalf("index has %d manifests", len(index.Manifests))
	}
	md := index.Manifests[0]
	if got := md.Annotations[AnnotationImageName]; got != "kubewin.test/check:1" {
		t.Errorf("%s = %q", AnnotationImageName, got)
	}
	if got := md.Annotations[ocispec.AnnotationRefName]; got != "1" {
		t.Errorf("%s = %q", ocispec.AnnotationRefName, got)
	}
	if md.Platform == nil || md.Platform.OS != "linux" || md.Platform.Architecture != runtime.GOARCH {
		t.Errorf("manifest platform %+v", md.Platform)
	}
	var manifest ocispec.Manifest
	mustUnmarshal(t, blobs["blobs/sha256/"+md.Digest.Encoded()], &manifest)
	var config ocispec.Image
	mustUnmarshal(t, blobs["blobs/sha256/"+manifest.Config.Digest.Encoded()], &config)
	if got := config.Config.Entrypoint; len(got) != 2 || got[0] != "/usr/local/bin/check" || got[1] != "-v" {
		t.Errorf("entrypoint %q", got)
	}
	if got := config.Config.Env; len(got) != 1 || got[0] != "PATH="+DefaultPath {
		t.Errorf("env %q", got)
	}
	if len(manifest.Layers) != 1 || len(config.RootFS.DiffIDs) != 1 || config.RootFS.DiffIDs[0] != manifest.Layers[0].Digest {
		t.Fatalf("layers %+v, diff IDs %v", manifest.Layers, config.RootFS.DiffIDs)
	}

	layerFiles, names, headers := readTar(t, blobs["blobs/sha256/"+manifest.Layers[0].Digest.Encoded()])
	want := []string{"etc/", "etc/check.conf", "usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/check"}
	if len(names) != len(want) {
		t.Fatalf("layer entries %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("layer entries %q, want %q", names, want)
		}
	}
	if headers["usr/local/bin/check"].Mode != 0o755 || headers["etc/check.conf"].Mode != 0o644 || headers["usr/"].Mode != 0o755 {
		t.Errorf("modes: check %o, conf %o, usr %o", headers["usr/local/bin/check"].Mode, headers["etc/check.conf"].Mode, headers["usr/"].Mode)
	}
	if string(layerFiles["etc/check.conf"]) != "hello" {
		t.Errorf("etc/check.conf = %q", layerFiles["etc/check.conf"])
	}
	if !headers["etc/check.conf"].ModTime.Equal(epoch) || headers["etc/check.conf"].Uid != 0 {
		t.Errorf("header %+v", headers["etc/check.conf"])
	}
}

func TestBuildImageNormalizesRef(t *testing.T) {
	src := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(src, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := BuildImage(t.TempDir(), "busybox", map[string]string{"/f": src}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	blobs, _, _ := readTar(t, b)
	var index ocispec.Index
	mustUnmarshal(t, blobs["index.json"], &index)
	if got := index.Manifests[0].Annotations[AnnotationImageName]; got != "docker.io/library/busybox:latest" {
		t.Errorf("%s = %q", AnnotationImageName, got)
	}
}

func TestBuildImageErrors(t *testing.T) {
	src := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(src, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		ref   string
		files map[string]string
	}{
		"bad ref":         {"no spaces/in refs:x", map[string]string{"/f": src}},
		"no files":        {"x/y:1", nil},
		"relative path":   {"x/y:1", map[string]string{"f": src}},
		"root":            {"x/y:1", map[string]string{"/": src}},
		"missing file":    {"x/y:1", map[string]string{"/f": src + ".missing"}},
		"file and parent": {"x/y:1", map[string]string{"/a": src, "/a/b": src}},
		"not regular":     {"x/y:1", map[string]string{"/d": filepath.Dir(src)}},
	} {
		if _, err := BuildImage(t.TempDir(), tc.ref, tc.files, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func mustUnmarshal(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}
