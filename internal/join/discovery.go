package join

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	"k8s.io/kubernetes/cmd/kubeadm/app/util/pubkeypin"
)

// Discovery errors a caller (and kubewin diagnose) tells apart.
var (
	// ErrCAPinMismatch: the CA the server publishes is not the one --ca-cert-hash pins. Either
	// the hash is wrong or something else answers at --server; never continue.
	ErrCAPinMismatch = errors.New("the cluster CA does not match --ca-cert-hash")
	// ErrTokenNotSigned: cluster-info carries no signature for the token's ID — the token is
	// unknown, expired (the token cleaner removed it) or was deleted.
	ErrTokenNotSigned = errors.New("cluster-info has no signature for this token")
	// ErrBadSignature: a signature exists but not with this token's secret.
	ErrBadSignature = errors.New("cluster-info's signature does not verify with this token")
)

// ClusterTrust is what discovery establishes: the API server URL and the pinned cluster CA.
type ClusterTrust struct {
	Server string
	CAPEM  []byte
}

// Discover reads kube-public/cluster-info as kubeadm's token discovery does
// (k8s.io/kubernetes v1.37.1 cmd/kubeadm/app/discovery/token/token.go): first without trusting
// the server, then checks the detached JWS signature made with the token's secret (only someone
// who knows the token could sign the kubeconfig), pins the CA's public key against caCertHash,
// and reads cluster-info a second time over TLS verified with that CA; both reads must agree.
// A missing signature is retried until timeout (a controller may add it a moment later).
func Discover(ctx context.Context, server, token, caCertHash string, timeout time.Duration) (*ClusterTrust, error) {
	if err := checkInputs(server, token, caCertHash); err != nil {
		return nil, err
	}
	id, secret, _ := strings.Cut(token, ".")
	pins := pubkeypin.NewSet()
	_ = pins.Allow(caCertHash) // checked above

	insecure, err := readClusterInfo(ctx, &rest.Config{Host: server, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, id, timeout)
	if err != nil {
		return nil, err
	}
	kc := insecure.Data[bootstrapapi.KubeConfigKey]
	if !jws.DetachedTokenIsValid(insecure.Data[bootstrapapi.JWSSignatureKeyPrefix+id], kc, id, secret) {
		return nil, fmt.Errorf("discovery at %s: %w (token %s)", server, ErrBadSignature, id)
	}
	cfg, err := clientcmd.Load([]byte(kc))
	if err != nil {
		return nil, fmt.Errorf("discovery at %s: the kubeconfig in cluster-info: %w", server, err)
	}
	var caPEM []byte
	for _, c := range cfg.Clusters {
		caPEM = c.CertificateAuthorityData
	}
	cas, err := certutil.ParseCertsPEM(caPEM)
	if err != nil {
		return nil, fmt.Errorf("discovery at %s: the CA in cluster-info: %w", server, err)
	}
	if err := pins.CheckAny(cas); err != nil {
		return nil, fmt.Errorf("discovery at %s: %w (%s; the cluster's is sha256:%s — compare with `kubewin token create` on the admin side)",
			server, ErrCAPinMismatch, caCertHash, strings.TrimPrefix(pubkeypin.Hash(cas[0]), "sha256:"))
	}
	secure, err := readClusterInfo(ctx, &rest.Config{Host: server, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}, id, timeout)
	if err != nil {
		return nil, fmt.Errorf("discovery at %s with the pinned CA: %w", server, err)
	}
	if !bytes.Equal([]byte(secure.Data[bootstrapapi.KubeConfigKey]), []byte(kc)) {
		return nil, fmt.Errorf("discovery at %s: cluster-info read over verified TLS differs from the first read", server)
	}
	return &ClusterTrust{Server: server, CAPEM: caPEM}, nil
}

// checkInputs validates the join command's three values (bad input, exit 2).
func checkInputs(server, token, caCertHash string) error {
	if !bootstraputil.IsValidBootstrapToken(token) {
		return fmt.Errorf("%w: --token: expected <6 characters [a-z0-9]>.<16 characters [a-z0-9]>", ErrBadInput)
	}
	if err := pubkeypin.NewSet().Allow(caCertHash); err != nil {
		return fmt.Errorf("%w: --ca-cert-hash: %v", ErrBadInput, err)
	}
	if u, err := url.Parse(server); err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%w: --server %q: expected https://HOST[:PORT]", ErrBadInput, server)
	}
	return nil
}

// readClusterInfo gets cluster-info anonymously, retrying (every 2 s, up to timeout) while the
// server is unreachable or the token's signature is not there yet.
func readClusterInfo(ctx context.Context, cfg *rest.Config, id string, timeout time.Duration) (*corev1.ConfigMap, error) {
	cfg.Timeout = 10 * time.Second
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		cm, err := c.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
		switch {
		case err != nil:
			err = fmt.Errorf("read kube-public/%s from %s: %w", bootstrapapi.ConfigMapClusterInfo, cfg.Host, err)
		case cm.Data[bootstrapapi.KubeConfigKey] == "":
			return nil, fmt.Errorf("kube-public/%s at %s has no %q key: the cluster is not set up for token joins (run `kubewin token create`)",
				bootstrapapi.ConfigMapClusterInfo, cfg.Host, bootstrapapi.KubeConfigKey)
		case cm.Data[bootstrapapi.JWSSignatureKeyPrefix+id] == "":
			err = fmt.Errorf("%w (token %s): it is unknown, expired or deleted; create one with `kubewin token create`", ErrTokenNotSigned, id)
		default:
			return cm, nil
		}
		if time.Now().After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(2 * time.Second):
		}
	}
}
