package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// serveRelease serves files as a release directory on loopback.
func serveRelease(t *testing.T, files map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[strings.TrimPrefix(r.URL.Path, "/rel/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/rel"
}

func hexSum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestFromRelease(t *testing.T) {
	win := Target{"windows", "amd64"}
	exe := "MZ kubewin.exe"
	ok := map[string]string{
		BinaryName(win): exe,
		SumsFile:        hexSum(exe) + "  " + BinaryName(win) + "\n" + hexSum("x") + "  kubewin-v1.0.0-windows-amd64.zip\n",
	}
	base := serveRelease(t, ok)
	ctx := context.Background()
	d, err := FromRelease(ctx, http.DefaultClient, base+"/", win)
	if err != nil {
		t.Fatal(err)
	}
	if d.URL != base+"/kubewin-windows-amd64.exe" || d.SHA256 != hexSum(exe) {
		t.Errorf("FromRelease = %+v", d)
	}

	_, err = FromRelease(ctx, http.DefaultClient, base, Target{"linux", "amd64"})
	if !errors.Is(err, ErrNotListed) || !strings.Contains(err.Error(), "kubewin-linux-amd64 (the linux/amd64 binary) not listed in SHA256SUMS; it lists kubewin-v1.0.0-windows-amd64.zip, kubewin-windows-amd64.exe") {
		t.Errorf("missing entry: %v", err)
	}

	tampered := map[string]string{BinaryName(win): exe + "!", SumsFile: ok[SumsFile]}
	if _, err := FromRelease(ctx, http.DefaultClient, serveRelease(t, tampered), win); err == nil ||
		!strings.Contains(err.Error(), "has SHA-256 "+hexSum(exe+"!")+", but SHA256SUMS lists "+hexSum(exe)) {
		t.Errorf("tampered binary: %v", err)
	}
	if _, err := FromRelease(ctx, http.DefaultClient, serveRelease(t, map[string]string{}), win); err == nil ||
		!strings.Contains(err.Error(), "/rel/SHA256SUMS: 404") {
		t.Errorf("no SHA256SUMS: %v", err)
	}
	if _, err := FromRelease(ctx, http.DefaultClient, serveRelease(t, map[string]string{SumsFile: "nonsense\n"}), win); err == nil ||
		!strings.Contains(err.Error(), "SHA256SUMS line 1") {
		t.Errorf("bad SHA256SUMS: %v", err)
	}
}
