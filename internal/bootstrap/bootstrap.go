// Package bootstrap is the cluster side of `kubewin join`: it creates a bootstrap token
// (kubeadm's Secret format: k8s.io/cluster-bootstrap/token/api) and only what a joining node needs
// to use it — RBAC for its group to create node client CSRs, auto-approval of those CSRs and of
// renewals, and the cluster-info ConfigMap in kube-public with the CA, signed with the token
// (a detached JWS, as kubeadm's discovery checks it). It works on clusters made by kubeadm and on
// clusters that were not: it creates what is missing and leaves what exists.
//
// Least privilege: the token authenticates as system:bootstrap:<id> in the groups
// system:bootstrappers and system:bootstrappers:kubewin:<pool>. Those groups may create
// CertificateSigningRequests (ClusterRole system:node-bootstrapper) and have node client CSRs
// approved, and anybody may read kube-public/cluster-info — nothing else: no Secrets, no Nodes.
//
// kube-proxy's credential (decided): the node's own. Where kubewin runs kube-proxy as a host
// service (Windows nodes), it uses the kubelet's kubeconfig, whose client certificate the
// kubelet obtained by TLS bootstrap and renews itself before expiry (rotateCertificates; the
// renewal CSRs are auto-approved through kubewin:node-autoapprove-renewal); client-go re-reads
// the rotated files (k8s.io/client-go transport/cert_rotation.go). Its lifetime is the cluster's
// signing duration (kube-controller-manager --cluster-signing-duration, one year by default).
// The alternatives fail least privilege or do not work: a ServiceAccount token minted by the
// node is refused unless bound to a pod on that node (NodeRestriction, k8s.io/kubernetes
// v1.37.1 plugin/pkg/admission/noderestriction/admission.go admitServiceAccount), and a
// client certificate for a separate kube-proxy identity needs an approver the cluster does not
// have. The node identity lacks only list/watch of Endpoints and EndpointSlices for kube-proxy
// (bootstrappolicy NodeRules), so ClusterRole system:node-proxier — read Services, Endpoints,
// EndpointSlices and Nodes, write Events — is bound to system:nodes: read-only, and nothing a
// node cannot already learn from the pods and Services it serves.
package bootstrap

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	"k8s.io/kubernetes/cmd/kubeadm/app/util/pubkeypin"
)

// Names of the objects kubewin creates besides the token Secret.
const (
	// PoolGroupPrefix + pool is the extra group of a pool's tokens.
	PoolGroupPrefix       = "system:bootstrappers:kubewin:"
	clusterInfoReaderRole = "kubewin:cluster-info-reader"
	// The ClusterRoles below are created by every kube-apiserver (bootstrap policy).
	nodeBootstrapperRole = "system:node-bootstrapper"
	nodeClientRole       = "system:certificates.k8s.io:certificatesigningrequests:nodeclient"
	selfNodeClientRole   = "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"
	nodeProxierRole      = "system:node-proxier"
	// NodeProxierBinding lets nodes run kube-proxy with their own credential (see below).
	NodeProxierBinding = "kubewin:node-proxier"
	// DefaultTTL is a bootstrap token's lifetime unless --ttl says otherwise (kubeadm's default).
	DefaultTTL = 24 * time.Hour
)

// TokenOptions describe the token to create.
type TokenOptions struct {
	// Pool names the group of nodes the token is for (default "default").
	Pool        string
	TTL         time.Duration
	Description string
	// Token is "<id>.<secret>"; empty: generated.
	Token string
}

// Token is a created (or planned) bootstrap token and what a node needs to join with it.
type Token struct {
	Token      string    `json:"token"`
	ID         string    `json:"id"`
	Pool       string    `json:"pool"`
	Expires    time.Time `json:"expires"`
	CACertHash string    `json:"caCertHash"`
	Server     string    `json:"server"`
	// Objects are what Apply creates when missing (Secret, RBAC, cluster-info), in order.
	Objects []runtime.Object `json:"-"`
}

// JoinCommand is the command a node runs.
func (t *Token) JoinCommand() string {
	return fmt.Sprintf("kubewin join --server %s --token %s --ca-cert-hash %s", t.Server, t.Token, t.CACertHash)
}

// NewToken plans a token for the cluster whose API server is server and whose CA is caPEM (the
// first certificate is the CA joining nodes will pin).
func NewToken(server string, caPEM []byte, o TokenOptions, now time.Time) (*Token, error) {
	if o.Pool == "" {
		o.Pool = "default"
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	group := PoolGroupPrefix + o.Pool
	if err := bootstraputil.ValidateBootstrapGroupName(group); err != nil {
		return nil, fmt.Errorf("--pool %q: %w", o.Pool, err)
	}
	if o.Token == "" {
		tok, err := bootstraputil.GenerateBootstrapToken()
		if err != nil {
			return nil, fmt.Errorf("generate bootstrap token: %w", err)
		}
		o.Token = tok
	}
	if !bootstraputil.IsValidBootstrapToken(o.Token) {
		return nil, fmt.Errorf("token %q: expected [a-z0-9]{6}.[a-z0-9]{16}", o.Token)
	}
	id, secret, _ := strings.Cut(o.Token, ".")
	block, _ := pem.Decode(caPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("cluster CA: no PEM certificate")
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("cluster CA: %w", err)
	}
	t := &Token{Token: o.Token, ID: id, Pool: o.Pool, Expires: now.Add(o.TTL).UTC().Truncate(time.Second),
		CACertHash: pubkeypin.Hash(ca), Server: server}
	desc := o.Description
	if desc == "" {
		desc = "kubewin join token for pool " + o.Pool
	}
	sec := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: bootstraputil.BootstrapTokenSecretName(id), Namespace: metav1.NamespaceSystem},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		StringData: map[string]string{
			bootstrapapi.BootstrapTokenIDKey:               id,
			bootstrapapi.BootstrapTokenSecretKey:           secret,
			bootstrapapi.BootstrapTokenExpirationKey:       t.Expires.Format(time.RFC3339),
			bootstrapapi.BootstrapTokenUsageAuthentication: "true",
			bootstrapapi.BootstrapTokenUsageSigningKey:     "true",
			bootstrapapi.BootstrapTokenExtraGroupsKey:      group,
			bootstrapapi.BootstrapTokenDescriptionKey:      desc,
		},
	}
	kubeconfig, err := clusterInfoKubeconfig(server, caPEM)
	if err != nil {
		return nil, err
	}
	sig, err := jws.ComputeDetachedSignature(kubeconfig, id, secret)
	if err != nil {
		return nil, fmt.Errorf("sign cluster-info: %w", err)
	}
	clusterInfo := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.ConfigMapClusterInfo, Namespace: metav1.NamespacePublic},
		Data:       map[string]string{bootstrapapi.KubeConfigKey: kubeconfig, bootstrapapi.JWSSignatureKeyPrefix + id: sig},
	}
	crb := func(name, role string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   subjects,
		}
	}
	poolGroup := rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: group}
	t.Objects = []runtime.Object{
		sec,
		crb("kubewin:node-bootstrapper:"+o.Pool, nodeBootstrapperRole, poolGroup),
		crb("kubewin:node-autoapprove:"+o.Pool, nodeClientRole, poolGroup),
		crb("kubewin:node-autoapprove-renewal", selfNodeClientRole,
			rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:nodes"}),
		crb(NodeProxierBinding, nodeProxierRole,
			rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:nodes"}),
		&rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Name: clusterInfoReaderRole, Namespace: metav1.NamespacePublic},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
				ResourceNames: []string{bootstrapapi.ConfigMapClusterInfo}, Verbs: []string{"get"}}},
		},
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: clusterInfoReaderRole, Namespace: metav1.NamespacePublic},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: clusterInfoReaderRole},
			// Discovery reads cluster-info before it trusts the server, so without credentials.
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:anonymous"}},
		},
		clusterInfo,
	}
	return t, nil
}

// clusterInfoKubeconfig is the kubeconfig kubeadm publishes in cluster-info: the server and the
// CA, no credentials.
func clusterInfoKubeconfig(server string, caPEM []byte) (string, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[""] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return "", fmt.Errorf("write cluster-info kubeconfig: %w", err)
	}
	return string(b), nil
}

// Change is what Apply did to one object.
type Change struct {
	Object string `json:"object"`
	Action string `json:"action"` // created, exists, signed
}

// Apply creates the token's objects that are missing; existing RBAC objects are left as they
// are. An existing cluster-info ConfigMap (kubeadm clusters have one) keeps its kubeconfig and
// gets the token's signature added.
func Apply(ctx context.Context, c kubernetes.Interface, t *Token) ([]Change, error) {
	return applyObjects(ctx, c, t.Objects, func(cm *corev1.ConfigMap) (string, error) {
		return "signed", addSignature(ctx, c, cm, t.ID)
	})
}

// applyObjects creates objs in order; an object that exists is left as it is ("exists"), except
// a ConfigMap, which existingConfigMap reconciles and names the action for.
func applyObjects(ctx context.Context, c kubernetes.Interface, objs []runtime.Object,
	existingConfigMap func(*corev1.ConfigMap) (string, error)) ([]Change, error) {
	var out []Change
	for _, o := range objs {
		name, err := create(ctx, c, o)
		switch {
		case err == nil:
			out = append(out, Change{Object: name, Action: "created"})
		case apierrors.IsAlreadyExists(err):
			cm, ok := o.(*corev1.ConfigMap)
			if !ok {
				out = append(out, Change{Object: name, Action: "exists"})
				continue
			}
			action, err := existingConfigMap(cm)
			if err != nil {
				return out, err
			}
			out = append(out, Change{Object: name, Action: action})
		default:
			return out, fmt.Errorf("create %s: %w", name, err)
		}
	}
	return out, nil
}

func create(ctx context.Context, c kubernetes.Interface, o runtime.Object) (string, error) {
	opts := metav1.CreateOptions{}
	switch v := o.(type) {
	case *corev1.Secret:
		_, err := c.CoreV1().Secrets(v.Namespace).Create(ctx, v, opts)
		return "Secret " + v.Namespace + "/" + v.Name, err
	case *corev1.ConfigMap:
		_, err := c.CoreV1().ConfigMaps(v.Namespace).Create(ctx, v, opts)
		return "ConfigMap " + v.Namespace + "/" + v.Name, err
	case *rbacv1.ClusterRoleBinding:
		_, err := c.RbacV1().ClusterRoleBindings().Create(ctx, v, opts)
		return "ClusterRoleBinding " + v.Name, err
	case *rbacv1.Role:
		_, err := c.RbacV1().Roles(v.Namespace).Create(ctx, v, opts)
		return "Role " + v.Namespace + "/" + v.Name, err
	case *rbacv1.RoleBinding:
		_, err := c.RbacV1().RoleBindings(v.Namespace).Create(ctx, v, opts)
		return "RoleBinding " + v.Namespace + "/" + v.Name, err
	}
	return "", fmt.Errorf("bootstrap: unexpected object %T", o)
}

// addSignature signs the existing cluster-info's kubeconfig with the token (what kube-controller-
// manager's bootstrapsigner does on kubeadm clusters; done here so clusters without it work too).
func addSignature(ctx context.Context, c kubernetes.Interface, want *corev1.ConfigMap, id string) error {
	cms := c.CoreV1().ConfigMaps(want.Namespace)
	cur, err := cms.Get(ctx, want.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read cluster-info: %w", err)
	}
	kc := cur.Data[bootstrapapi.KubeConfigKey]
	if kc == "" {
		return fmt.Errorf("kube-public/cluster-info has no %q key", bootstrapapi.KubeConfigKey)
	}
	key := bootstrapapi.JWSSignatureKeyPrefix + id
	if kc == want.Data[bootstrapapi.KubeConfigKey] {
		if cur.Data == nil {
			cur.Data = map[string]string{}
		}
		cur.Data[key] = want.Data[key]
	} else {
		return fmt.Errorf("kube-public/cluster-info publishes a different server/CA than this kubeconfig; sign it with the token (kube-controller-manager's bootstrapsigner does so) or update it")
	}
	if _, err := cms.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("sign cluster-info: %w", err)
	}
	return nil
}

// Listed is one bootstrap token in the cluster (its secret part is not shown).
type Listed struct {
	ID          string    `json:"id"`
	Pool        string    `json:"pool,omitempty"`
	Expires     time.Time `json:"expires"`
	Description string    `json:"description,omitempty"`
	Expired     bool      `json:"expired"`
}

// List returns the bootstrap tokens in kube-system, sorted by ID.
func List(ctx context.Context, c kubernetes.Interface, now time.Time) ([]Listed, error) {
	secs, err := c.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{FieldSelector: "type=" + string(bootstrapapi.SecretTypeBootstrapToken)})
	if err != nil {
		return nil, fmt.Errorf("list bootstrap tokens: %w", err)
	}
	var out []Listed
	for _, s := range secs.Items {
		l := Listed{ID: string(s.Data[bootstrapapi.BootstrapTokenIDKey]), Description: string(s.Data[bootstrapapi.BootstrapTokenDescriptionKey])}
		if g := string(s.Data[bootstrapapi.BootstrapTokenExtraGroupsKey]); strings.HasPrefix(g, PoolGroupPrefix) {
			l.Pool = strings.TrimPrefix(g, PoolGroupPrefix)
		}
		if e, err := time.Parse(time.RFC3339, string(s.Data[bootstrapapi.BootstrapTokenExpirationKey])); err == nil {
			l.Expires, l.Expired = e, !e.After(now)
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Delete removes the token with id (its Secret and its cluster-info signature).
func Delete(ctx context.Context, c kubernetes.Interface, id string) error {
	if !bootstraputil.IsValidBootstrapTokenID(id) {
		return fmt.Errorf("token id %q: expected 6 characters [a-z0-9]", id)
	}
	// A Secret already gone is not an error: a retry after a failed signature removal must be
	// able to finish it.
	secretErr := c.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, bootstraputil.BootstrapTokenSecretName(id), metav1.DeleteOptions{})
	if secretErr != nil && !apierrors.IsNotFound(secretErr) {
		return fmt.Errorf("delete token %s: %w", id, secretErr)
	}
	signed := false
	// kube-controller-manager's bootstrapsigner (kubeadm clusters run it) removes the signature
	// of a deleted token too, so the update can meet its write: read again and retry.
	cms := c.CoreV1().ConfigMaps(metav1.NamespacePublic)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil // no cluster-info: nothing signed
		}
		if err != nil {
			return err
		}
		if _, ok := cm.Data[bootstrapapi.JWSSignatureKeyPrefix+id]; !ok {
			return nil
		}
		signed = true
		delete(cm.Data, bootstrapapi.JWSSignatureKeyPrefix+id)
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("remove the token's cluster-info signature: %w", err)
	}
	if secretErr != nil && !signed {
		return fmt.Errorf("delete token %s: %w", id, secretErr) // neither a Secret nor a signature: no such token
	}
	return nil
}
