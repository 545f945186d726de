// Package api is the contract between the rollout orchestrator (internal/rollout, cluster side)
// and the node service (internal/upgrade, node side) of `kubewin rollout`. Everything they say
// to each other lives on the node's own Node object, as annotations:
//
//   - The orchestrator writes the request: the revision the node should run (AnnotationTarget,
//     the whole Revision as JSON), what to do with it (AnnotationAction: Apply or Rollback) and a
//     fresh request ID (AnnotationRequest) for every new request. It also writes its own view of
//     the node's progress (AnnotationPhase, AnnotationReason) for `kubectl` users and for an
//     orchestrator that takes over.
//   - The node service reads its own Node (a kubelet credential may get its own Node: the Node
//     authorizer, k8s.io/kubernetes v1.37.1 plugin/pkg/auth/authorizer/node/node_authorizer.go;
//     it could NOT read a ConfigMap that no pod on the node references, which is why the
//     revision travels in an annotation and not in a ConfigMap) and answers in the node-owned
//     keys (AnnotationNodePhase, AnnotationNodeReason, AnnotationObserved, AnnotationCurrent,
//     AnnotationPrevious). NodeRestriction lets a node change its own Node's annotations, not its
//     taints (plugin/pkg/admission/noderestriction/admission.go), so cordoning stays with the
//     orchestrator.
//
// Every key has exactly one writer: orchestrator keys are never written by the node service and
// node keys never by the orchestrator, so neither needs to merge the other's writes (a JSON merge
// patch of its own keys is enough). A node phase answers a request only when AnnotationObserved
// equals AnnotationRequest: an "Applied" left over from an earlier rollout is not an answer.
//
// The sequence for one node:
//
//	orchestrator: phase Cordoned → Draining → (sets target, action Apply, new request) Applying
//	node service: node-phase Applying → [Rebooting → Applying] → Applied   (or Failed + reason)
//	node service: after Applied, runs its flow checks once → flow-check {request, passed}
//	orchestrator: phase Verifying (gates: Ready, node service condition, flow-check, probes)
//	              → uncordon → Succeeded
//	on a failed gate or node-phase Failed:
//	orchestrator: (action Rollback, new request) RollingBack
//	node service: node-phase RollingBack → [Rebooting] → RolledBack        (or Failed: stuck)
//	orchestrator: waits for RolledBack and Ready → phase RolledBack (the pool halts), Event on the Node
package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Prefix of every rollout annotation.
const Prefix = "rollout.kubewin.io/"

// LabelPool is the Node label that puts a node in a pool: `kubewin rollout start --pool NAME`
// acts on the Nodes labelled kubewin.io/pool=NAME. An admin sets it; NodeRestriction does not
// stop a node from setting this label on itself, so it selects nodes and grants nothing.
const LabelPool = "kubewin.io/pool"

// Orchestrator-owned annotations (written only by internal/rollout).
const (
	// AnnotationTarget is the Revision the node should run, as JSON (EncodeRevision). For a
	// rollback it still names the revision that was being applied: the node rolls back to its
	// own AnnotationPrevious.
	AnnotationTarget = Prefix + "target"
	// AnnotationAction is ActionApply or ActionRollback.
	AnnotationAction = Prefix + "action"
	// AnnotationRequest is an opaque ID, new for every request (apply or rollback). The node
	// service acts on a request ID at most once and echoes it in AnnotationObserved.
	AnnotationRequest = Prefix + "request"
	// AnnotationPhase is the orchestrator's phase for this node (a Phase).
	AnnotationPhase = Prefix + "phase"
	// AnnotationReason says why the node is in its phase (the failed gate, the refusal).
	AnnotationReason = Prefix + "reason"
	// AnnotationRollout names the rollout (pool/revision) that set AnnotationPhase, so a node
	// left from another pool's or an earlier rollout is not mistaken for this one's.
	AnnotationRollout = Prefix + "rollout"
	// AnnotationPhaseSince is when AnnotationPhase was set (RFC 3339, UTC): a resumed
	// orchestrator keeps the deadline of the phase it finds.
	AnnotationPhaseSince = Prefix + "phase-since"
	// AnnotationStarted is when the rollout began on this node (its cordon), RFC 3339 UTC.
	AnnotationStarted = Prefix + "started"
)

// Node-owned annotations (written only by the node service, internal/upgrade).
const (
	// AnnotationNodePhase is the node service's progress on the request in AnnotationObserved
	// (a NodePhase).
	AnnotationNodePhase = Prefix + "node-phase"
	// AnnotationNodeReason explains AnnotationNodePhase (the failed step, the exit code, the
	// KB that asked for a reboot); empty when there is nothing to say.
	AnnotationNodeReason = Prefix + "node-reason"
	// AnnotationObserved is the AnnotationRequest the node-phase answers.
	AnnotationObserved = Prefix + "observed"
	// AnnotationCurrent is the name of the revision the node runs now (after Applied: the
	// target's name; after RolledBack: the previous one's).
	AnnotationCurrent = Prefix + "current"
	// AnnotationPrevious is the name of the revision the node keeps for a rollback (its
	// binaries renamed aside, the KBs it installed recorded); empty when it keeps none.
	AnnotationPrevious = Prefix + "previous"
	// AnnotationFlowCheck is the result of the live flow checks (the probes of `kubewin node
	// check`, internal/nodecheck, from the node's pod network) that the node service runs
	// once after it reported Applied, as JSON FlowCheck. The node service's periodic check
	// (every --check-interval, 5 min by default) is too late and too old for a gate; this one
	// answers the request. The orchestrator's flow-check gate waits for it.
	AnnotationFlowCheck = Prefix + "flow-check"
)

// FlowCheck is the AnnotationFlowCheck value.
type FlowCheck struct {
	// Request is the AnnotationRequest (an Apply) the check ran under.
	Request string `json:"request"`
	Passed  bool   `json:"passed"`
	// Failed lists the failed flows as nodecheck reports them ("pod→service Service
	// default/kubernetes 10.96.0.1:443 (TLS): ..."); empty when Passed.
	Failed string `json:"failed,omitempty"`
}

// FlowCheckReport is the node service's JSON merge patch body that publishes a flow check.
func FlowCheckReport(fc FlowCheck) ([]byte, error) {
	v, err := json.Marshal(fc)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{AnnotationFlowCheck: string(v)}}})
}

// DecodeFlowCheck parses an AnnotationFlowCheck value.
func DecodeFlowCheck(s string) (FlowCheck, error) {
	var fc FlowCheck
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fc); err != nil {
		return FlowCheck{}, fmt.Errorf("decode %s: %w", AnnotationFlowCheck, err)
	}
	return fc, nil
}

// Action is what the orchestrator asks of the node.
type Action string

const (
	// ActionApply: install AnnotationTarget, keeping what runs now for a rollback.
	ActionApply Action = "Apply"
	// ActionRollback: go back to AnnotationPrevious (binaries renamed back, `wusa /uninstall
	// /kb:` or DISM /Remove-Package for OS updates the apply installed), services restarted.
	ActionRollback Action = "Rollback"
)

// Phase is the orchestrator's phase for a node (AnnotationPhase).
type Phase string

const (
	// PhasePending: in the rollout, not started.
	PhasePending Phase = "Pending"
	// PhaseCordoned: spec.unschedulable set by the rollout.
	PhaseCordoned Phase = "Cordoned"
	// PhaseDraining: evicting pods through the Eviction API.
	PhaseDraining Phase = "Draining"
	// PhaseApplying: the target is set; waiting for the node service's Applied.
	PhaseApplying Phase = "Applying"
	// PhaseVerifying: Applied; running the gates.
	PhaseVerifying Phase = "Verifying"
	// PhaseSucceeded: gates passed, uncordoned.
	PhaseSucceeded Phase = "Succeeded"
	// PhaseRollingBack: a gate failed (or the apply did); waiting for RolledBack and Ready.
	PhaseRollingBack Phase = "RollingBack"
	// PhaseRolledBack: the node runs its previous revision and is Ready again; it stays
	// cordoned until an admin looks (the rollout halted on it).
	PhaseRolledBack Phase = "RolledBack"
	// PhaseFailed: the rollback failed or timed out; the node needs a person.
	PhaseFailed Phase = "Failed"
)

// NodePhase is the node service's progress (AnnotationNodePhase).
type NodePhase string

const (
	// NodeApplying: downloading, checking checksums, renaming aside, installing.
	NodeApplying NodePhase = "Applying"
	// NodeRebooting: an OS update asked for a restart (wusa exit 3010 ERROR_SUCCESS_REBOOT_REQUIRED
	// and its siblings); written before the reboot, replaced after it.
	NodeRebooting NodePhase = "Rebooting"
	// NodeApplied: the target runs and the node's services were restarted in dependency order.
	// The node service's own health (its Node condition) is judged by the orchestrator's gates.
	NodeApplied NodePhase = "Applied"
	// NodeRollingBack: putting the previous revision back.
	NodeRollingBack NodePhase = "RollingBack"
	// NodeRolledBack: the previous revision runs again.
	NodeRolledBack NodePhase = "RolledBack"
	// NodeFailed: the request could not be carried out (AnnotationNodeReason says why). After a
	// failed Apply the orchestrator asks for a Rollback; after a failed Rollback it gives up.
	NodeFailed NodePhase = "Failed"
)

// Revision is what a node should run. Component versions are Kubernetes-style ("v1.37.1");
// empty means "leave as it is". Binaries come from the same kind of source join installs from
// (internal/join Binaries: a directory or an https base URL holding SHA256SUMS), and Checksums
// pin them so a changed mirror cannot change a revision.
type Revision struct {
	// Name identifies the revision ("1.37.2-kb5040000"); a DNS-1123 label-ish name.
	Name string `json:"name"`
	// Kubelet, KubeProxy: Kubernetes versions; the version-skew policy is checked against them.
	Kubelet   string `json:"kubelet,omitempty"`
	KubeProxy string `json:"kubeProxy,omitempty"`
	// Containerd and CNIPlugins are their projects' versions (informational to the node
	// service: the checksums decide what is installed).
	Containerd string `json:"containerd,omitempty"`
	CNIPlugins string `json:"cniPlugins,omitempty"`
	// Binaries is where the component binaries come from; nil when the revision changes only
	// the OS.
	Binaries *BinarySource `json:"binaries,omitempty"`
	// OSUpdates are Windows updates to install (in order); Linux nodes refuse a revision with
	// OS updates.
	OSUpdates []OSUpdate `json:"osUpdates,omitempty"`
}

// BinarySource is a binaries directory or mirror in join's layout.
type BinarySource struct {
	// Source is a local directory on the node or an https:// base URL holding SHA256SUMS.
	Source string `json:"source"`
	// Checksums maps each file the revision installs, by its name in SHA256SUMS
	// ("kubelet.exe", "cni/win-bridge.exe", "kubelet"), to its lowercase hex sha256. The node
	// service installs exactly these files and refuses any whose content differs.
	Checksums map[string]string `json:"checksums"`
}

// OSUpdate is one Windows update package.
type OSUpdate struct {
	// KB is the knowledge-base number ("KB5040000"): `wusa /uninstall /kb:` takes it without
	// the prefix.
	KB string `json:"kb"`
	// URL of the .msu or .cab (https, or a path on the node).
	URL string `json:"url"`
	// SHA256 of the package, lowercase hex.
	SHA256 string `json:"sha256"`
}

var (
	nameRE    = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$`)
	versionRE = regexp.MustCompile(`^v?[0-9]+\.[0-9]+(\.[0-9]+)?([-+][0-9A-Za-z.+-]*)?$`)
	shaRE     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	kbRE      = regexp.MustCompile(`^KB[0-9]{6,8}$`)
)

// Validate reports the first problem with r, naming its field.
func (r *Revision) Validate() error {
	if !nameRE.MatchString(r.Name) {
		return fmt.Errorf("revision name %q: want lowercase letters, digits, '.' and '-', at most 63", r.Name)
	}
	for _, v := range []struct{ field, val string }{{"kubelet", r.Kubelet}, {"kubeProxy", r.KubeProxy}} {
		if v.val != "" && !versionRE.MatchString(v.val) {
			return fmt.Errorf("revision %s: %s version %q is not a version like v1.37.1", r.Name, v.field, v.val)
		}
	}
	if b := r.Binaries; b != nil {
		if b.Source == "" {
			return fmt.Errorf("revision %s: binaries.source is empty", r.Name)
		}
		if strings.HasPrefix(b.Source, "http://") {
			return fmt.Errorf("revision %s: binaries.source %s: plain http is not accepted (unauthenticated binaries)", r.Name, b.Source)
		}
		if len(b.Checksums) == 0 {
			return fmt.Errorf("revision %s: binaries.checksums is empty (every installed file must be pinned)", r.Name)
		}
		for _, name := range sortedKeys(b.Checksums) {
			if !shaRE.MatchString(b.Checksums[name]) {
				return fmt.Errorf("revision %s: binaries.checksums[%q] = %q is not a lowercase hex sha256", r.Name, name, b.Checksums[name])
			}
		}
	}
	if (r.Kubelet != "" || r.KubeProxy != "" || r.Containerd != "" || r.CNIPlugins != "") && r.Binaries == nil {
		return fmt.Errorf("revision %s: component versions are set but binaries is not (where would they come from?)", r.Name)
	}
	for i, u := range r.OSUpdates {
		if !kbRE.MatchString(u.KB) {
			return fmt.Errorf("revision %s: osUpdates[%d].kb %q: want KB followed by its number", r.Name, i, u.KB)
		}
		if u.URL == "" || strings.HasPrefix(u.URL, "http://") {
			return fmt.Errorf("revision %s: osUpdates[%d].url %q: want https or a path on the node", r.Name, i, u.URL)
		}
		if !shaRE.MatchString(u.SHA256) {
			return fmt.Errorf("revision %s: osUpdates[%d].sha256 %q is not a lowercase hex sha256", r.Name, i, u.SHA256)
		}
	}
	if r.Binaries == nil && len(r.OSUpdates) == 0 {
		return fmt.Errorf("revision %s changes nothing (no binaries, no OS updates)", r.Name)
	}
	return nil
}

// EncodeRevision is the annotation value of r: compact JSON, map keys sorted (encoding/json
// sorts them), so the same revision always gives the same bytes.
func EncodeRevision(r *Revision) (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("encode revision %s: %w", r.Name, err)
	}
	return string(b), nil
}

// DecodeRevision parses an AnnotationTarget value strictly (an unknown field is an error: a
// node service older than the orchestrator must not silently skip part of a revision) and
// validates it.
func DecodeRevision(s string) (*Revision, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	var r Revision
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decode revision: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode revision: data after the JSON object")
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// NodeState is every rollout annotation of one Node, read by either side.
type NodeState struct {
	// Orchestrator side.
	Target     string // raw JSON; DecodeRevision it
	Action     Action
	Request    string
	Phase      Phase
	Reason     string
	Rollout    string
	PhaseSince string
	Started    string
	// Node side.
	NodePhase  NodePhase
	NodeReason string
	Observed   string
	Current    string
	Previous   string
	FlowCheck  string // raw JSON; DecodeFlowCheck it
}

// ReadNodeState reads the annotations of a Node.
func ReadNodeState(annotations map[string]string) NodeState {
	a := annotations
	return NodeState{
		Target: a[AnnotationTarget], Action: Action(a[AnnotationAction]), Request: a[AnnotationRequest],
		Phase: Phase(a[AnnotationPhase]), Reason: a[AnnotationReason], Rollout: a[AnnotationRollout],
		PhaseSince: a[AnnotationPhaseSince], Started: a[AnnotationStarted],
		NodePhase: NodePhase(a[AnnotationNodePhase]), NodeReason: a[AnnotationNodeReason],
		Observed: a[AnnotationObserved], Current: a[AnnotationCurrent], Previous: a[AnnotationPrevious],
		FlowCheck: a[AnnotationFlowCheck],
	}
}

// Answered reports whether the node-side keys answer the current request.
func (s NodeState) Answered() bool { return s.Request != "" && s.Observed == s.Request }

// NodeReport is the node service's answer as a JSON merge patch body for its own Node
// (PATCH with types.MergePatchType): it sets only node-owned keys.
func NodeReport(request string, phase NodePhase, reason, current, previous string) ([]byte, error) {
	return json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		AnnotationObserved: request, AnnotationNodePhase: string(phase), AnnotationNodeReason: reason,
		AnnotationCurrent: current, AnnotationPrevious: previous,
	}}})
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
