package gatewayimage

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Roots are the Debian packages whose programs the gateway runs: keepalived (the VRRP daemon)
// and util-linux (chrt, which starts keepalived with a real-time policy; see
// internal/gateway/manifests.go).
var Roots = []string{"keepalived", "util-linux"}

// Programs are the files of Roots the image carries, with every shared library they load.
var Programs = []string{"/usr/sbin/keepalived", "/usr/bin/chrt"}

// Deb is one downloaded package.
type Deb struct {
	Name, Version, Arch string
	Path                string
}

// Apt fetches Debian packages of any architecture with this machine's apt sources but with a
// state directory of its own (Dir::State::Lists, Dir::Cache under Dir), so that neither the
// host's package lists nor its dpkg architectures change: APT::Architectures adds the foreign
// architecture for these invocations only.
type Apt struct {
	// Dir holds the package lists and the downloaded .debs (per architecture); it is a cache
	// kept between builds (the Debian packages are then fetched once per machine).
	Dir string
	Log io.Writer
}

func (a Apt) opts(arch string) []string {
	return []string{
		"-o", "Dir::State::Lists=" + filepath.Join(a.Dir, "lists"),
		"-o", "Dir::Cache=" + filepath.Join(a.Dir, "cache"),
		// Lists of every architecture the image has, always: an update for fewer would drop
		// the others' lists. The native architecture is the one asked about, so that
		// dependencies resolve to its packages.
		"-o", "APT::Architecture=" + arch,
		"-o", "APT::Architectures::=amd64",
		"-o", "APT::Architectures::=arm64",
		// root downloads into a directory _apt cannot write to; do not warn about it.
		"-o", "APT::Sandbox::User=root",
		"-o", "Debug::NoLocking=1",
	}
}

func (a Apt) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, tailString(stderr.String(), 2000))
	}
	return out, nil
}

// Update fetches the package lists (of both architectures) when there are none yet.
func (a Apt) Update(ctx context.Context, arch string) error {
	lists := filepath.Join(a.Dir, "lists")
	have := true
	for _, a := range []string{"amd64", "arm64"} {
		if m, _ := filepath.Glob(filepath.Join(lists, "*binary-"+a+"_Packages*")); len(m) == 0 {
			have = false
		}
	}
	if have {
		return nil
	}
	for _, d := range []string{filepath.Join(lists, "partial"), filepath.Join(a.Dir, "cache", "archives", "partial")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("apt state: %w", err)
		}
	}
	if _, err := a.run(ctx, a.Dir, append(append([]string{"apt-get", "-q"}, a.opts(arch)...), "update")...); err != nil {
		return fmt.Errorf("apt-get update for %s: %w", arch, err)
	}
	return nil
}

// Closure lists the packages the roots depend on, recursively (Depends and Pre-Depends; no
// Recommends), and the roots: the candidates for the libraries the programs load. Programs that
// only maintainer scripts or other programs need are left out (notRuntime): nothing in the image
// runs them, and the image takes only the ELF closure of Programs from the rest anyway.
func (a Apt) Closure(ctx context.Context, arch string, roots []string) ([]string, error) {
	args := append([]string{"apt-cache"}, a.opts(arch)...)
	args = append(args, "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
		"--no-breaks", "--no-replaces", "--no-enhances")
	for _, r := range roots {
		args = append(args, r+":"+arch)
	}
	out, err := a.run(ctx, a.Dir, args...)
	if err != nil {
		return nil, fmt.Errorf("dependencies of %v (%s): %w", roots, arch, err)
	}
	return closureFromDepends(out, roots), nil
}

// notRuntime are packages of keepalived's and util-linux's dependency closure (Debian 12) whose
// files no ELF file of Programs loads: package tools, perl, iproute2 and data files.
var notRuntime = map[string]bool{
	"debconf": true, "cdebconf": true, "dpkg": true, "perl": true, "perl-base": true, "tar": true,
	"install-info": true, "init-system-helpers": true, "usrmerge": true, "usr-is-merged": true,
	"iproute2": true, "pci.ids": true, "readline-common": true, "libsnmp-base": true,
	"libsensors-config": true, "libfile-find-rule-perl": true, "libnumber-compare-perl": true,
	"libtext-glob-perl": true, "libdebian-installer4": true, "libnewt0.52": true, "libslang2": true,
	"libtextwrap1": true, "libaudit-common": true, "libtirpc-common": true, "dconf": true,
	// the alternative to libsystemd0 for libsystemd.so.0 (Depends: libsystemd0 | libelogind0);
	// Debian installs the first.
	"libelogind0": true,
}

// closureFromDepends picks the package names from `apt-cache depends --recurse` output: the
// unindented lines are the packages of the closure ("name" or "name:arch"; virtual packages in
// angle brackets are skipped).
func closureFromDepends(out []byte, roots []string) []string {
	keep := map[string]bool{}
	for _, r := range roots {
		keep[r] = true
	}
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" || line[0] == ' ' || strings.HasPrefix(line, "<") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSpace(line), ":")
		if !notRuntime[name] && !strings.HasPrefix(name, "perl-modules-") {
			keep[name] = true
		}
	}
	names := make([]string, 0, len(keep))
	for n := range keep {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Download fetches the packages for arch into Dir/debs/arch (once: a .deb already there is
// reused) and returns them sorted by name.
func (a Apt) Download(ctx context.Context, arch string, names []string) ([]Deb, error) {
	dir := filepath.Join(a.Dir, "debs", arch)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("deb cache: %w", err)
	}
	have := func() (map[string]Deb, error) {
		m := map[string]Deb{}
		files, err := filepath.Glob(filepath.Join(dir, "*.deb"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			// apt names a download <name>_<version with ':' as %3a>_<arch>.deb
			parts := strings.Split(strings.TrimSuffix(filepath.Base(f), ".deb"), "_")
			if len(parts) != 3 {
				continue
			}
			m[parts[0]] = Deb{Name: parts[0], Version: strings.ReplaceAll(parts[1], "%3a", ":"), Arch: parts[2], Path: f}
		}
		return m, nil
	}
	got, err := have()
	if err != nil {
		return nil, fmt.Errorf("deb cache: %w", err)
	}
	var missing []string
	for _, n := range names {
		if _, ok := got[n]; !ok {
			missing = append(missing, n+":"+arch)
		}
	}
	if len(missing) > 0 {
		if a.Log != nil {
			fmt.Fprintf(a.Log, "downloading %d Debian packages for %s\n", len(missing), arch)
		}
		if _, err := a.run(ctx, dir, append(append([]string{"apt-get", "-q"}, a.opts(arch)...), append([]string{"download"}, missing...)...)...); err != nil {
			return nil, fmt.Errorf("download Debian packages for %s: %w", arch, err)
		}
		if got, err = have(); err != nil {
			return nil, fmt.Errorf("deb cache: %w", err)
		}
	}
	debs := make([]Deb, 0, len(names))
	for _, n := range names {
		d, ok := got[n]
		if !ok {
			return nil, fmt.Errorf("Debian package %s:%s not downloaded", n, arch)
		}
		debs = append(debs, d)
	}
	return debs, nil
}

// fsEntry is a file or symlink of an extracted package.
type fsEntry struct {
	pkg    string
	mode   int64
	data   []byte
	link   string // symlink target, when a symlink
	isLink bool
}

// rootfs is the union of the packages' files by absolute path.
type rootfs map[string]*fsEntry

// extract adds the files and symlinks of deb (data.tar, through dpkg-deb, which reads every
// compression Debian uses) to fs.
func extract(ctx context.Context, deb Deb, fs rootfs) error {
	cmd := exec.CommandContext(ctx, "dpkg-deb", "--fsys-tarfile", deb.Path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("dpkg-deb --fsys-tarfile %s: %w\n%s", deb.Path, err, stderr.String())
	}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", deb.Path, err)
		}
		name := path.Clean("/" + h.Name)
		switch h.Typeflag {
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				return fmt.Errorf("read %s of %s: %w", name, deb.Path, err)
			}
			fs[name] = &fsEntry{pkg: deb.Name, mode: h.Mode & 0o777, data: data}
		case tar.TypeSymlink:
			fs[name] = &fsEntry{pkg: deb.Name, isLink: true, link: h.Linkname}
		case tar.TypeLink:
			if target, ok := fs[path.Clean("/"+h.Linkname)]; ok {
				fs[name] = &fsEntry{pkg: deb.Name, mode: target.mode, data: target.data}
			}
		}
	}
}

// resolve follows symlinks (at most 40, as the kernel does) to a regular file.
func (fs rootfs) resolve(p string) (string, *fsEntry, error) {
	for i := 0; i < 40; i++ {
		e, ok := fs[p]
		if !ok {
			// a parent directory may be the symlink (/lib64 -> /usr/lib64 style)
			return "", nil, fmt.Errorf("%s is in none of the packages", p)
		}
		if !e.isLink {
			return p, e, nil
		}
		if path.IsAbs(e.link) {
			p = path.Clean(e.link)
		} else {
			p = path.Join(path.Dir(p), e.link)
		}
	}
	return "", nil, fmt.Errorf("%s: too many symlinks", p)
}

func tailString(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// DefaultAptDir is the package cache the release build and the tests share:
// $KUBEWIN_APT_CACHE, else <user cache dir>/kubewin/apt (~/.cache/kubewin/apt).
func DefaultAptDir() (string, error) {
	if d := os.Getenv("KUBEWIN_APT_CACHE"); d != "" {
		return d, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("apt cache: %w", err)
	}
	return filepath.Join(c, "kubewin", "apt"), nil
}
