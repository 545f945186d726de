// Package nodestatus says, from the node and to the cluster, whether a kubewin node is healthy
// and why not — so a failing node is explained without logging in to it. The node service
// assesses its supervised services (and the join's progress), runs kubewin's diagnose engine
// over a failing service's recent log, and publishes the result as a Node condition of its own
// (ConditionType) with Events on transitions, using the node's own credential: a node may patch
// its own Node's status and create Events (k8s.io/kubernetes v1.37.1
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go NodeRules). `kubewin status` reads
// the conditions back on the admin side.
package nodestatus

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/kubewin/kubewin/internal/diagnose"
	"github.com/kubewin/kubewin/internal/noderun"
)

// ConditionType is the Node condition the node service owns (True: healthy). The kubelet keeps
// conditions it does not own when it updates the Node's status, as it does for
// node-problem-detector's.
const ConditionType = "KubewinNodeService"

// Reasons of the condition.
const (
	ReasonHealthy        = "ServicesRunning"
	ReasonJoining        = "Joining"
	ReasonJoinFailed     = "JoinFailed"
	ReasonServiceWaiting = "ServiceWaiting"
	ReasonServiceFailing = "ServiceFailing"
	// ReasonRepairFailing: the services run but the node service cannot put back what they
	// need (the pod network, a route, the HNS network on its adapter).
	ReasonRepairFailing = "RepairFailing"
	// ReasonCredentialExpired: the node's own credential (the kubelet's client certificate,
	// also kube-proxy's) is no longer valid; only a new join fixes it.
	ReasonCredentialExpired = "CredentialExpired"
	// ReasonFlowCheckFailing: the services run, but a live flow check from the node's pod
	// network failed (kubewin node check).
	ReasonFlowCheckFailing = "FlowCheckFailing"
	// ReasonRepaired is the Event reason of a repair (the condition keeps its own reason).
	ReasonRepaired = "Repaired"
)

// Health is one assessment of the node.
type Health struct {
	Healthy bool   `json:"healthy"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Diagnosis is the diagnose finding that explains a failing service, when one matched.
	Diagnosis *Diagnosis `json:"diagnosis,omitempty"`
}

// Diagnosis is the top diagnose finding over a failing service's recent log.
type Diagnosis struct {
	Service string `json:"service"`
	ID      string `json:"id"`
	Cause   string `json:"cause"`
	Fix     string `json:"fix"`
	Sample  string `json:"sample"`
}

// JoinProgress is what the assessment needs from the join state.
type JoinProgress struct {
	Joined bool
	Step   string
	Error  string
}

// logTailBytes is how much of a failing service's log is diagnosed: its last restarts, not
// errors from days ago that a later start fixed.
const logTailBytes = 64 << 10

// Assessor turns the supervisor's status into Health.
type Assessor struct {
	cat *diagnose.Catalogue
	// Manifest gives each service's log file.
	Manifest func() (*noderun.Manifest, error)
}

// NewAssessor compiles the diagnose catalogue once.
func NewAssessor(manifest func() (*noderun.Manifest, error)) (*Assessor, error) {
	cat, err := diagnose.DefaultCatalogue()
	if err != nil {
		return nil, fmt.Errorf("compile the diagnose catalogue: %w", err)
	}
	return &Assessor{cat: cat, Manifest: manifest}, nil
}

// Assess judges the node: a join that has not finished or failed, then every service in
// manifest order. A service is failing once it has exited again (restarts > 0 and not running)
// or sits in backoff; the first failing one is diagnosed.
func (a *Assessor) Assess(ctx context.Context, st noderun.Status, join *JoinProgress) Health {
	if join != nil && join.Error != "" {
		return Health{Reason: ReasonJoinFailed, Message: fmt.Sprintf("join step %s failed: %s", join.Step, join.Error)}
	}
	var waiting []string
	for _, s := range sortedServices(st) {
		switch s.State {
		case noderun.StateRunning:
			continue
		case noderun.StateWaiting, noderun.StateStarting:
			if s.Restarts == 0 {
				w := s.Name
				if s.WaitingFor != "" {
					w += " (waiting for " + s.WaitingFor + ")"
				}
				waiting = append(waiting, w)
				continue
			}
		}
		h := Health{Reason: ReasonServiceFailing, Message: failureMessage(s)}
		h.Diagnosis = a.diagnose(ctx, s)
		if d := h.Diagnosis; d != nil {
			h.Message += fmt.Sprintf("; diagnosed %s: %s Fix: %s", d.ID, d.Cause, d.Fix)
		}
		return h
	}
	if len(waiting) > 0 {
		return Health{Reason: ReasonServiceWaiting, Message: "not started yet: " + strings.Join(waiting, ", ")}
	}
	if join != nil && !join.Joined {
		return Health{Healthy: true, Reason: ReasonJoining, Message: "services running; join at step " + join.Step}
	}
	names := make([]string, 0, len(st.Services))
	for _, s := range sortedServices(st) {
		names = append(names, s.Name)
	}
	return Health{Healthy: true, Reason: ReasonHealthy, Message: "running: " + strings.Join(names, ", ")}
}

func sortedServices(st noderun.Status) []noderun.ServiceStatus {
	out := append([]noderun.ServiceStatus(nil), st.Services...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func failureMessage(s noderun.ServiceStatus) string {
	msg := fmt.Sprintf("service %s is %s after %d restarts", s.Name, s.State, s.Restarts)
	if e := s.LastExit; e != nil {
		switch {
		case e.Error != "":
			msg += ": " + e.Error
		case e.Signal != "":
			msg += ": killed by " + e.Signal
		default:
			msg += fmt.Sprintf(": exit code %d", e.Code)
		}
	}
	return msg
}

// diagnose runs the catalogue over what the service's last run wrote before it exited (the
// supervisor keeps those lines), and only when that explains nothing over the tail of its log
// file; the first error finding wins. Last-run lines first, because a log file also holds
// errors of earlier runs that were fixed since.
func (a *Assessor) diagnose(ctx context.Context, s noderun.ServiceStatus) *Diagnosis {
	var inputs [][]byte
	if s.LastExit != nil && len(s.LastExit.LogTail) > 0 {
		inputs = append(inputs, []byte(strings.Join(s.LastExit.LogTail, "\n")+"\n"))
	}
	if a.Manifest != nil {
		if m, err := a.Manifest(); err == nil {
			for _, svc := range m.Services {
				if svc.Name == s.Name {
					inputs = append(inputs, readTail(svc.LogFile, logTailBytes))
				}
			}
		}
	}
	for _, in := range inputs {
		if len(in) == 0 {
			continue
		}
		rep := diagnose.Scan(ctx, a.cat, []string{"-"}, bytes.NewReader(in), diagnose.Options{Workers: 1})
		for _, f := range rep.Findings {
			if f.Severity == diagnose.SevError {
				return &Diagnosis{Service: s.Name, ID: f.ID, Cause: f.Cause, Fix: f.Fix, Sample: f.Sample}
			}
		}
	}
	return nil
}

func readTail(path string, n int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	if st.Size() > n {
		if _, err := f.Seek(st.Size()-n, io.SeekStart); err != nil {
			return nil
		}
	}
	data, _ := io.ReadAll(f)
	if st.Size() > n {
		// Drop the partial first line.
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return data
}

// Equal reports whether two assessments would publish the same condition.
func (h Health) Equal(o Health) bool {
	return h.Healthy == o.Healthy && h.Reason == o.Reason && h.Message == o.Message
}

// now is time.Now, truncated as the API stores it.
func now() time.Time { return time.Now().UTC().Truncate(time.Second) }

// Problem is a repair error that names its own reason: it decides the node's health whatever
// the services' state, because what it reports keeps them from working (an expired credential).
type Problem struct {
	Reason string
	Err    error
}

func (p *Problem) Error() string { return p.Err.Error() }
func (p *Problem) Unwrap() error { return p.Err }
