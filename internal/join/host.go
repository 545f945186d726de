package join

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/kubewin/kubewin/internal/atomicfs"
	"github.com/kubewin/kubewin/internal/binaries"
	"github.com/kubewin/kubewin/internal/plan"
)

// Host is the operating-system side of the join steps; the steps themselves (discovery,
// planning, waiting for the Node) are shared. A Linux host is a LinuxNodeHost (host_linux.go);
// a Windows host is a *WindowsHost, whose HNS, service and firewall work goes through
// winnode.Host.
type Host interface {
	// OS is "linux" or "windows" (the spec's node OS).
	OS() string
	// Facts are this machine's name and the NIC it reaches server through.
	Facts(ctx context.Context, server string) (Facts, error)
}

// LinuxNodeHost is what the join steps need from a Linux machine besides its facts.
type LinuxNodeHost interface {
	Host
	// InstallService installs and starts the kubewin node service, which supervises the
	// container runtime, the kubelet and kube-proxy from the manifest join writes.
	InstallService(ctx context.Context) (Change, error)
	// EnsureRoutes makes the routes exist (added or corrected; others are left alone).
	EnsureRoutes(ctx context.Context, routes []plan.Route) ([]Change, error)
	// Kernel is where the node's sysctls and modules are (DefaultLinuxSystem on a node).
	Kernel() LinuxSystem
}

// Facts are what a node knows about itself and the cluster description needs.
type Facts struct {
	Hostname string `json:"hostname"`
	NIC      NIC    `json:"nic"`
	// WindowsBuild is the OS build of a Windows host ("10.0.20348"), the cluster
	// description's node windowsBuild.
	WindowsBuild string `json:"windowsBuild,omitempty"`
}

// NIC is the interface the node reaches the API server through (its cluster NIC).
type NIC struct {
	Name   string `json:"name"`
	MAC    string `json:"mac,omitempty"`
	IP     string `json:"ip"`
	Prefix int    `json:"prefix"`
}

// Change is what a step did to one thing on the node or in the cluster.
type Change struct {
	What   string `json:"what"`
	Action string `json:"action"`
}

// Change actions.
const (
	ActionCreated   = "created"
	ActionUpdated   = "updated"
	ActionUnchanged = "unchanged"
	// ActionSkipped: join left it to someone else (the text says who).
	ActionSkipped = "skipped"
)

// File is one file a step puts on the node (an absolute path).
type File struct {
	Path string
	Data []byte
	Mode os.FileMode
}

// writeFiles puts files in place atomically (temp file + rename) and leaves files whose content
// and mode are already right untouched, so a second join changes nothing.
func writeFiles(files []File) ([]Change, error) {
	var out []Change
	for _, f := range files {
		old, err := os.ReadFile(f.Path)
		if err == nil && bytes.Equal(old, f.Data) {
			// Windows has no permission bits: os.Stat reports 0666 (0444 read-only) whatever
			// was asked (Go src/os/types_windows.go, fileStat.Mode), so there only the content
			// counts (the ACLs are join's own step).
			if st, err := os.Stat(f.Path); err == nil && (runtime.GOOS == "windows" || st.Mode().Perm() == f.Mode.Perm()) {
				out = append(out, Change{What: f.Path, Action: ActionUnchanged})
				continue
			}
		}
		action := ActionCreated
		if err == nil {
			action = ActionUpdated
		}
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
			return out, fmt.Errorf("create directory for %s: %w", f.Path, err)
		}
		if err := atomicfs.WriteFile(f.Path, f.Data, f.Mode); err != nil {
			return out, fmt.Errorf("write %s: %w", f.Path, err)
		}
		if err := os.Chmod(f.Path, f.Mode); err != nil {
			return out, fmt.Errorf("chmod %s: %w", f.Path, err)
		}
		out = append(out, Change{What: f.Path, Action: action})
	}
	return out, nil
}

// Binaries is where join takes the node's binaries from: a local directory or an https base
// URL (a mirror), holding a SHA256SUMS file in sha256sum's format; or, with Source
// "official:kubernetes=V,containerd=V,cni=V[,<component>-release-url=URL]" (binaries.ParseOfficial),
// the projects' own release layouts, which resolve turns into such a mirror below the node's
// data directory after checking every download against its published checksums. Every file join
// installs must be listed in the SHA256SUMS and match; nothing else is fetched, and the internet
// only if Source says so.
type Binaries struct {
	Source string
	// Client fetches from an https Source or the release hosts (default: 30 s per request).
	Client *http.Client
}

// resolve returns the mirror join installs from and its SHA256SUMS. A mirror Source is itself.
// The official layouts are built into a mirror in cacheParent (binaries.CacheDir: one per
// versions, hosts and platform), holding what a goos node installs (keep); a second join finds
// it there and downloads nothing. Errors wrapping ErrBadInput are the value's: a malformed
// official value, a version or checksum file the host does not publish, a mirror without
// SHA256SUMS.
func (b Binaries) resolve(ctx context.Context, goos, arch, cacheParent string, keep func(string) bool) (Binaries, map[string]string, error) {
	if !binaries.IsOfficial(b.Source) {
		sums, err := b.readSums(ctx)
		if err != nil {
			return b, nil, fmt.Errorf("%w: %v", ErrBadInput, err)
		}
		return b, sums, nil
	}
	o, err := binaries.ParseOfficial(b.Source)
	if err != nil {
		return b, nil, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	dir := binaries.CacheDir(cacheParent, o, goos, arch)
	if sums, err := binaries.ReadSums(dir); err == nil {
		return Binaries{Source: dir}, sums, nil
	}
	req := binaries.Request{Official: o, OSes: []string{goos}, Arch: arch, Keep: keep, Client: b.Client}
	if _, err := binaries.Build(ctx, req, dir); err != nil {
		if errors.Is(err, binaries.ErrNotFound) {
			err = fmt.Errorf("%w: %v", ErrBadInput, err)
		}
		return b, nil, fmt.Errorf("--binaries %s: %w", o, err)
	}
	// The mirrors of earlier versions are not needed: the binaries are installed copies.
	if old, err := filepath.Glob(filepath.Join(cacheParent, binaries.CachePrefix+"*")); err == nil {
		for _, d := range old {
			if d != dir {
				os.RemoveAll(d)
			}
		}
	}
	sums, err := binaries.ReadSums(dir)
	if err != nil {
		return b, nil, fmt.Errorf("--binaries %s: %w", o, err)
	}
	return Binaries{Source: dir}, sums, nil
}

func (b Binaries) remote() bool { return strings.HasPrefix(b.Source, "https://") }

// open returns the named file (a slash path relative to Source).
func (b Binaries) open(ctx context.Context, name string) (io.ReadCloser, error) {
	if !b.remote() {
		return os.Open(filepath.Join(b.Source, filepath.FromSlash(name)))
	}
	u := strings.TrimSuffix(b.Source, "/") + "/" + name
	c := b.Client
	if c == nil {
		// Bounds on connecting and on the server's first answer, none on the body: a kubelet of
		// 100 MB over a slow link takes as long as it takes (the join's context still ends it).
		c = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   30 * time.Second,
			ResponseHeaderTimeout: 30 * time.Second,
		}}
	}
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		switch {
		case err != nil:
			last = err
		case resp.StatusCode == http.StatusOK:
			return resp.Body, nil
		default:
			resp.Body.Close()
			last = fmt.Errorf("GET %s: %s", u, resp.Status)
			if resp.StatusCode < 500 {
				return nil, last
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt+1) * time.Second):
		}
	}
	return nil, last
}

// readSums reads and parses SHA256SUMS.
func (b Binaries) readSums(ctx context.Context) (map[string]string, error) {
	if strings.HasPrefix(b.Source, "http://") {
		// The sums would come over the same unauthenticated channel as the binaries they
		// check: whoever can change one can change both.
		return nil, fmt.Errorf("--binaries %s: plain http is not accepted (the binaries and their SHA256SUMS would be unauthenticated); use https", b.Source)
	}
	rc, err := b.open(ctx, "SHA256SUMS")
	if err != nil {
		return nil, fmt.Errorf("--binaries %s: %w (every binary join installs is checked against its SHA256SUMS)", b.Source, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("--binaries %s: read SHA256SUMS: %w", b.Source, err)
	}
	return binaries.ParseSums(b.Source+"/SHA256SUMS", data)
}

// install puts name (e.g. "cni/bridge") at dst after checking its checksum: it is streamed to a
// temporary file beside dst, hashed on the way, and renamed into place only when it matches. An
// identical dst is left alone.
func (b Binaries) install(ctx context.Context, sums map[string]string, name, dst string) (Change, error) {
	return b.installWith(ctx, sums, name, dst, os.Rename)
}

// installWith is install with replace putting the verified temporary file at dst.
func (b Binaries) installWith(ctx context.Context, sums map[string]string, name, dst string, replace func(tmp, dst string) error) (Change, error) {
	want, ok := sums[name]
	if !ok {
		return Change{}, fmt.Errorf("--binaries %s: SHA256SUMS does not list %s", b.Source, name)
	}
	if cur, err := binaries.FileSHA256(dst); err == nil && cur == want {
		return Change{What: dst, Action: ActionUnchanged}, nil
	}
	action := ActionCreated
	if _, err := os.Stat(dst); err == nil {
		action = ActionUpdated
	}
	rc, err := b.open(ctx, name)
	if err != nil {
		return Change{}, fmt.Errorf("--binaries: %w", err)
	}
	defer rc.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return Change{}, fmt.Errorf("create directory for %s: %w", dst, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*")
	if err != nil {
		return Change{}, fmt.Errorf("install %s: %w", dst, err)
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	_, cerr := io.Copy(io.MultiWriter(tmp, h), rc)
	if err := tmp.Close(); cerr == nil {
		cerr = err
	}
	if cerr != nil {
		return Change{}, fmt.Errorf("install %s from %s: %w", dst, b.Source, cerr)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return Change{}, fmt.Errorf("--binaries: %s has sha256 %s, SHA256SUMS says %s; nothing installed", name, got, want)
	}
	if err := os.Chmod(tmp.Name(), 0o755); err != nil {
		return Change{}, fmt.Errorf("install %s: %w", dst, err)
	}
	if err := replace(tmp.Name(), dst); err != nil {
		return Change{}, fmt.Errorf("install %s: %w", dst, err)
	}
	return Change{What: dst, Action: action}, nil
}

func sortedChanges(cs []Change) []Change {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].What < cs[j].What })
	return cs
}
