package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/kubewin/kubewin/internal/rollout/api"
)

// A rollout is recorded in a ConfigMap per pool in the orchestrator's namespace (the nodes
// never read it: what a node needs is on its own Node). It holds what `rollout start` asked and
// the rollout's state, so an orchestrator started later (the in-cluster one, or a restarted
// CLI) knows what to do, and `rollout pause|resume|abort` only change it.

// DefaultNamespace is where rollouts, their Leases and http probe pods live.
const DefaultNamespace = "kube-system"

// State of a rollout.
type State string

const (
	StateRunning   State = "Running"
	StatePaused    State = "Paused"
	StateAborted   State = "Aborted"
	StateHalted    State = "Halted"
	StateSucceeded State = "Succeeded"
)

// Final reports whether nothing more happens in state s.
func (s State) Final() bool { return s == StateAborted || s == StateHalted || s == StateSucceeded }

// Spec is what `rollout start` asked.
type Spec struct {
	Pool           string       `json:"pool"`
	Revision       api.Revision `json:"revision"`
	MaxUnavailable int          `json:"maxUnavailable"`
	Canary         int          `json:"canary"`
	Probes         []string     `json:"probes,omitempty"`
}

// Validate checks s and parses its probes.
func (s *Spec) Validate() ([]Probe, error) {
	if errs := validation.IsDNS1123Label(s.Pool); len(errs) > 0 {
		return nil, fmt.Errorf("pool %q: %s", s.Pool, strings.Join(errs, "; "))
	}
	if len("kubewin-rollout-"+s.Pool) > validation.DNS1123LabelMaxLength {
		return nil, fmt.Errorf("pool %q: at most %d characters", s.Pool, validation.DNS1123LabelMaxLength-len("kubewin-rollout-"))
	}
	if err := s.Revision.Validate(); err != nil {
		return nil, err
	}
	if s.MaxUnavailable < 1 {
		return nil, fmt.Errorf("--max-unavailable %d: at least 1", s.MaxUnavailable)
	}
	if s.Canary < 0 {
		return nil, fmt.Errorf("--canary %d: not a count", s.Canary)
	}
	probes := make([]Probe, 0, len(s.Probes))
	for _, raw := range s.Probes {
		p, err := ParseProbe(raw)
		if err != nil {
			return nil, err
		}
		probes = append(probes, p)
	}
	return probes, nil
}

// Record is a rollout as stored.
type Record struct {
	Spec   Spec   `json:"spec"`
	State  State  `json:"state"`
	Reason string `json:"reason,omitempty"`
	// ID names this rollout on the Nodes (api.AnnotationRollout): pool, revision and the
	// ConfigMap's UID, so a second rollout of the same pool to the same revision is new.
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
}

// Object names of a pool's rollout.
func configMapName(pool string) string { return "kubewin-rollout-" + pool }

// LeaseName is the pool's Lease: only its holder acts on the pool.
func LeaseName(pool string) string { return "kubewin-rollout-" + pool }

// labelRollout marks the rollout ConfigMaps (the in-cluster orchestrator lists them).
const labelRollout = "kubewin.io/rollout"

type store struct {
	client    kubernetes.Interface
	namespace string
}

func (s store) get(ctx context.Context, pool string) (*Record, error) {
	cm, err := s.client.CoreV1().ConfigMaps(s.namespace).Get(ctx, configMapName(pool), metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read rollout of pool %s: %w", pool, err)
	}
	return decodeRecord(cm)
}

func decodeRecord(cm *corev1.ConfigMap) (*Record, error) {
	var r Record
	if err := json.Unmarshal([]byte(cm.Data["rollout"]), &r); err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return &r, nil
}

func encodeRecord(cm *corev1.ConfigMap, r *Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["rollout"] = string(b)
	return nil
}

// create records a new rollout; an unfinished one of the same pool is an error.
func (s store) create(ctx context.Context, spec Spec, now time.Time) (*Record, error) {
	cms := s.client.CoreV1().ConfigMaps(s.namespace)
	if old, err := cms.Get(ctx, configMapName(spec.Pool), metav1.GetOptions{}); err == nil {
		r, err := decodeRecord(old)
		if err == nil && !r.State.Final() {
			return nil, fmt.Errorf("pool %s already has a rollout to %s (%s); abort it first", spec.Pool, r.Spec.Revision.Name, r.State)
		}
		if err := cms.Delete(ctx, old.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &old.UID}}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("remove the finished rollout of pool %s: %w", spec.Pool, err)
		}
	} else if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("read rollout of pool %s: %w", spec.Pool, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: configMapName(spec.Pool), Namespace: s.namespace, Labels: map[string]string{labelRollout: spec.Pool}}}
	rec := &Record{Spec: spec, State: StateRunning, Started: now.UTC().Truncate(time.Second)}
	if err := encodeRecord(cm, rec); err != nil {
		return nil, err
	}
	created, err := cms.Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("record the rollout of pool %s: %w", spec.Pool, err)
	}
	// The ID needs the UID the API server gave.
	rec.ID = spec.Pool + "/" + spec.Revision.Name + "/" + string(created.UID)[:8]
	if err := encodeRecord(created, rec); err != nil {
		return nil, err
	}
	if _, err := cms.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		return nil, fmt.Errorf("record the rollout of pool %s: %w", spec.Pool, err)
	}
	return rec, nil
}

// update changes a rollout's state through change (which says whether to write), retrying on
// conflicts with writes of the CLI or the orchestrator.
func (s store) update(ctx context.Context, pool string, change func(r *Record) (bool, error)) (*Record, error) {
	var out *Record
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cm, err := s.client.CoreV1().ConfigMaps(s.namespace).Get(ctx, configMapName(pool), metav1.GetOptions{})
		if err != nil {
			return err
		}
		r, err := decodeRecord(cm)
		if err != nil {
			return err
		}
		write, err := change(r)
		if err != nil || !write {
			out = r
			return err
		}
		if err := encodeRecord(cm, r); err != nil {
			return err
		}
		if _, err := s.client.CoreV1().ConfigMaps(s.namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			return err
		}
		out = r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("update the rollout of pool %s: %w", pool, err)
	}
	return out, nil
}
