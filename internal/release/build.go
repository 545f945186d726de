package release

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Options say what to build and where.
type Options struct {
	// Version is the release's version: a semantic version with a leading v (krew requires one).
	Version string
	// Commit is stamped into the binaries and names the SBOM; CommitTime fixes every timestamp
	// (archive entries, the SBOM's creation time, the image's created field).
	Commit     string
	CommitTime time.Time
	// ModuleDir is the repository root (go.mod); OutDir the release directory to write.
	ModuleDir, OutDir string
	Targets           []Target
	// BaseURL is where the release is published (the krew manifest's archive URIs).
	BaseURL string
	// Env is added to the go command's environment (GOCACHE, GOPATH, ...), after the fixed
	// settings, which it cannot override.
	Env []string
	Log io.Writer
}

// Result is what Build wrote.
type Result struct {
	// Binaries is the path of each target's binary in OutDir.
	Binaries map[Target]string
	Files    []string
}

var semverRE = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// ValidVersion reports whether v is a release version: semver 2.0 with a leading v.
func ValidVersion(v string) error {
	if !semverRE.MatchString(v) {
		return fmt.Errorf("version %q: want a semantic version with a leading v (v1.2.3, v0.1.0-rc.1)", v)
	}
	return nil
}

// GoBuildArgs are the go build arguments of a release binary. Reproducible: -trimpath drops
// the build machine's paths, -buildvcs=false keeps the work tree's state out (the commit is
// stamped explicitly), -buildid= empties the linker's build ID (which hashes inputs that
// include paths), -s -w drop the symbol table and DWARF (panics still have file:line, from
// pclntab).
func GoBuildArgs(version, commit, out string) []string {
	return []string{"build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -buildid= -X main.version=" + version + " -X main.commit=" + commit,
		"-o", out, "./cmd/kubewin"}
}

// goEnv is the fixed environment of a release build: no cgo (static binaries, no C toolchain),
// the baseline instruction sets, and none of the caller's GOFLAGS or experiments.
func goEnv(t Target, extra []string) []string {
	env := append([]string{}, os.Environ()...)
	env = append(env, extra...)
	return append(env, "CGO_ENABLED=0", "GOOS="+t.OS, "GOARCH="+t.Arch, "GOFLAGS=", "GOEXPERIMENT=",
		"GOAMD64=v1", "GOARM64=v8.0", "GOTOOLCHAIN=local")
}

// BuildBinary compiles kubewin for t into out.
func BuildBinary(ctx context.Context, o Options, t Target, out string) error {
	cmd := exec.CommandContext(ctx, "go", GoBuildArgs(o.Version, o.Commit, out)...)
	cmd.Dir = o.ModuleDir
	cmd.Env = goEnv(t, o.Env)
	var outb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &outb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build kubewin for %s: %w\n%s", t, err, outb.String())
	}
	return nil
}

// Build writes the release into o.OutDir: the binaries, their archives, the SBOM and the krew
// manifest. SHA256SUMS is written by WriteSums once every file (the image too) is there.
func Build(ctx context.Context, o Options) (*Result, error) {
	if err := ValidVersion(o.Version); err != nil {
		return nil, err
	}
	if o.Commit == "" || o.CommitTime.IsZero() || len(o.Targets) == 0 {
		return nil, fmt.Errorf("release: commit, commit time and targets are required")
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	res := &Result{Binaries: map[Target]string{}}
	infos := map[Target]*debug.BuildInfo{}
	archiveSums := map[Target]string{}
	for _, t := range o.Targets {
		began := time.Now()
		bin := filepath.Join(o.OutDir, BinaryName(t))
		if err := BuildBinary(ctx, o, t, bin); err != nil {
			return nil, err
		}
		exe, err := os.ReadFile(bin)
		if err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
		bi, err := buildinfo.Read(bytes.NewReader(exe))
		if err != nil {
			return nil, fmt.Errorf("release: build info of %s: %w", bin, err)
		}
		infos[t] = bi
		arc, err := Archive(t, exe, o.CommitTime)
		if err != nil {
			return nil, err
		}
		arcName := ArchiveName(o.Version, t)
		if err := os.WriteFile(filepath.Join(o.OutDir, arcName), arc, 0o644); err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
		h := newSHA256()
		h.Write(arc)
		archiveSums[t] = fmt.Sprintf("%x", h.Sum(nil))
		res.Binaries[t] = bin
		res.Files = append(res.Files, BinaryName(t), arcName)
		fmt.Fprintf(logw, "built %s: %s (%d bytes), %s (%d bytes) in %s\n", t, BinaryName(t), len(exe), arcName, len(arc), time.Since(began).Round(time.Second))
	}
	sbom, err := SBOM(o.Version, o.Commit, o.CommitTime, infos)
	if err != nil {
		return nil, err
	}
	krew, err := KrewManifest(o.Version, o.BaseURL, o.Targets, archiveSums)
	if err != nil {
		return nil, err
	}
	for name, data := range map[string][]byte{SBOMName(o.Version): sbom, KrewManifestName: krew} {
		if err := os.WriteFile(filepath.Join(o.OutDir, name), data, 0o644); err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
		res.Files = append(res.Files, name)
	}
	return res, nil
}

// GitCommit returns HEAD's hash and commit time in dir, with "-dirty" appended to the hash
// when tracked files differ from HEAD (a release of a dirty tree names itself so).
func GitCommit(ctx context.Context, dir string) (string, time.Time, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "log", "-1", "--format=%H %ct").Output()
	if err != nil {
		return "", time.Time{}, fmt.Errorf("git log in %s: %w", dir, err)
	}
	hash, ts, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	sec, perr := strconv.ParseInt(ts, 10, 64)
	if !ok || perr != nil {
		return "", time.Time{}, fmt.Errorf("git log in %s: unexpected %q", dir, out)
	}
	if err := exec.CommandContext(ctx, "git", "-C", dir, "diff", "--quiet", "HEAD", "--").Run(); err != nil {
		hash += "-dirty"
	}
	return hash, time.Unix(sec, 0).UTC(), nil
}
