package binaries

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// Limits bound what a release layout may make kubewin download and unpack.
type Limits struct {
	// Download is the largest program or archive (a kubelet is about 80 MB, containerd's
	// archive 35 MB, the CNI plugins' 50 MB).
	Download int64
	// Entry is the largest file taken out of an archive, Total all of them together.
	Entry, Total int64
}

// DefaultLimits leave room for growth and stop a runaway response or a decompression bomb.
func DefaultLimits() Limits { return Limits{Download: 1 << 30, Entry: 512 << 20, Total: 4 << 30} }

// sumFileLimit bounds a checksum file (one line).
const sumFileLimit = 64 << 10

// DefaultClient bounds connecting and the server's first answer, not the body: a large program
// over a slow link takes as long as it takes (the caller's context still ends it). Redirects
// (GitHub's release downloads redirect to its object store) must stay on https.
func DefaultClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   30 * time.Second,
			ResponseHeaderTimeout: 30 * time.Second,
		},
		CheckRedirect: httpsRedirects,
	}
}

func httpsRedirects(req *http.Request, via []*http.Request) error {
	if req.URL.Scheme != "https" {
		return fmt.Errorf("redirect to %s: only https is followed", req.URL.Redacted())
	}
	if len(via) >= 10 {
		return errors.New("more than 10 redirects")
	}
	return nil
}

// ErrNotFound is wrapped when the server answers 404: the version, platform or checksum file
// is not published there.
var ErrNotFound = errors.New("not found")

type fetcher struct {
	client *http.Client
	limits Limits
}

// open GETs u: a 5xx answer or a network error is tried again (three tries), a 4xx is final.
func (f fetcher) open(ctx context.Context, u string) (io.ReadCloser, error) {
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", u, err)
		}
		resp, err := f.client.Do(req)
		switch {
		case err != nil:
			last = fmt.Errorf("GET %s: %w", u, err)
		case resp.StatusCode == http.StatusOK:
			return resp.Body, nil
		default:
			resp.Body.Close()
			if resp.StatusCode == http.StatusNotFound {
				return nil, fmt.Errorf("GET %s: %s: %w", u, resp.Status, ErrNotFound)
			}
			last = fmt.Errorf("GET %s: %s", u, resp.Status)
			if resp.StatusCode < 500 {
				return nil, last
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("GET %s: %w", u, ctx.Err())
		case <-time.After(time.Duration(attempt+1) * time.Second):
		}
	}
	return nil, last
}

// get reads a small file whole.
func (f fetcher) get(ctx context.Context, u string, limit int64) ([]byte, error) {
	rc, err := f.open(ctx, u)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("GET %s: larger than %d bytes", u, limit)
	}
	return b, nil
}

// digests are a file's SHA-256 and SHA-512 (hex).
type digests map[string]string

// download streams u into a new file dst, hashing it on the way.
func (f fetcher) download(ctx context.Context, u, dst string) (digests, error) {
	rc, err := f.open(ctx, u)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", u, err)
	}
	h256, h512 := sha256.New(), sha512.New()
	n, cerr := io.Copy(io.MultiWriter(out, h256, h512), io.LimitReader(rc, f.limits.Download+1))
	if err := out.Close(); cerr == nil {
		cerr = err
	}
	if cerr == nil && n > f.limits.Download {
		cerr = fmt.Errorf("larger than %d bytes", f.limits.Download)
	}
	if cerr != nil {
		os.Remove(dst)
		return nil, fmt.Errorf("download %s: %w", u, cerr)
	}
	return digests{"sha256": hex.EncodeToString(h256.Sum(nil)), "sha512": hex.EncodeToString(h512.Sum(nil))}, nil
}

// published reads the checksum files of a, before a is downloaded: a missing one fails the
// mirror before the large download.
func (f fetcher) published(ctx context.Context, a artifact) (digests, error) {
	want := digests{}
	for _, c := range a.sums {
		data, err := f.get(ctx, c.url, sumFileLimit)
		if err != nil {
			return nil, fmt.Errorf("%s: the published %s checksum of %s: %w", a.component, c.algo, a.name, err)
		}
		sum, err := ParseDigestFile(c.url, data, c.hexLen, a.name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.component, err)
		}
		want[c.algo] = sum
	}
	return want, nil
}

// verify compares got with every published digest.
func verify(a artifact, want, got digests) error {
	for _, c := range a.sums {
		if got[c.algo] != want[c.algo] {
			return fmt.Errorf("%s: %s has %s %s, but %s says %s; nothing was kept", a.component, a.url, c.algo, got[c.algo], c.url, want[c.algo])
		}
	}
	return nil
}
