package join

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"

	"github.com/kubewin/kubewin/internal/render"
)

// KubeletClientCert is the kubelet's current client certificate (and key): the node's own
// credential, which kube-proxy and the node service use too.
func KubeletClientCert(paths render.NodePaths) string {
	return filepath.Join(paths.PKIDir, "kubelet-client-current.pem")
}

// ErrCredentialExpired is the node credential's end: the kubelet renews its certificate only
// while it is valid, so an expired one (a node off longer than the certificate's life) needs a
// new join with a new token.
var ErrCredentialExpired = errors.New("the node's credential expired")

// CheckCredential says whether the node's credential is usable at now: nil while it is valid or
// before the kubelet has one (TLS bootstrap pending); ErrCredentialExpired (wrapped, with the
// dates and the fix) once it is not.
func CheckCredential(paths render.NodePaths, now time.Time) error {
	data, err := os.ReadFile(KubeletClientCert(paths))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("the node's credential: %w", err)
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil || len(certs) == 0 {
		return fmt.Errorf("the node's credential %s: no certificate (%v)", KubeletClientCert(paths), err)
	}
	c := certs[0]
	switch {
	case now.After(c.NotAfter):
		return fmt.Errorf("%w: %s (kubelet and kube-proxy) was valid until %s; the kubelet cannot renew an expired certificate — run kubewin join again with a new token (kubewin token create)",
			ErrCredentialExpired, c.Subject.CommonName, c.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(c.NotBefore):
		return fmt.Errorf("%w: %s is valid only from %s (is this machine's clock behind?)",
			ErrCredentialExpired, c.Subject.CommonName, c.NotBefore.UTC().Format(time.RFC3339))
	}
	return nil
}
