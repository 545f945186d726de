package check

import (
	goflag "flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	cliflag "k8s.io/component-base/cli/flag"
	logsapi "k8s.io/component-base/logs/api/v1"
	netutils "k8s.io/utils/net"

	"github.com/kubewin/kubewin/internal/platform"
)

// flagValues hands out the parser of each kubelet flag, keyed by platform.FlagInfo.Parser (the
// generator in internal/check/gen names the real value type of every flag). Wherever the real
// type lives outside k8s.io/kubernetes (pflag, the Go flag package, k8s.io/component-base) the
// real type parses; the four types of k8s.io/kubernetes/pkg/util/flag and verflag are ported
// below, and TestKubeletFlagValuesMatchRealFlagSet / FuzzKubeletFlagValues compare every
// flag's verdict and message with the real flag set.
type flagValues struct {
	fs      *pflag.FlagSet
	logging *pflag.FlagSet
}

func newFlagValues() *flagValues {
	lfs := pflag.NewFlagSet("kubelet-logging", pflag.ContinueOnError)
	logsapi.AddFlags(&logsapi.LoggingConfiguration{}, lfs)
	return &flagValues{fs: pflag.NewFlagSet("kubelet-values", pflag.ContinueOnError), logging: lfs}
}

// parser returns the validator of flag f: nil error from it means the kubelet accepts the value.
func (v *flagValues) parser(f platform.FlagInfo) (func(string) error, error) {
	var val pflag.Value
	switch f.Parser {
	case "bool":
		val = v.register(f.Name, func(fs *pflag.FlagSet) { fs.Bool(f.Name, false, "") })
	case "int32":
		val = v.register(f.Name, func(fs *pflag.FlagSet) { fs.Int32(f.Name, 0, "") })
	case "int64":
		val = v.register(f.Name, func(fs *pflag.FlagSet) { fs.Int64(f.Name, 0, "") })
	case "duration":
		val = v.register(f.Name, func(fs *pflag.FlagSet) { fs.Duration(f.Name, 0, "") })
	case "string":
		val = v.register(f.Name, func(fs *pflag.FlagSet) { fs.String(f.Name, "", "") })
	case "stringSlice":
		val = v.register(f.Name, func(fs *pflag.FlagSet) { fs.StringSlice(f.Name, nil, "") })
	case "goDuration":
		gfs := goflag.NewFlagSet("kubelet-go", goflag.ContinueOnError)
		gfs.Duration(f.Name, 0, "")
		v.fs.AddGoFlag(gfs.Lookup(f.Name))
		val = v.fs.Lookup(f.Name).Value
	case "mapStringBool":
		m := map[string]bool{}
		val = cliflag.NewMapStringBool(&m)
	case "configurationMap":
		m := cliflag.ConfigurationMap{}
		val = &m
	case "langleSeparatedMap":
		m := map[string]string{}
		val = cliflag.NewLangleSeparatedMapStringString(&m)
	case "mapStringString":
		m := map[string]string{}
		val = cliflag.NewMapStringString(&m)
	case "mapStringStringNoSplit":
		m := map[string]string{}
		val = cliflag.NewMapStringStringNoSplit(&m)
	case "colonSeparatedMultimap":
		m := map[string][]string{}
		val = cliflag.NewColonSeparatedMultimapStringString(&m)
	case "ip":
		return validateIPFlag, nil
	case "taints":
		return validateTaintsFlag, nil
	case "reservedMemory":
		return validateReservedMemoryFlag, nil
	case "version":
		return validateVersionFlag, nil
	case "logging":
		lf := v.logging.Lookup(f.Name)
		if lf == nil {
			return nil, fmt.Errorf("--%s: parser %q but k8s.io/component-base/logs/api/v1.AddFlags does not register it", f.Name, f.Parser)
		}
		val = lf.Value
	default:
		return nil, fmt.Errorf("--%s: unknown parser %q (regenerate with go generate ./internal/platform and teach flagvalues.go the new type)", f.Name, f.Parser)
	}
	return val.Set, nil
}

// register adds one flag to the private flag set and returns its value.
func (v *flagValues) register(name string, add func(*pflag.FlagSet)) pflag.Value {
	add(v.fs)
	return v.fs.Lookup(name).Value
}

// validateIPFlag is k8s.io/kubernetes/pkg/util/flag.IPVar.Set (--address, --healthz-bind-address).
func validateIPFlag(s string) error {
	if len(s) == 0 {
		return nil
	}
	if netutils.ParseIPSloppy(s) == nil {
		return fmt.Errorf("%q is not a valid IP address", s)
	}
	return nil
}

// validateTaintsFlag is k8s.io/kubernetes/pkg/util/flag.RegisterWithTaintsVar.Set
// (--register-with-taints), which parses with k8s.io/kubernetes/pkg/util/taints.ParseTaints.
func validateTaintsFlag(s string) error {
	if len(s) == 0 {
		return nil
	}
	_, err := parseTaints(strings.Split(s, ","))
	return err
}

// parseTaints is k8s.io/kubernetes/pkg/util/taints.ParseTaints: "key=value:Effect" specs, a
// trailing "-" marks a taint to remove, and a key may appear once per effect.
func parseTaints(spec []string) ([]corev1.Taint, error) {
	var taints []corev1.Taint
	unique := map[corev1.TaintEffect]sets.Set[string]{}
	for _, taintSpec := range spec {
		if strings.HasSuffix(taintSpec, "-") {
			if _, err := parseTaint(strings.TrimSuffix(taintSpec, "-")); err != nil {
				return nil, err
			}
			continue
		}
		t, err := parseTaint(taintSpec)
		if err != nil {
			return nil, err
		}
		if len(t.Effect) == 0 {
			return nil, fmt.Errorf("invalid taint spec: %v", taintSpec)
		}
		if unique[t.Effect].Has(t.Key) {
			return nil, fmt.Errorf("duplicated taints with the same key and effect: %v", t)
		}
		if unique[t.Effect] == nil {
			unique[t.Effect] = sets.New[string]()
		}
		unique[t.Effect].Insert(t.Key)
		taints = append(taints, t)
	}
	return taints, nil
}

// parseTaint is k8s.io/kubernetes/pkg/util/taints.parseTaint.
func parseTaint(st string) (corev1.Taint, error) {
	var taint corev1.Taint
	var key, value string
	var effect corev1.TaintEffect
	parts := strings.Split(st, ":")
	switch len(parts) {
	case 1:
		key = parts[0]
	case 2:
		effect = corev1.TaintEffect(parts[1])
		if err := validateTaintEffect(effect); err != nil {
			return taint, err
		}
		kv := strings.Split(parts[0], "=")
		if len(kv) > 2 {
			return taint, fmt.Errorf("invalid taint spec: %v", st)
		}
		key = kv[0]
		if len(kv) == 2 {
			value = kv[1]
			if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
				return taint, fmt.Errorf("invalid taint spec: %v, %s", st, strings.Join(errs, "; "))
			}
		}
	default:
		return taint, fmt.Errorf("invalid taint spec: %v", st)
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return taint, fmt.Errorf("invalid taint spec: %v, %s", st, strings.Join(errs, "; "))
	}
	taint.Key, taint.Value, taint.Effect = key, value, effect
	return taint, nil
}

// validateTaintEffect is k8s.io/kubernetes/pkg/util/taints.validateTaintEffect.
func validateTaintEffect(effect corev1.TaintEffect) error {
	if effect != corev1.TaintEffectNoSchedule && effect != corev1.TaintEffectPreferNoSchedule && effect != corev1.TaintEffectNoExecute {
		return fmt.Errorf("invalid taint effect: %v, unsupported taint effect", effect)
	}
	return nil
}

// checkTaintValidation is k8s.io/kubernetes/pkg/util/taints.CheckTaintValidation, which the
// kubelet's config validation applies to registerWithTaints.
func checkTaintValidation(taint corev1.Taint) error {
	if errs := validation.IsQualifiedName(taint.Key); len(errs) > 0 {
		return fmt.Errorf("invalid taint key: %s", strings.Join(errs, "; "))
	}
	if taint.Value != "" {
		if errs := validation.IsValidLabelValue(taint.Value); len(errs) > 0 {
			return fmt.Errorf("invalid taint value: %s", strings.Join(errs, "; "))
		}
	}
	if taint.Effect != "" {
		if err := validateTaintEffect(taint.Effect); err != nil {
			return err
		}
	}
	return nil
}

// isHugePageResourceName is k8s.io/kubernetes/pkg/apis/core/v1/helper.IsHugePageResourceName.
func isHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// validateReservedMemoryFlag is k8s.io/kubernetes/pkg/util/flag.ReservedMemoryVar.Set
// (--reserved-memory 0:memory=1Gi,hugepages-1M=2Gi;1:memory=2Gi).
func validateReservedMemoryFlag(s string) error {
	if s == "" {
		return nil
	}
	for _, reservation := range strings.Split(s, ";") {
		numa := strings.Split(reservation, ":")
		if len(numa) != 2 {
			return fmt.Errorf("the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got %s", reservation)
		}
		types := strings.Split(numa[1], ",")
		if len(types) < 1 {
			return fmt.Errorf("the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got %s", reservation)
		}
		if _, err := strconv.Atoi(numa[0]); err != nil {
			return fmt.Errorf("failed to convert the NUMA node ID, expected integer, got %s", numa[0])
		}
		for _, t := range types {
			limit := strings.Split(t, "=")
			if len(limit) != 2 {
				return fmt.Errorf("the reserved limit has incorrect value, expected type=quantity, got %s", t)
			}
			name := corev1.ResourceName(limit[0])
			if name != corev1.ResourceMemory && !isHugePageResourceName(name) {
				return fmt.Errorf("memory type conversion error, unknown type: %q", name)
			}
			if _, err := resource.ParseQuantity(limit[1]); err != nil {
				return fmt.Errorf("failed to parse the quantity: %s", limit[1])
			}
		}
	}
	return nil
}

// validateVersionFlag is k8s.io/component-base/version/verflag's --version parser: "raw", a
// boolean, or "vX.Y.Z..." to set the reported version. verflag registers --version on the
// process-wide pflag.CommandLine when linked (every kubewin command would show it), so it is
// ported. The binary also requires X.Y.Z to equal its own release; kubewin does not know the
// patch release of the kubelet a command line is for, so it only checks that the version parses.
func validateVersionFlag(s string) error {
	if s == "raw" {
		return nil
	}
	if strings.HasPrefix(s, "v") {
		_, err := utilversion.ParseSemantic(s)
		return err
	}
	_, err := strconv.ParseBool(s)
	return err
}
