package check

import (
	"k8s.io/apimachinery/pkg/util/version"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"

	// Registers every Kubernetes feature gate with utilfeature.DefaultMutableFeatureGate.
	_ "k8s.io/kubernetes/pkg/features"

	"github.com/kubewin/kubewin/internal/platform"
)

// GateState is a feature gate as a given release sees it.
type GateState struct {
	Known      bool
	Default    bool
	Locked     bool
	PreRelease string
	// Since is the release the returned state starts at.
	Since string
}

// GateRegistry answers questions about feature gates from the versioned gate specs of the
// Kubernetes release kubewin links (k8s.io/kubernetes/pkg/features), which record every gate's
// stage per release, plus platform.FeatureGateChanges for gates already deleted from it.
type GateRegistry struct {
	specs map[string]featuregate.VersionedSpecs
}

// NewGateRegistry copies the versioned specs; the global gate is only read.
func NewGateRegistry() *GateRegistry {
	all := utilfeature.DefaultMutableFeatureGate.GetAllVersioned()
	m := make(map[string]featuregate.VersionedSpecs, len(all))
	for k, v := range all {
		m[string(k)] = v
	}
	return &GateRegistry{specs: m}
}

// State returns gate name as release v knows it. A gate absent from the linked registry is
// unknown (the binary rejects it as "unrecognized feature gate").
func (g *GateRegistry) State(name string, v platform.Version) GateState {
	specs, ok := g.specs[name]
	if !ok {
		return GateState{}
	}
	target := version.MajorMinor(uint(v.Major), uint(v.Minor))
	var best *featuregate.FeatureSpec
	for i := range specs {
		s := specs[i]
		if s.Version != nil && s.Version.GreaterThan(target) {
			continue
		}
		if best == nil || best.Version == nil || (s.Version != nil && s.Version.GreaterThan(best.Version)) {
			best = &specs[i]
		}
	}
	if best == nil {
		// Introduced after the target release.
		return GateState{}
	}
	st := GateState{Known: true, Default: best.Default, Locked: best.LockToDefault, PreRelease: string(best.PreRelease)}
	if best.Version != nil {
		st.Since = best.Version.String()
	}
	return st
}

// GateVerdict classifies a feature gate setting for a component in release v.
type GateVerdict struct {
	// Unknown: the release does not recognise the gate (the binary exits).
	Unknown bool
	// LockedConflict: the gate is locked to its default and the setting differs (exits).
	LockedConflict bool
	// Redundant: the gate is GA/locked and set to its default (harmless, can go).
	Redundant bool
	// Unverifiable: an older release and a gate neither the registry nor the history knows.
	Unverifiable bool
	State        GateState
	History      platform.FeatureGateChange
	HasHist      bool
}

// Judge classifies "name=value" for release v. For releases older than the linked one, gates
// the registry does not know are judged by the history table only.
func (g *GateRegistry) Judge(name string, value bool, v, newest platform.Version) GateVerdict {
	h, hasHist := platform.LookupFeatureGateChange(name)
	st := g.State(name, v)
	out := GateVerdict{State: st, History: h, HasHist: hasHist}
	switch {
	case st.Known:
		if st.Locked && value != st.Default {
			out.LockedConflict = true
		} else if st.Locked || st.PreRelease == string(featuregate.GA) {
			out.Redundant = value == st.Default
		}
	case hasHist && h.RemovedIn(v):
		out.Unknown = true
	case hasHist:
		// Still known in that (older) release.
		if h.LockedIn(v) && !value {
			out.LockedConflict = true
		}
	case !v.Less(newest) || len(g.specs[name]) > 0:
		out.Unknown = true
	default:
		// An older release and a gate the linked registry never heard of: it may have been
		// removed since, and only the history table could tell.
		out.Unverifiable = true
	}
	return out
}
