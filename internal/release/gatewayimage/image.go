// Package gatewayimage builds the kubewin gateway image (the DaemonSets of
// cluster/gateway-<group>.yaml run it) without a container daemon: kubewin, keepalived and chrt on
// a base of only the files they need, taken from Debian's packages for each architecture, written
// with go-containerregistry as an OCI image layout in a tar, with an index over linux/amd64 and
// linux/arm64. It is the release's builder (hack/release.sh) and the end-to-end test's
// (internal/join TestGatewayPodEndToEnd).
//
// The base holds keepalived and chrt, every shared library they load (followed through
// DT_NEEDED from the ELF files, resolved in the packages' library directories, as the dynamic
// loader does), the loader itself (PT_INTERP) and the copyright file of every package a file
// came from. No shell, no package manager: `kubectl exec` into the pod runs kubewin only.
//
// Same inputs (the kubewin binaries, the .deb files, version, commit and time) give the same
// bytes: entries sorted, fixed times and owners, gzip without names or times.
package gatewayimage

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// KubewinPath is where the image has kubewin (on PATH: the manifests run `kubewin gateway …`).
const KubewinPath = "/usr/bin/kubewin"

// Path is the image's PATH.
const Path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// AnnotationImageName is containerd's index annotation naming the image on import
// (images.AnnotationImageName in containerd); org.opencontainers.image.ref.name holds the tag.
const AnnotationImageName = "io.containerd.image.name"

// Options say what goes into the image.
type Options struct {
	// Ref names the image in the archive's index.json (registry/name:tag).
	Ref string
	// Version, Commit and Created become the OCI labels and the config's created time.
	Version, Commit string
	Created         time.Time
	Source          string
	// Kubewin is the linux kubewin binary by architecture (amd64, arm64); one image per entry.
	Kubewin map[string]string
	Apt     Apt
	Log     io.Writer
}

// Result describes the written archive.
type Result struct {
	// Digest is the image index's digest: the reference to pin (name@sha256:…).
	Digest string
	// Images are the per-architecture manifests' digests, and Packages the Debian packages
	// (name=version) files came from, by architecture.
	Images   map[string]string
	Packages map[string][]string
	// BaseBytes is the size of the uncompressed Debian layer by architecture.
	BaseBytes map[string]int64
}

// triplets are Debian's multiarch library directories (https://wiki.debian.org/Multiarch/Tuples).
var triplets = map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}

// Build writes the image archive to out.
func Build(ctx context.Context, o Options, out string) (*Result, error) {
	if len(o.Kubewin) == 0 {
		return nil, fmt.Errorf("gateway image: no kubewin binary")
	}
	arches := make([]string, 0, len(o.Kubewin))
	for a := range o.Kubewin {
		if _, ok := triplets[a]; !ok {
			return nil, fmt.Errorf("gateway image: architecture %q: want amd64 or arm64", a)
		}
		arches = append(arches, a)
	}
	sort.Strings(arches)
	labels := map[string]string{
		"org.opencontainers.image.source":      o.Source,
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.revision":    o.Commit,
		"org.opencontainers.image.created":     o.Created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.title":       "kubewin-gateway",
		"org.opencontainers.image.description": "kubewin gateway: kubewin, keepalived and chrt (Debian packages)",
	}
	res := &Result{Images: map[string]string{}, Packages: map[string][]string{}, BaseBytes: map[string]int64{}}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arch := range arches {
		img, pkgs, baseSize, err := buildArch(ctx, o, arch, labels)
		if err != nil {
			return nil, err
		}
		d, err := img.Digest()
		if err != nil {
			return nil, fmt.Errorf("gateway image %s: %w", arch, err)
		}
		res.Images[arch], res.Packages[arch], res.BaseBytes[arch] = d.String(), pkgs, baseSize
		p := &v1.Platform{OS: "linux", Architecture: arch}
		if arch == "arm64" {
			p.Variant = "v8"
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	idx = mutate.Annotations(idx, labels).(v1.ImageIndex)
	d, err := idx.Digest()
	if err != nil {
		return nil, fmt.Errorf("gateway image index: %w", err)
	}
	res.Digest = d.String()

	tmp, err := os.MkdirTemp(filepath.Dir(out), ".oci-layout-")
	if err != nil {
		return nil, fmt.Errorf("gateway image: %w", err)
	}
	defer os.RemoveAll(tmp)
	lp, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return nil, fmt.Errorf("gateway image layout: %w", err)
	}
	repo, tag := o.Ref, ""
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo, tag = repo[:i], repo[i+1:]
	}
	// Two names for the one index: name:tag, and name@digest, which is what containerd records
	// when it pulls an image by digest. With both, `ctr images import` on an air-gapped node
	// serves a DaemonSet whose image is pinned by digest (name:tag@sha256:…, which the CRI
	// looks up as name@sha256:…) without trying a registry. Tools that pick an image by
	// org.opencontainers.image.ref.name (skopeo oci-archive:FILE:TAG) see the tag only.
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		AnnotationImageName:                 o.Ref,
		"org.opencontainers.image.ref.name": tag,
	})); err != nil {
		return nil, fmt.Errorf("gateway image layout: %w", err)
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		AnnotationImageName: repo + "@" + res.Digest,
	})); err != nil {
		return nil, fmt.Errorf("gateway image layout: %w", err)
	}
	if err := tarDir(tmp, out); err != nil {
		return nil, fmt.Errorf("gateway image archive: %w", err)
	}
	return res, nil
}

// buildArch makes the image of one architecture: the Debian base layer, then kubewin.
func buildArch(ctx context.Context, o Options, arch string, labels map[string]string) (v1.Image, []string, int64, error) {
	unlock, err := o.Apt.lock()
	if err != nil {
		return nil, nil, 0, err
	}
	defer unlock()
	if err := o.Apt.Update(ctx, arch); err != nil {
		return nil, nil, 0, err
	}
	names, err := o.Apt.Closure(ctx, arch, Roots)
	if err != nil {
		return nil, nil, 0, err
	}
	debs, err := o.Apt.Download(ctx, arch, names)
	if err != nil {
		return nil, nil, 0, err
	}
	fs := rootfs{}
	versions := map[string]string{}
	for _, d := range debs {
		if err := extract(ctx, d, fs); err != nil {
			return nil, nil, 0, err
		}
		versions[d.Name] = d.Version
	}
	files, err := elfClosure(fs, arch, Programs)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("gateway image %s: %w", arch, err)
	}
	used := map[string]bool{}
	for _, f := range files {
		used[f.pkg] = true
	}
	var pkgs []string
	for p := range used {
		pkgs = append(pkgs, p+"="+versions[p])
		// Debian's copyright file: the licences of what the image redistributes.
		if c, ok := fs["/usr/share/doc/"+p+"/copyright"]; ok && !c.isLink {
			files["/usr/share/doc/"+p+"/copyright"] = c
		}
	}
	sort.Strings(pkgs)
	base, err := layerTar(files, o.Created)
	if err != nil {
		return nil, nil, 0, err
	}
	kw, err := os.ReadFile(o.Kubewin[arch])
	if err != nil {
		return nil, nil, 0, fmt.Errorf("gateway image %s: %w", arch, err)
	}
	if err := checkELF(kw, arch); err != nil {
		return nil, nil, 0, fmt.Errorf("gateway image %s: kubewin %s: %w", arch, o.Kubewin[arch], err)
	}
	top, err := layerTar(map[string]*fsEntry{KubewinPath: {mode: 0o755, data: kw}}, o.Created)
	if err != nil {
		return nil, nil, 0, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, l := range []struct {
		data []byte
		by   string
	}{
		{base, "debian packages " + strings.Join(pkgs, " ")},
		{top, "kubewin " + o.Version},
	} {
		layer, err := tarball.LayerFromOpener(opener(l.data), tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("gateway image %s layer: %w", arch, err)
		}
		img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
			History: v1.History{Created: v1.Time{Time: o.Created.UTC()}, CreatedBy: l.by, Comment: "kubewin gatewayimage"}})
		if err != nil {
			return nil, nil, 0, fmt.Errorf("gateway image %s: %w", arch, err)
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, nil, 0, fmt.Errorf("gateway image %s config: %w", arch, err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	if arch == "arm64" {
		cf.Variant = "v8"
	}
	cf.Created = v1.Time{Time: o.Created.UTC()}
	cf.Config.Entrypoint = []string{KubewinPath}
	cf.Config.Env = []string{"PATH=" + Path}
	cf.Config.Labels = labels
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, nil, 0, fmt.Errorf("gateway image %s config: %w", arch, err)
	}
	img = mutate.Annotations(img, labels).(v1.Image)
	return img, pkgs, int64(len(base)), nil
}

func opener(b []byte) tarball.Opener {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
}

// elfClosure collects the programs and, transitively, the shared libraries each ELF file
// needs and its interpreter, by the path the loader looks them up at.
func elfClosure(fs rootfs, arch string, programs []string) (map[string]*fsEntry, error) {
	trip := triplets[arch]
	dirs := []string{"/lib/" + trip, "/usr/lib/" + trip, "/lib", "/usr/lib"}
	out := map[string]*fsEntry{}
	queue := append([]string{}, programs...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if _, done := out[p]; done {
			continue
		}
		_, e, err := fs.resolve(p)
		if err != nil {
			return nil, err
		}
		out[p] = e
		f, err := elf.NewFile(bytes.NewReader(e.data))
		if err != nil {
			return nil, fmt.Errorf("%s (package %s): %w", p, e.pkg, err)
		}
		if err := checkMachine(f, arch); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s (package %s): %w", p, e.pkg, err)
		}
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				b, err := io.ReadAll(prog.Open())
				if err != nil {
					f.Close()
					return nil, fmt.Errorf("%s: interpreter: %w", p, err)
				}
				queue = append(queue, strings.TrimRight(string(b), "\x00"))
			}
		}
		needed, err := f.ImportedLibraries()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: DT_NEEDED: %w", p, err)
		}
		for _, lib := range needed {
			found := ""
			for _, d := range dirs {
				if _, _, err := fs.resolve(path.Join(d, lib)); err == nil {
					found = path.Join(d, lib)
					break
				}
			}
			if found == "" {
				return nil, fmt.Errorf("%s needs %s, which none of the packages has in %v", p, lib, dirs)
			}
			queue = append(queue, found)
		}
	}
	return out, nil
}

var machines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

func checkMachine(f *elf.File, arch string) error {
	if f.Machine != machines[arch] {
		return fmt.Errorf("ELF machine %s, want %s for %s", f.Machine, machines[arch], arch)
	}
	return nil
}

func checkELF(b []byte, arch string) error {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return err
	}
	defer f.Close()
	return checkMachine(f, arch)
}

// layerTar writes files (and their parent directories) as an uncompressed tar, sorted by path,
// owned by root, with mtime t.
func layerTar(files map[string]*fsEntry, t time.Time) ([]byte, error) {
	dirs := map[string]bool{}
	for p := range files {
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	type ent struct {
		name string
		dir  bool
	}
	var ents []ent
	for d := range dirs {
		ents = append(ents, ent{strings.TrimPrefix(d, "/") + "/", true})
	}
	for p := range files {
		ents = append(ents, ent{strings.TrimPrefix(p, "/"), false})
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].name < ents[j].name })
	mt := t.UTC().Truncate(time.Second)
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, ModTime: mt, Format: tar.FormatPAX}
		var data []byte
		if e.dir {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		} else {
			f := files["/"+e.name]
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(f.data))
			if f.mode&0o111 != 0 {
				h.Mode = 0o755
			}
			data = f.data
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer %s: %w", e.name, err)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, fmt.Errorf("layer %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return b.Bytes(), nil
}

// tarDir writes the OCI layout in dir as a tar at out: entries sorted, owner root, time zero
// (the layout's own files carry no time of their own to keep).
func tarDir(dir, out string) error {
	var names []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, n := range names {
		info, err := os.Lstat(filepath.Join(dir, n))
		if err != nil {
			f.Close()
			return err
		}
		h := &tar.Header{Name: n, ModTime: time.Unix(0, 0).UTC(), Mode: 0o644, Typeflag: tar.TypeReg, Size: info.Size(), Format: tar.FormatUSTAR}
		if info.IsDir() {
			h.Name, h.Mode, h.Typeflag, h.Size = n+"/", 0o755, tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			f.Close()
			return err
		}
		if !info.IsDir() {
			data, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				f.Close()
				return err
			}
			if _, err := tw.Write(data); err != nil {
				f.Close()
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
