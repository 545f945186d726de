package join

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kubewin/kubewin/internal/atomicfs"
)

// Host is the operating-system side of the join steps; the steps themselves (discovery,
// planning, waiting for the Node) are shared. Linux implements it here; the Windows host layer
// (HNS through hcn, services through the service control manager) is issue 13's.
type Host interface {
	// OS is "linux" or "windows" (the spec's node OS).
	OS() string
	// Facts are this machine's name and the NIC it reaches server through.
	Facts(ctx context.Context, server string) (Facts, error)
	// InstallService installs and starts the kubewin node service, which supervises the
	// container runtime, the kubelet and kube-proxy from the manifest join writes.
	InstallService(ctx context.Context) (Change, error)
}

// Facts are what a node knows about itself and the cluster description needs.
type Facts struct {
	Hostname string `json:"hostname"`
	NIC      NIC    `json:"nic"`
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
			if st, err := os.Stat(f.Path); err == nil && st.Mode().Perm() == f.Mode.Perm() {
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

// Binaries is where join takes the node's binaries from: a local directory with a SHA256SUMS
// file (sha256sum's format). Every file join installs must be listed there and match; nothing
// is fetched from the internet.
type Binaries struct {
	Dir string
}

// readSums parses SHA256SUMS ("<hex>  <name>" per line, "*" before binary-mode names).
func (b Binaries) readSums() (map[string]string, error) {
	path := filepath.Join(b.Dir, "SHA256SUMS")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--binaries %s: %w (every binary join installs is checked against it)", b.Dir, err)
	}
	return parseSums(path, data)
}

func parseSums(path string, data []byte) (map[string]string, error) {
	sums := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, name, ok := strings.Cut(line, " ")
		name = strings.TrimPrefix(strings.TrimSpace(name), "*")
		if _, err := hex.DecodeString(sum); !ok || err != nil || len(sum) != 64 || name == "" {
			return nil, fmt.Errorf("%s:%d: expected \"<64 hex digits>  <file name>\"", path, i+1)
		}
		sums[name] = strings.ToLower(sum)
	}
	return sums, nil
}

// install copies name (a path relative to Dir, e.g. "cni/bridge") to dst after checking its
// checksum; an identical dst is left alone.
func (b Binaries) install(sums map[string]string, name, dst string) (Change, error) {
	want, ok := sums[name]
	if !ok {
		return Change{}, fmt.Errorf("--binaries %s: SHA256SUMS does not list %s", b.Dir, name)
	}
	src := filepath.Join(b.Dir, filepath.FromSlash(name))
	got, err := fileSHA256(src)
	if err != nil {
		return Change{}, fmt.Errorf("--binaries: %w", err)
	}
	if got != want {
		return Change{}, fmt.Errorf("--binaries: %s has sha256 %s, SHA256SUMS says %s", src, got, want)
	}
	if cur, err := fileSHA256(dst); err == nil && cur == want {
		return Change{What: dst, Action: ActionUnchanged}, nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return Change{}, fmt.Errorf("--binaries: %w", err)
	}
	ch, err := writeFiles([]File{{Path: dst, Data: data, Mode: 0o755}})
	if err != nil {
		return Change{}, err
	}
	return ch[0], nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func sortedChanges(cs []Change) []Change {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].What < cs[j].What })
	return cs
}
