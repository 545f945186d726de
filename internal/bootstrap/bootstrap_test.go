package bootstrap

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	certsv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"

	"github.com/kubewin/kubewin/internal/testenv"
)

// TestTokenAgainstRealAPIServer: a token made by NewToken+Apply on a real kube-apiserver (with
// bootstrap token authentication, as kubeadm runs it) authenticates, may create a CSR, may read
// cluster-info — whose signature verifies with the token — and may not read Secrets or Nodes.
// A second token reuses the RBAC objects; Delete removes the Secret and the signature; an
// expired token is listed as expired.
func TestTokenAgainstRealAPIServer(t *testing.T) {
	cp := testenv.StartControlPlane(t)
	admin := cp.Clientset(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ca := cp.Config.TLSClientConfig.CAData
	now := time.Now()

	tok, err := NewToken(cp.Host, ca, TokenOptions{Pool: "windows"}, now)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := Apply(ctx, admin, tok)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		if c.Action != "created" {
			t.Errorf("first token on a fresh cluster: %s %s, want created", c.Object, c.Action)
		}
	}
	if !strings.HasPrefix(tok.CACertHash, "sha256:") || !strings.Contains(tok.JoinCommand(), "--ca-cert-hash "+tok.CACertHash) {
		t.Errorf("join command %q", tok.JoinCommand())
	}

	// As the token: who am I, what may I do.
	cfg := rest.AnonymousClientConfig(cp.Config)
	cfg.BearerToken = tok.Token
	as, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := as.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("self subject review as the token: %v", err)
	}
	if u := review.Status.UserInfo; u.Username != "system:bootstrap:"+tok.ID || !slices.Contains(u.Groups, "system:bootstrappers") || !slices.Contains(u.Groups, PoolGroupPrefix+"windows") {
		t.Errorf("token identity %+v", u)
	}
	if _, err := as.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("token listed Secrets: err = %v, want Forbidden", err)
	}
	if _, err := as.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("token listed Nodes: err = %v, want Forbidden", err)
	}
	csr := &certsv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{GenerateName: "node-csr-"},
		Spec: certsv1.CertificateSigningRequestSpec{Request: testCSR(t), SignerName: certsv1.KubeAPIServerClientKubeletSignerName,
			Usages: []certsv1.KeyUsage{certsv1.UsageDigitalSignature, certsv1.UsageClientAuth}}}
	if _, err := as.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{}); err != nil {
		t.Errorf("token may not create its node CSR: %v", err)
	}
	// Discovery reads cluster-info without credentials and checks the signature with the token.
	anon, err := kubernetes.NewForConfig(rest.AnonymousClientConfig(cp.Config))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := anon.CoreV1().ConfigMaps("kube-public").Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("anonymous read of cluster-info: %v", err)
	}
	id, secret, _ := strings.Cut(tok.Token, ".")
	if !jws.DetachedTokenIsValid(ci.Data[bootstrapapi.JWSSignatureKeyPrefix+id], ci.Data[bootstrapapi.KubeConfigKey], id, secret) {
		t.Error("cluster-info signature does not verify with the token")
	}
	if _, err := anon.CoreV1().ConfigMaps("kube-public").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("anonymous may list kube-public: %v", err)
	}

	// A second token: RBAC exists, cluster-info gets a second signature.
	tok2, err := NewToken(cp.Host, ca, TokenOptions{Pool: "windows", TTL: time.Second}, now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	changes, err = Apply(ctx, admin, tok2)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range changes {
		got[c.Object] = c.Action
	}
	if got["Secret kube-system/bootstrap-token-"+tok2.ID] != "created" || got["ClusterRoleBinding kubewin:node-bootstrapper:windows"] != "exists" ||
		got["ConfigMap kube-public/cluster-info"] != "signed" {
		t.Errorf("second token changes: %v", got)
	}
	list, err := List(ctx, admin, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("list = %+v", list)
	}
	for _, l := range list {
		if l.Pool != "windows" || (l.ID == tok2.ID) != l.Expired {
			t.Errorf("listed %+v", l)
		}
	}
	// An expired token authenticates nobody (the API server checks the expiration).
	cfg2 := rest.AnonymousClientConfig(cp.Config)
	cfg2.BearerToken = tok2.Token
	as2, err := kubernetes.NewForConfig(cfg2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := as2.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("expired token: err = %v, want Unauthorized", err)
	}

	if err := Delete(ctx, admin, tok.ID); err != nil {
		t.Fatal(err)
	}
	ci, err = admin.CoreV1().ConfigMaps("kube-public").Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ci.Data[bootstrapapi.JWSSignatureKeyPrefix+tok.ID]; ok {
		t.Error("deleted token's signature still in cluster-info")
	}
	// The API server's token authenticator reads Secrets through an informer: the deletion
	// takes effect within moments, not instantly.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := as.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return apierrors.IsUnauthorized(err), nil
	})
	if err != nil {
		t.Errorf("deleted token still authenticates after 15 s")
	}
}

func TestNewTokenRejectsBadInput(t *testing.T) {
	ca := []byte("not a certificate")
	if _, err := NewToken("https://x", ca, TokenOptions{}, time.Now()); err == nil || !strings.Contains(err.Error(), "cluster CA") {
		t.Errorf("bad CA: %v", err)
	}
	if _, err := NewToken("https://x", nil, TokenOptions{Pool: "Bad_Pool"}, time.Now()); err == nil || !strings.Contains(err.Error(), "--pool") {
		t.Errorf("bad pool: %v", err)
	}
	if _, err := NewToken("https://x", nil, TokenOptions{Token: "abc"}, time.Now()); err == nil || !strings.Contains(err.Error(), "expected") {
		t.Errorf("bad token: %v", err)
	}
}
