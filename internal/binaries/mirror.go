package binaries

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// SourcesFile records where each file of a mirror came from and what it was checked against.
const SourcesFile = "SOURCES"

// Request is what a mirror holds: o's components for each of OSes on Arch.
type Request struct {
	Official Official
	OSes     []string
	Arch     string
	// Keep, when set, chooses the files by mirror name ("kubelet", "cni/bridge"): join takes
	// only what it installs. A Kubernetes program not kept is not downloaded.
	Keep func(name string) bool
	// Client defaults to DefaultClient(); Limits to DefaultLimits.
	Client *http.Client
	Limits *Limits
}

// File is one file of a mirror.
type File struct {
	// Name is its slash path in the mirror, as SHA256SUMS lists it.
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	// From is the URL it was downloaded from, with "!<entry>" when taken out of an archive;
	// Checked the published checksum files the download matched.
	From    string   `json:"from"`
	Checked []string `json:"checked"`
}

// Build downloads what req names from the official layouts, checks each download against every
// checksum published beside it, takes the programs out of the archives and makes dir a mirror:
// those files, SHA256SUMS (sha256sum's format, sorted by name) and SOURCES. The same request
// makes the same bytes. The mirror is assembled in a temporary directory beside dir and renamed
// into place only when complete, so a failure leaves dir as it was; an existing dir is replaced
// only if it is empty or a mirror (holds SHA256SUMS).
func Build(ctx context.Context, req Request, dir string) ([]File, error) {
	if err := req.Check(dir); err != nil {
		return nil, err
	}
	o, _ := req.Official.Normalize()
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".new-*")
	if err != nil {
		return nil, fmt.Errorf("create a temporary directory beside %s: %w", dir, err)
	}
	committed := false
	defer func() {
		if !committed {
			os.RemoveAll(tmp)
		}
	}()
	f := fetcher{client: req.Client, limits: DefaultLimits()}
	if f.client == nil {
		f.client = DefaultClient()
	}
	if req.Limits != nil {
		f.limits = *req.Limits
	}
	keep := req.Keep
	if keep == nil {
		keep = func(string) bool { return true }
	}
	var files []File
	for _, goos := range req.OSes {
		for _, a := range o.artifacts(goos, req.Arch) {
			got, err := fetchArtifact(ctx, f, a, keep, tmp)
			if err != nil {
				return nil, err
			}
			files = append(files, got...)
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	var sums, sources strings.Builder
	for _, fl := range files {
		fmt.Fprintf(&sums, "%s  %s\n", fl.SHA256, fl.Name)
		fmt.Fprintf(&sources, "%s  %s  %s\n", fl.Name, fl.From, strings.Join(fl.Checked, " "))
	}
	if err := os.WriteFile(filepath.Join(tmp, SumsFile), []byte(sums.String()), 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", SumsFile, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, SourcesFile), []byte(sources.String()), 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", SourcesFile, err)
	}
	if err := swapIn(tmp, dir); err != nil {
		return nil, err
	}
	committed = true
	return files, nil
}

// Check reports what is wrong with req and the output directory before anything is
// downloaded: the versions and hosts, the platforms, a dir that is not a mirror.
func (req Request) Check(dir string) error {
	if _, err := req.Official.Normalize(); err != nil {
		return err
	}
	if len(req.OSes) == 0 {
		return errors.New("no operating system: name linux, windows or both")
	}
	for i, goos := range req.OSes {
		if err := checkPlatform(goos, req.Arch); err != nil {
			return err
		}
		if slices.Contains(req.OSes[:i], goos) {
			return fmt.Errorf("operating system %s named twice", goos)
		}
	}
	return replaceable(filepath.Clean(dir))
}

// fetchArtifact downloads a into tmp (a program as its mirror name, an archive to a scratch
// file that is removed after its programs are taken out) and returns the mirror files it made.
func fetchArtifact(ctx context.Context, f fetcher, a artifact, keep func(string) bool, tmp string) ([]File, error) {
	if a.archive == "" && !keep(a.mirrorName) {
		return nil, nil
	}
	want, err := f.published(ctx, a)
	if err != nil {
		return nil, err
	}
	var checked []string
	for _, c := range a.sums {
		checked = append(checked, c.url)
	}
	if a.archive == "" {
		dst := filepath.Join(tmp, filepath.FromSlash(a.mirrorName))
		if _, err := os.Lstat(dst); err == nil {
			return nil, fmt.Errorf("%s: %s is named twice", a.component, a.mirrorName)
		}
		got, err := f.download(ctx, a.url, dst)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.component, err)
		}
		if err := verify(a, want, got); err != nil {
			os.Remove(dst)
			return nil, err
		}
		return []File{{Name: a.mirrorName, SHA256: got["sha256"], From: a.url, Checked: checked}}, nil
	}
	scratch, err := os.MkdirTemp(tmp, ".download-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	archive := filepath.Join(scratch, a.name)
	got, err := f.download(ctx, a.url, archive)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", a.component, err)
	}
	// Nothing of an archive is read before it matches what its project published.
	if err := verify(a, want, got); err != nil {
		return nil, err
	}
	u := &unpacker{dir: tmp, limits: f.limits, pick: func(entry string) (string, bool) {
		name, ok := a.pick(entry)
		return name, ok && keep(name)
	}}
	switch a.archive {
	case "tar.gz":
		err = u.unpackTarGz(archive)
	case "zip":
		err = u.unpackZip(archive)
	default:
		err = fmt.Errorf("unknown archive type %q", a.archive)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", a.component, a.url, err)
	}
	var files []File
	for _, e := range u.out {
		files = append(files, File{Name: e.name, SHA256: e.sha256, From: a.url + "!" + e.entry, Checked: checked})
	}
	for _, r := range a.required {
		if keep(r) && !slices.ContainsFunc(files, func(fl File) bool { return fl.Name == r }) {
			return nil, fmt.Errorf("%s: %s has no %s: not the layout kubewin reads (a different version's or platform's archive?)", a.component, a.url, r)
		}
	}
	return files, nil
}

// replaceable refuses to replace a directory that holds something other than a mirror.
func replaceable(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, SumsFile)); err == nil {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if _, err := d.Readdirnames(1); err != io.EOF {
		return fmt.Errorf("%s is not empty and not a mirror (no %s): name a new directory", dir, SumsFile)
	}
	return nil
}

// swapIn renames the complete tmp to dir, moving a previous dir aside first and removing it
// afterwards.
func swapIn(tmp, dir string) error {
	var old string
	if _, err := os.Lstat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("move the previous %s aside: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			_ = os.Rename(old, dir) // put the previous mirror back
		}
		return fmt.Errorf("move the new mirror into %s: %w", dir, err)
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("remove the previous mirror %s: %w", old, err)
		}
	}
	return nil
}

// ReadSums reads the SHA256SUMS of the mirror directory dir.
func ReadSums(dir string) (map[string]string, error) {
	p := filepath.Join(dir, SumsFile)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return ParseSums(p, data)
}

// CacheDir is where join keeps the mirror it builds for o on goos/arch below parent: one
// directory per request, so a changed version or host builds anew.
func CacheDir(parent string, o Official, goos, arch string) string {
	h := sha256.Sum256([]byte(o.String() + "\n" + goos + "/" + arch))
	return filepath.Join(parent, CachePrefix+hex.EncodeToString(h[:8]))
}

// CachePrefix starts the names of CacheDir's directories.
const CachePrefix = "official-"
