// Package nodeimage is test infrastructure for end-to-end tests that run a real containerd,
// runc and kubelet on the test machine. It is imported by tests only; nothing here is part of
// what kubewin installs on a user's node.
//
// The test machines have no image registry and no internet, so the images a node needs (the pod
// sandbox "pause" image and small workload images) are built locally: BuildStatic compiles a
// static Go program (see the pause and check subpackages), BuildImage wraps files into an OCI
// image-layout tarball, and Import loads that tarball into containerd's k8s.io namespace with
// ctr, where the CRI plugin (and so the kubelet) finds it under its reference.
//
// BuildRuncWrapper works around a property of the test sandbox (see the runcwrap subpackage):
// it lacks CAP_SYS_RESOURCE, so runc cannot apply the negative oom_score_adj the CRI gives to
// pod sandboxes.
package nodeimage

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/distribution/reference"
	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// AnnotationImageName is containerd's index annotation carrying the full image reference
// (images.AnnotationImageName in containerd). containerd's importer (both ctr's default
// transfer-service path and `ctr images import --local`) names the image after it in preference
// to org.opencontainers.image.ref.name, which by the OCI spec holds only the tag.
const AnnotationImageName = "io.containerd.image.name"

// DefaultPath is the PATH in the config of images built by BuildImage.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// epoch is the modification time of every file in the built tarballs, so that the same inputs
// give the same bytes (and so the same image digests).
var epoch = time.Unix(0, 0).UTC()

// BuildImage writes an OCI image-layout tarball into dir and returns its path. The tarball holds
// one linux image for the host architecture (linux/amd64 on the test machines), named ref in the
// index annotations, whose single uncompressed layer contains files: the key is the absolute path
// in the image, the value the host file to copy. Files the host marks executable get mode 0755,
// others 0644; missing parent directories are added with mode 0755. The image config has the
// given Entrypoint and Env PATH=DefaultPath.
//
// The output is deterministic: fixed modification times, owner root, entries sorted by path.
func BuildImage(dir, ref string, files map[string]string, entrypoint []string) (string, error) {
	named, err := reference.ParseDockerRef(ref)
	if err != nil {
		return "", fmt.Errorf("build image %q: %w", ref, err)
	}
	fullRef := named.String()
	ociRef := fullRef
	if tagged, ok := named.(reference.Tagged); ok {
		ociRef = tagged.Tag()
	}

	layer, err := buildLayer(files)
	if err != nil {
		return "", fmt.Errorf("build image %q: %w", ref, err)
	}
	layerDesc := ocispec.Descriptor{
		MediaType: ocispec.MediaTypeImageLayer,
		Digest:    digest.FromBytes(layer),
		Size:      int64(len(layer)),
	}

	platform := ocispec.Platform{OS: "linux", Architecture: runtime.GOARCH}
	config := ocispec.Image{
		Platform: platform,
		Config: ocispec.ImageConfig{
			Env:        []string{"PATH=" + DefaultPath},
			Entrypoint: entrypoint,
		},
		RootFS: ocispec.RootFS{
			Type: "layers",
			// The layer is stored uncompressed, so its diff ID is its digest.
			DiffIDs: []digest.Digest{layerDesc.Digest},
		},
	}
	configBytes, configDesc, err := marshalBlob(ocispec.MediaTypeImageConfig, config)
	if err != nil {
		return "", fmt.Errorf("build image %q: %w", ref, err)
	}

	manifest := ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageManifest,
		Config:    configDesc,
		Layers:    []ocispec.Descriptor{layerDesc},
	}
	manifestBytes, manifestDesc, err := marshalBlob(ocispec.MediaTypeImageManifest, manifest)
	if err != nil {
		return "", fmt.Errorf("build image %q: %w", ref, err)
	}
	manifestDesc.Platform = &platform
	manifestDesc.Annotations = map[string]string{
		AnnotationImageName:       fullRef,
		ocispec.AnnotationRefName: ociRef,
	}

	index := ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageIndex,
		Manifests: []ocispec.Descriptor{manifestDesc},
	}
	indexBytes, err := json.Marshal(index)
	if err != nil {
		return "", fmt.Errorf("build image %q: %w", ref, err)
	}
	layoutBytes, err := json.Marshal(ocispec.ImageLayout{Version: ocispec.ImageLayoutVersion})
	if err != nil {
		return "", fmt.Errorf("build image %q: %w", ref, err)
	}

	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(dirHeader(d)); err != nil {
			return "", fmt.Errorf("build image %q: %w", ref, err)
		}
	}
	type entry struct {
		name string
		data []byte
	}
	entries := []entry{
		{blobPath(layerDesc.Digest), layer},
		{blobPath(configDesc.Digest), configBytes},
		{blobPath(manifestDesc.Digest), manifestBytes},
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	entries = append(entries, entry{ocispec.ImageIndexFile, indexBytes}, entry{ocispec.ImageLayoutFile, layoutBytes})
	for _, e := range entries {
		if err := writeFile(tw, e.name, 0o644, e.data); err != nil {
			return "", fmt.Errorf("build image %q: %w", ref, err)
		}
	}
	if err := tw.Close(); err != nil {
		return "", fmt.Errorf("build image %q: %w", ref, err)
	}

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("build image %q: %w", ref, err)
	}
	tarPath := filepath.Join(dir, tarballName(fullRef))
	if err := os.WriteFile(tarPath, out.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("build image %q: %w", ref, err)
	}
	return tarPath, nil
}

// buildLayer returns an uncompressed tar of files (image path -> host path) with every parent
// directory, sorted by path.
func buildLayer(files map[string]string) ([]byte, error) {
	if len(files) == 0 {
		return nil, errors.New("no files for the image layer")
	}
	dirs := map[string]bool{}
	names := make([]string, 0, len(files))
	byName := map[string]string{}
	for imagePath, hostPath := range files {
		if !path.IsAbs(imagePath) {
			return nil, fmt.Errorf("image path %q is not absolute", imagePath)
		}
		name := strings.TrimPrefix(path.Clean(imagePath), "/")
		if name == "" {
			return nil, fmt.Errorf("image path %q names the root directory", imagePath)
		}
		if _, dup := byName[name]; dup {
			return nil, fmt.Errorf("image path %q given twice", imagePath)
		}
		byName[name] = hostPath
		names = append(names, name)
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for _, name := range names {
		if dirs[name] {
			return nil, fmt.Errorf("image path /%s is both a file and a parent directory", name)
		}
	}
	all := append([]string{}, names...)
	for d := range dirs {
		all = append(all, d)
	}
	sort.Strings(all)

	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	for _, name := range all {
		if dirs[name] {
			if err := tw.WriteHeader(dirHeader(name + "/")); err != nil {
				return nil, err
			}
			continue
		}
		hostPath := byName[name]
		st, err := os.Stat(hostPath)
		if err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s (for /%s) is not a regular file", hostPath, name)
		}
		data, err := os.ReadFile(hostPath)
		if err != nil {
			return nil, err
		}
		mode := int64(0o644)
		if st.Mode().Perm()&0o111 != 0 {
			mode = 0o755
		}
		if err := writeFile(tw, name, mode, data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func marshalBlob(mediaType string, v any) ([]byte, ocispec.Descriptor, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, ocispec.Descriptor{}, err
	}
	return data, ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(data), Size: int64(len(data))}, nil
}

func blobPath(d digest.Digest) string {
	return path.Join("blobs", d.Algorithm().String(), d.Encoded())
}

func dirHeader(name string) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}
}

func writeFile(tw *tar.Writer, name string, mode int64, data []byte) error {
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Mode:     mode,
		Size:     int64(len(data)),
		ModTime:  epoch,
		Format:   tar.FormatPAX,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// tarballName turns a reference into a file name: "registry.k8s.io/pause:3.10.1" becomes
// "registry.k8s.io_pause_3.10.1.tar".
func tarballName(ref string) string {
	b := []byte(ref)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-':
		default:
			b[i] = '_'
		}
	}
	return string(b) + ".tar"
}

// Import loads the image tarball tarPath into namespace k8s.io of the containerd at address
// (its gRPC socket) with ctrPath (containerd's ctr), so that the CRI plugin serves the image under
// the reference BuildImage put into the tarball. ctr's default import goes through containerd's
// transfer service, which stores the image under the io.containerd.image.name annotation and
// unpacks it into the default snapshotter (the one the CRI plugin uses). --all-platforms is not
// passed: the tarballs from BuildImage hold a single image for the host platform, which the
// default platform filter selects anyway. On failure the error carries ctr's output.
func Import(ctx context.Context, ctrPath, address, tarPath string) error {
	cmd := exec.CommandContext(ctx, ctrPath, "-n", "k8s.io", "-a", address, "images", "import", tarPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr images import %s: %w\n%s", tarPath, err, tail(out, 4000))
	}
	return nil
}

func tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
