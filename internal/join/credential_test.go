package join

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubewin/kubewin/internal/render"
	"github.com/kubewin/kubewin/internal/winnode"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// writeNodeCert writes a client certificate for system:node:<name> valid in [from, until] where
// the kubelet keeps its current one.
func writeNodeCert(t *testing.T, paths render.NodePaths, from, until time.Time) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "system:node:win-1", Organization: []string{"system:nodes"}},
		NotBefore: from, NotAfter: until, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(paths.PKIDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(KubeletClientCert(paths), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCheckCredential(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name        string
		from, until time.Time
		noCert      bool
		want        string
	}{
		{name: "before TLS bootstrap there is none to check", noCert: true},
		{name: "valid", from: now.Add(-time.Hour), until: now.Add(time.Hour)},
		{name: "expired", from: now.Add(-48 * time.Hour), until: now.Add(-time.Hour), want: "run kubewin join again with a new token"},
		{name: "not yet valid", from: now.Add(time.Hour), until: now.Add(48 * time.Hour), want: "clock behind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paths := render.WindowsPathsUnder(t.TempDir(), t.TempDir())
			if !tc.noCert {
				writeNodeCert(t, paths, tc.from, tc.until)
			}
			err := CheckCredential(paths, now)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrCredentialExpired) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "system:node:win-1") {
				t.Fatalf("got %v; want ErrCredentialExpired naming the node and %q", err, tc.want)
			}
		})
	}
}

// A Windows node whose credential expired (off longer than its certificate's life): the node
// service says why and touches nothing, at once.
func TestWindowsNodeServiceExpiredCredential(t *testing.T) {
	paths := render.WindowsPathsUnder(t.TempDir(), t.TempDir())
	mem := winnode.NewMemHost(winnode.Adapter{Name: "Ethernet0", MAC: "00:15:5d:00:07:31"})
	ws := &WindowsNodeService{Host: &WindowsHost{Node: mem}, Paths: paths}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// A joined node's state (pod CIDR known), so that with a valid credential the pass goes on
	// to plan the node (and fails here for want of its description).
	if err := os.WriteFile(StatePath(paths), []byte(`{"node":"win-1","podCIDR":"10.244.3.0/24","step":"done","joined":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(paths.DataDir, "cluster.yaml"), v1alpha1.ExampleYAML(), 0o644); err != nil {
		t.Fatal(err)
	}
	writeNodeCert(t, paths, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if _, err := ws.Repair(ctx); err == nil || errors.Is(err, ErrCredentialExpired) || !strings.Contains(err.Error(), "plan this node") {
		t.Fatalf("with a valid credential: %v; want the pass to go on to planning", err)
	}
	writeNodeCert(t, paths, time.Now().Add(-72*time.Hour), time.Now().Add(-24*time.Hour))
	repaired, err := ws.Repair(ctx)
	if !errors.Is(err, ErrCredentialExpired) || len(repaired) != 0 {
		t.Fatalf("repair: %v %v; want ErrCredentialExpired and no repair", repaired, err)
	}
	if len(mem.Events()) != 0 {
		t.Fatalf("the host was changed: %v", mem.Events())
	}
	if st := ws.Status(); len(st.Services) != 3 {
		t.Fatalf("status %+v; want the three node services", st)
	}
}
