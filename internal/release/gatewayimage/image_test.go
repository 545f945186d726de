package gatewayimage

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// buildTiny compiles a small static Go program for linux/arch: a stand-in for kubewin that
// keeps this test from compiling kubewin twice (the release test and the gateway e2e run the
// real one).
func buildTiny(t *testing.T, dir, arch string) string {
	t.Helper()
	src := filepath.Join(dir, "tiny")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module tiny\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() { println(\"tiny\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "tiny-"+arch)
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch, "GOFLAGS=", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", arch, err, b)
	}
	return out
}

func TestBuildImage(t *testing.T) {
	aptDir, err := DefaultAptDir()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	kw := map[string]string{"amd64": buildTiny(t, work, "amd64"), "arm64": buildTiny(t, work, "arm64")}
	created := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	o := Options{Ref: "example.test/kubewin-gateway:v0.0.1", Version: "v0.0.1", Commit: "abc123", Created: created,
		Source: "https://github.com/kubewin/kubewin", Kubewin: kw, Apt: Apt{Dir: aptDir}}
	ctx := context.Background()
	a, b := filepath.Join(work, "a.oci.tar"), filepath.Join(work, "b.oci.tar")
	ra, err := Build(ctx, o, a)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := Build(ctx, o, b)
	if err != nil {
		t.Fatal(err)
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) || ra.Digest != rb.Digest {
		t.Fatalf("two builds of the same inputs differ: %s (%d bytes) vs %s (%d bytes)", ra.Digest, len(da), rb.Digest, len(db))
	}
	t.Logf("image %s: %d bytes; base layer (uncompressed) %v; packages amd64 %v", ra.Digest, len(da), ra.BaseBytes, ra.Packages["amd64"])

	// Read the archive back as an OCI layout.
	dir := filepath.Join(work, "layout")
	untar(t, da, dir)
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	topm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	byDigest := "example.test/kubewin-gateway@" + ra.Digest
	if len(topm.Manifests) != 2 || topm.Manifests[0].Digest.String() != ra.Digest || topm.Manifests[1].Digest.String() != ra.Digest ||
		topm.Manifests[0].Annotations[AnnotationImageName] != o.Ref || topm.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v0.0.1" ||
		topm.Manifests[1].Annotations[AnnotationImageName] != byDigest || topm.Manifests[1].Annotations["org.opencontainers.image.ref.name"] != "" {
		t.Fatalf("index.json = %+v, want the index %s named %s (tag v0.0.1) and %s", topm.Manifests, ra.Digest, o.Ref, byDigest)
	}
	idx, err := top.ImageIndex(topm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.Annotations["org.opencontainers.image.revision"] != "abc123" || im.Annotations["org.opencontainers.image.version"] != "v0.0.1" ||
		im.Annotations["org.opencontainers.image.source"] != o.Source {
		t.Errorf("index annotations %v lack source/version/revision", im.Annotations)
	}
	if len(im.Manifests) != 2 {
		t.Fatalf("index has %d manifests, want amd64 and arm64", len(im.Manifests))
	}
	wantMachine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	for _, m := range im.Manifests {
		arch := m.Platform.Architecture
		if m.Platform.OS != "linux" || ra.Images[arch] != m.Digest.String() {
			t.Errorf("manifest %s platform %+v, built %v", m.Digest, m.Platform, ra.Images)
		}
		img, err := idx.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != arch || cf.OS != "linux" || cf.Config.Labels["org.opencontainers.image.revision"] != "abc123" ||
			!cf.Created.Time.Equal(created) || strings.Join(cf.Config.Entrypoint, " ") != KubewinPath {
			t.Errorf("%s config: arch %s os %s created %v entrypoint %v labels %v", arch, cf.Architecture, cf.OS, cf.Created, cf.Config.Entrypoint, cf.Config.Labels)
		}
		files := imageFiles(t, img)
		kwWant, _ := os.ReadFile(kw[arch])
		if !bytes.Equal(files[KubewinPath], kwWant) {
			t.Errorf("%s: %s is not the given binary", arch, KubewinPath)
		}
		// Every ELF file's interpreter and DT_NEEDED libraries are in the image, for the
		// image's architecture: keepalived and chrt can start.
		for _, prog := range Programs {
			if files[prog] == nil {
				t.Fatalf("%s: %s missing", arch, prog)
			}
		}
		for name, data := range files {
			f, err := elf.NewFile(bytes.NewReader(data))
			if err != nil {
				continue
			}
			if f.Machine != wantMachine[arch] {
				t.Errorf("%s: %s is for %s", arch, name, f.Machine)
			}
			needed, _ := f.ImportedLibraries()
			for _, lib := range needed {
				if !hasLib(files, lib) {
					t.Errorf("%s: %s needs %s, not in the image", arch, name, lib)
				}
			}
			for _, ph := range f.Progs {
				if ph.Type == elf.PT_INTERP {
					b, _ := io.ReadAll(ph.Open())
					if interp := strings.TrimRight(string(b), "\x00"); files[interp] == nil {
						t.Errorf("%s: %s's interpreter %s not in the image", arch, name, interp)
					}
				}
			}
			f.Close()
		}
		if files["/usr/share/doc/keepalived/copyright"] == nil {
			t.Errorf("%s: keepalived's copyright file missing", arch)
		}
		if !strings.Contains(strings.Join(ra.Packages[arch], " "), "libsystemd0=") {
			t.Errorf("%s: libsystemd.so.0 not from libsystemd0: %v", arch, ra.Packages[arch])
		}
		if files["/bin/sh"] != nil || files["/usr/bin/dpkg"] != nil {
			t.Errorf("%s: the base carries a shell or dpkg", arch)
		}
	}
}

func hasLib(files map[string][]byte, lib string) bool {
	for _, d := range []string{"/lib/x86_64-linux-gnu/", "/usr/lib/x86_64-linux-gnu/", "/lib/aarch64-linux-gnu/", "/usr/lib/aarch64-linux-gnu/", "/lib/", "/usr/lib/"} {
		if files[d+lib] != nil {
			return true
		}
	}
	return false
}

// imageFiles flattens the image's layers (regular files only; these layers hold no
// whiteouts).
func imageFiles(t *testing.T, img v1.Image) map[string][]byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Uid != 0 || h.Gid != 0 {
				t.Errorf("%s owned by %d:%d", h.Name, h.Uid, h.Gid)
			}
			if h.Typeflag == tar.TypeReg {
				b, _ := io.ReadAll(tr)
				files["/"+h.Name] = b
			}
		}
		rc.Close()
	}
	return files
}

func untar(t *testing.T, data []byte, dir string) {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestClosureFromDepends(t *testing.T) {
	out := []byte("keepalived:arm64\n  Depends: libc6:arm64\n  Depends: <perl:any>\nlibc6:arm64\n  Depends: libgcc-s1:arm64\n<debconf-2.0>\ndebconf\nperl-base:arm64\nlibgcc-s1:arm64\nutil-linux:arm64\n")
	got := closureFromDepends(out, Roots)
	want := []string{"keepalived", "libc6", "libgcc-s1", "util-linux"} // debconf, perl-base: not run
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("closure = %v, want %v", got, want)
	}
}
