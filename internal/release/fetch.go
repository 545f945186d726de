package release

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
)

// ErrNotListed is wrapped by FromRelease when SHA256SUMS has no entry for the binary.
var ErrNotListed = errors.New("not listed in " + SumsFile)

// Download is a binary of a release: its URL and SHA-256 (hex) as SHA256SUMS lists it.
type Download struct {
	URL, SHA256 string
}

// FromRelease finds t's binary in the release published at baseURL: it reads
// baseURL/SHA256SUMS, takes the entry of BinaryName(t), and downloads the binary to check that
// its SHA-256 is the listed one (a release whose upload broke is caught here, not on a node
// booting with it). Errors say which URL and which name.
func FromRelease(ctx context.Context, c *http.Client, baseURL string, t Target) (Download, error) {
	base := strings.TrimSuffix(baseURL, "/")
	sumsURL := base + "/" + SumsFile
	body, err := get(ctx, c, sumsURL, 1<<20)
	if err != nil {
		return Download{}, err
	}
	sums, err := ParseSums(body)
	if err != nil {
		return Download{}, fmt.Errorf("%s: %w", sumsURL, err)
	}
	name := BinaryName(t)
	want, ok := sums[name]
	if !ok {
		names := make([]string, 0, len(sums))
		for n := range sums {
			names = append(names, n)
		}
		sort.Strings(names)
		return Download{}, fmt.Errorf("%s: %s (the %s binary) %w; it lists %s", sumsURL, name, t, ErrNotListed, strings.Join(names, ", "))
	}
	d := Download{URL: base + "/" + name, SHA256: want}
	if err := Verify(ctx, c, d); err != nil {
		return Download{}, err
	}
	return d, nil
}

// Verify downloads d.URL and checks its SHA-256.
func Verify(ctx context.Context, c *http.Client, d Download) error {
	resp, err := open(ctx, c, d.URL)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	h := newSHA256()
	if _, err := io.Copy(h, resp.Body); err != nil {
		return fmt.Errorf("download %s: %w", d.URL, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != d.SHA256 {
		return fmt.Errorf("%s has SHA-256 %s, but %s lists %s", d.URL, got, SumsFile, d.SHA256)
	}
	return nil
}

func open(ctx context.Context, c *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", url, err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("download %s: %s", url, resp.Status)
	}
	return resp, nil
}

func get(ctx context.Context, c *http.Client, url string, limit int64) ([]byte, error) {
	resp, err := open(ctx, c, url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", url, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("download %s: larger than %d bytes", url, limit)
	}
	return b, nil
}
