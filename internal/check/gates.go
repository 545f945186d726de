package check

import (
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"

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
// newest supported release (platform.FeatureGates, generated from k8s.io/kubernetes/pkg/features),
// which record every gate's stage per release, plus platform.FeatureGateChanges for gates
// already deleted from it. The specs are loaded into a real component-base feature gate, so
// setting gates from a config file behaves exactly as in the kubelet and kube-proxy.
type GateRegistry struct {
	specs map[string]featuregate.VersionedSpecs
	// gate is the newest release's registry at its own version, never set: Effective copies it.
	gate featuregate.MutableVersionedFeatureGate
}

// NewGateRegistry builds the registry from the generated table.
func NewGateRegistry() (*GateRegistry, error) {
	all := platform.FeatureGates()
	specs := make(map[featuregate.Feature]featuregate.VersionedSpecs, len(all))
	deps := map[featuregate.Feature][]featuregate.Feature{}
	byName := make(map[string]featuregate.VersionedSpecs, len(all))
	for _, g := range all {
		vs := make(featuregate.VersionedSpecs, 0, len(g.Stages))
		prevMin := ""
		for i, s := range g.Stages {
			v, err := version.Parse(s.Version)
			if err != nil {
				return nil, fmt.Errorf("feature gate %s: version %q: %w", g.Name, s.Version, err)
			}
			fs := featuregate.FeatureSpec{Version: version.MajorMinor(v.Major(), v.Minor()), Default: s.Default, LockToDefault: s.LockToDefault}
			switch s.PreRelease {
			case string(featuregate.PreAlpha):
				fs.PreRelease = featuregate.PreAlpha
			case string(featuregate.Alpha):
				fs.PreRelease = featuregate.Alpha
			case string(featuregate.Beta):
				fs.PreRelease = featuregate.Beta
			case string(featuregate.GA):
				fs.PreRelease = featuregate.GA
			case string(featuregate.Deprecated):
				fs.PreRelease = featuregate.Deprecated
			default:
				return nil, fmt.Errorf("feature gate %s: unknown stage %q", g.Name, s.PreRelease)
			}
			// The table holds the registry's completed specs, where a stage inherits the previous
			// stage's MinCompatibilityVersion; AddVersioned wants it only where it is introduced.
			if s.MinCompatibilityVersion != "" && (i == 0 || s.MinCompatibilityVersion != prevMin) {
				mv, err := version.Parse(s.MinCompatibilityVersion)
				if err != nil {
					return nil, fmt.Errorf("feature gate %s: min compatibility version %q: %w", g.Name, s.MinCompatibilityVersion, err)
				}
				fs.MinCompatibilityVersion = version.MajorMinor(mv.Major(), mv.Minor())
			}
			prevMin = s.MinCompatibilityVersion
			vs = append(vs, fs)
		}
		specs[featuregate.Feature(g.Name)] = vs
		for _, d := range g.DependsOn {
			deps[featuregate.Feature(g.Name)] = append(deps[featuregate.Feature(g.Name)], featuregate.Feature(d))
		}
	}
	rel, err := version.Parse(platform.FeatureGatesRelease())
	if err != nil {
		return nil, fmt.Errorf("feature gate release %q: %w", platform.FeatureGatesRelease(), err)
	}
	gate := featuregate.NewVersionedFeatureGate(version.MajorMinor(rel.Major(), rel.Minor()))
	if err := gate.AddVersioned(specs); err != nil {
		return nil, fmt.Errorf("feature gate table: %w", err)
	}
	if err := gate.AddDependencies(deps); err != nil {
		return nil, fmt.Errorf("feature gate dependencies: %w", err)
	}
	// Read back the completed specs (MinCompatibilityVersion inherited), as the registry has them.
	for k, v := range gate.GetAllVersioned() {
		byName[string(k)] = v
	}
	return &GateRegistry{specs: byName, gate: gate}, nil
}

// Effective returns the newest release's feature gate with m applied, as the kubelet and
// kube-proxy merge a config file's featureGates into their own gate. The error is the one they
// report (unrecognized gate, locked gate, pre-alpha gate).
func (g *GateRegistry) Effective(m map[string]bool) (featuregate.MutableVersionedFeatureGate, error) {
	fg := g.gate.DeepCopy()
	// The binaries log "setting GA feature gate" warnings; kubewin writes only its report.
	if wl, ok := fg.(featuregate.MutableFeatureGateWithLogger); ok {
		return fg, wl.SetFromMapWithLogger(logr.Discard(), m)
	}
	return fg, fg.SetFromMap(m)
}

// State returns gate name as release v knows it. A gate absent from the registry is unknown
// (the binary rejects it as "unrecognized feature gate").
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

// Judge classifies "name=value" for release v. For releases older than the registry's, gates
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
		// An older release and a gate the registry never heard of: it may have been removed
		// since, and only the history table could tell.
		out.Unverifiable = true
	}
	return out
}
