// Package discover reads a live cluster through the Kubernetes API and produces a kubewin
// cluster spec (v1alpha1.Cluster) with the provenance of every value. It only reads (get, list),
// with the permissions RBACObjects grants; values that sources disagree on are reported as
// conflicts with every value, and values no source has are reported as missing with what the
// user must supply.
//
// Sources, most trusted first, each used when present: ServiceCIDR objects; the kubeadm-config
// ConfigMap; the kubelet-config ConfigMap; the kube-proxy ConfigMap; kube-controller-manager,
// kube-apiserver and kube-proxy pod arguments; the kubernetes Service; the kube-dns/CoreDNS
// Service and Corefile; Node objects; the Linux CNI's objects (Calico IPPools, IPReservations
// and calico-node, flannel's net-conf.json, Cilium and others by their DaemonSets).
package discover

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// DefaultPageSize is the Limit of every list call; a 5,000-node cluster is read in 10 pages.
const DefaultPageSize = 500

// Options tune Discover.
type Options struct {
	// KubeconfigCluster is the kubeconfig's name for the cluster; the last resort for
	// metadata.name.
	KubeconfigCluster string
	// PageSize is the Limit of list calls (default DefaultPageSize).
	PageSize int64
}

// Result is a discovered cluster and the account of how each value was found.
type Result struct {
	Cluster *v1alpha1.Cluster `json:"cluster"`
	// Provenance maps a field path (spec.networking.serviceCIDR, spec.nodes[node1].podCIDR) to
	// where its value came from.
	Provenance map[string]Provenance `json:"provenance"`
	Conflicts  []Conflict            `json:"conflicts"`
	Missing    []Missing             `json:"missing"`
	// Denied lists reads the API server refused (403); the values they would have given may be
	// missing.
	Denied []Denied `json:"denied"`
	// MadeBy says how the cluster appears to have been built.
	MadeBy MadeBy `json:"madeBy"`
	// Notes are facts worth knowing that change no value (kubelet version skew, extra
	// ServiceCIDRs, Windows nodes already joined).
	Notes []string `json:"notes"`
	// WindowsPrerequisites are what the cluster lacks for Windows nodes of the design
	// discovered (calico/hostprocess, flannel/hostprocess), each with the fix (hostprocess.go).
	WindowsPrerequisites []Prerequisite `json:"windowsPrerequisites,omitempty"`
}

// Provenance is where a value came from.
type Provenance struct {
	Source string `json:"source"`
	// Agrees lists less trusted sources that gave the same value.
	Agrees []string `json:"agrees,omitempty"`
}

// Conflict is a field that sources disagree on. The most trusted value is used in the spec.
type Conflict struct {
	Field  string         `json:"field"`
	Chosen string         `json:"chosen"`
	Values []SourcedValue `json:"values"`
}

// SourcedValue is one source's value for a field.
type SourcedValue struct {
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Missing is a value no source gave.
type Missing struct {
	Field string `json:"field"`
	// Supply says what the user must put in their file (-f) to complete the spec.
	Supply string `json:"supply"`
	// Nodes the field is missing on, for per-node fields (field then uses nodes[*]).
	Nodes []string `json:"nodes,omitempty"`
}

// Denied is a read the API server refused.
type Denied struct {
	Verb      string `json:"verb"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

func (d Denied) String() string {
	s := d.Verb + " " + d.Resource
	if d.Name != "" {
		s += " " + d.Name
	}
	if d.Namespace != "" {
		s += " in namespace " + d.Namespace
	} else {
		s += " (cluster-wide)"
	}
	return s
}

// MadeBy is how the cluster was built, as far as the API shows.
type MadeBy struct {
	// Tool is kubeadm, kubespray, kops, aks, eks, gke or unknown.
	Tool     string   `json:"tool"`
	Evidence []string `json:"evidence,omitempty"`
}

// HasFindings reports whether the result must exit 1: conflicts, missing values or refused reads.
func (r *Result) HasFindings() bool {
	return len(r.Conflicts) > 0 || len(r.Missing) > 0 || len(r.Denied) > 0
}

// UnreachableError is returned when the API server cannot be reached or does not answer in time.
type UnreachableError struct {
	Host string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the API server at %s: %v", e.Host, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// NotKubernetesError is returned when the URL answers HTTP but not as a Kubernetes API server
// (a wrong port or path, a web server, a proxy without backends).
type NotKubernetesError struct {
	Host string
	// Detail says what the server answered: "GET /version returned 404 Not Found: ...".
	Detail string
}

func (e *NotKubernetesError) Error() string {
	return fmt.Sprintf("%s: not a Kubernetes API server: %s", e.Host, e.Detail)
}

// Discover reads the cluster cfg points at. ctx bounds the whole discovery (the CLI's --timeout).
// It returns an error only when discovery cannot proceed: the API server is unreachable,
// rejects the credentials, or the URL is not a Kubernetes API server. Refused reads, conflicts and gaps are in the Result.
func Discover(ctx context.Context, cfg *rest.Config, opts Options) (*Result, error) {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	typed := rest.CopyConfig(cfg)
	// Protobuf halves the time spent decoding thousands of Node objects.
	typed.ContentType = "application/vnd.kubernetes.protobuf"
	typed.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(typed)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client for %s: %w", cfg.Host, err)
	}
	r := &reader{
		cs: cs, dyn: dyn, host: cfg.Host, opts: opts,
		fields: map[string][]candidate{},
		res: &Result{
			Cluster:    newCluster(),
			Provenance: map[string]Provenance{},
		},
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"server version", r.readVersion},
		{"ServiceCIDRs", r.readServiceCIDRs},
		{"kubeadm-config", r.readKubeadmConfig},
		{"kubelet-config", r.readKubeletConfig},
		{"kube-proxy config", r.readKubeProxyConfig},
		{"control-plane pods", r.readControlPlanePods},
		{"Services", r.readServices},
		{"CoreDNS Corefile", r.readCorefile},
		{"DaemonSets", r.readDaemonSets},
		{"CNI", r.readCNI},
		{"Nodes", r.readNodes},
		{"Windows HostProcess designs", r.readHostProcess},
	}
	for _, s := range steps {
		if err := s.fn(ctx); err != nil {
			return nil, r.fatal(ctx, s.name, err)
		}
	}
	r.resolve()
	r.finish()
	return r.res, nil
}

// fatal turns an error that stops discovery into a clear one: unreachable (also on timeout),
// unauthorized, or the read that failed.
func (r *reader) fatal(ctx context.Context, step string, err error) error {
	if ctx.Err() != nil {
		d := ""
		if dl, ok := ctx.Deadline(); ok {
			d = fmt.Sprintf(" (timeout reached at %s)", dl.Format(time.RFC3339))
		}
		return &UnreachableError{Host: r.host, Err: fmt.Errorf("reading %s: %w%s", step, ctx.Err(), d)}
	}
	var nk *NotKubernetesError
	if errors.As(err, &nk) {
		return nk
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) {
		return &UnreachableError{Host: r.host, Err: err}
	}
	if apierrors.IsUnauthorized(err) {
		return fmt.Errorf("the API server at %s rejected the credentials (401): %w", r.host, err)
	}
	return fmt.Errorf("discover %s: %w", step, err)
}

// candidate is one source's value for a field; lower rank is more trusted.
type candidate struct {
	rank   int
	value  string
	source string
}

// Trust ranks, most trusted first. A field's candidates are compared only with each other.
const (
	rankAPIObject     = 10 // ServiceCIDR objects, /version, the DNS Service
	rankKubeadm       = 20
	rankKubeletConfig = 25
	rankKubeProxy     = 30
	rankControlPlane  = 40
	rankKubeProxyPod  = 45
	rankCNIConfig     = 50
	rankCorefile      = 55
	rankNodes         = 60
)

type reader struct {
	cs   kubernetes.Interface
	dyn  dynamic.Interface
	host string
	opts Options
	res  *Result

	fields map[string][]candidate

	kubernetesServiceIP string
	cni                 cniFacts
	nodePodCIDRs        []nodeCIDR
	madeBy              map[string][]string // tool -> evidence
	hp                  hostProcessFacts
	windowsNodes        int
}

func (r *reader) add(field string, rank int, value, source string) {
	if value == "" {
		return
	}
	r.fields[field] = append(r.fields[field], candidate{rank: rank, value: value, source: source})
}

func (r *reader) note(format string, args ...any) {
	r.res.Notes = append(r.res.Notes, fmt.Sprintf(format, args...))
}

func (r *reader) evidence(tool, format string, args ...any) {
	if r.madeBy == nil {
		r.madeBy = map[string][]string{}
	}
	r.madeBy[tool] = append(r.madeBy[tool], fmt.Sprintf(format, args...))
}

func (r *reader) deny(verb, resource, namespace, name string) {
	d := Denied{Verb: verb, Resource: resource, Namespace: namespace, Name: name}
	for _, e := range r.res.Denied {
		if e == d {
			return
		}
	}
	r.res.Denied = append(r.res.Denied, d)
}

// absent classifies a read error: nil and NotFound are "nothing there" (false, nil), Forbidden is
// recorded as denied (false, nil), anything else stops discovery.
func (r *reader) absent(err error, verb, resource, namespace, name string) (bool, error) {
	switch {
	case err == nil:
		return false, nil
	case apierrors.IsNotFound(err):
		return true, nil
	case apierrors.IsForbidden(err):
		r.deny(verb, resource, namespace, name)
		return true, nil
	default:
		return true, err
	}
}

// resolve picks the most trusted candidate of every field, records provenance and conflicts.
func (r *reader) resolve() {
	paths := make([]string, 0, len(r.fields))
	for p := range r.fields {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		cands := r.fields[p]
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].rank < cands[j].rank })
		chosen := cands[0]
		prov := Provenance{Source: chosen.source}
		var disagree bool
		for _, c := range cands[1:] {
			if c.value == chosen.value {
				prov.Agrees = append(prov.Agrees, c.source)
			} else {
				disagree = true
			}
		}
		if disagree {
			cf := Conflict{Field: p, Chosen: chosen.value}
			for _, c := range cands {
				cf.Values = append(cf.Values, SourcedValue{Value: c.value, Source: c.source})
			}
			r.res.Conflicts = append(r.res.Conflicts, cf)
		}
		r.res.Provenance[p] = prov
		r.set(p, chosen.value)
	}
}

func (r *reader) value(field string) string {
	cands := r.fields[field]
	if len(cands) == 0 {
		return ""
	}
	best := cands[0]
	for _, c := range cands[1:] {
		if c.rank < best.rank {
			best = c
		}
	}
	return best.value
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func newCluster() *v1alpha1.Cluster {
	return &v1alpha1.Cluster{APIVersion: v1alpha1.GroupVersion, Kind: v1alpha1.KindCluster}
}
