package check

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/kubewin/kubewin/internal/platform"
)

// FlagSpec is what kubewin knows about one flag of the newest supported release.
type FlagSpec struct {
	Name        string
	Kind        platform.FlagKind
	Shorthand   string
	Deprecated  string
	WindowsOnly bool
	// validate parses a value the way the binary would; nil accepts anything.
	validate func(string) error
}

// Validate reports whether the binary would accept value for this flag.
func (s *FlagSpec) Validate(value string) error {
	if s.validate == nil {
		return nil
	}
	return s.validate(value)
}

// FlagCatalog is the flag set of one component in the newest supported release.
type FlagCatalog struct {
	Component platform.Component
	byName    map[string]*FlagSpec
	byShort   map[string]*FlagSpec
}

// Lookup finds a flag by name (underscores are normalised to dashes like the binaries do).
func (c *FlagCatalog) Lookup(name string) (*FlagSpec, bool) {
	s, ok := c.byName[normalizeFlagName(name)]
	return s, ok
}

// LookupShort finds a flag by its one-letter shorthand.
func (c *FlagCatalog) LookupShort(short string) (*FlagSpec, bool) {
	s, ok := c.byShort[short]
	return s, ok
}

// Names returns all flag names, sorted.
func (c *FlagCatalog) Names() []string {
	out := make([]string, 0, len(c.byName))
	for n := range c.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// normalizeFlagName mirrors cliflag.WordSepNormalizeFunc, which both binaries install.
func normalizeFlagName(n string) string { return strings.ReplaceAll(n, "_", "-") }

func (c *FlagCatalog) add(s *FlagSpec) {
	c.byName[s.Name] = s
	if s.Shorthand != "" {
		c.byShort[s.Shorthand] = s
	}
}

// Catalogs holds the flag catalogues of the kubelet and kube-proxy.
type Catalogs struct {
	Kubelet, KubeProxy *FlagCatalog
}

// For returns the catalogue of component c.
func (c *Catalogs) For(comp platform.Component) *FlagCatalog {
	if comp == platform.KubeProxy {
		return c.KubeProxy
	}
	return c.Kubelet
}

// NewCatalogs builds the catalogues. The kubelet's comes from platform.KubeletFlags, the table
// generated from the real flag set of k8s.io/kubernetes/cmd/kubelet/app/options (the version
// pinned in go.mod), each flag validated by the parser of its real value type
// (flagvalues.go), plus the two flags only its Windows build registers. kube-proxy's comes
// from platform.KubeProxyFlags plus the real logging flags.
func NewCatalogs() (*Catalogs, error) {
	kl, err := kubeletCatalog()
	if err != nil {
		return nil, err
	}
	return &Catalogs{Kubelet: kl, KubeProxy: kubeProxyCatalog()}, nil
}

func kubeletCatalog() (*FlagCatalog, error) {
	c := &FlagCatalog{Component: platform.Kubelet, byName: map[string]*FlagSpec{}, byShort: map[string]*FlagSpec{}}
	vals := newFlagValues()
	for _, f := range platform.KubeletFlags() {
		validate, err := vals.parser(f)
		if err != nil {
			return nil, fmt.Errorf("kubelet flag table: %w", err)
		}
		c.add(&FlagSpec{Name: f.Name, Kind: f.Kind, Shorthand: f.Shorthand, Deprecated: f.Deprecated, validate: validate})
	}
	for _, w := range platform.WindowsKubeletFlags() {
		c.add(&FlagSpec{Name: w.Name, Kind: w.Kind, WindowsOnly: true, validate: kindValidator(w.Kind)})
	}
	addCommon(c)
	return c, nil
}

func kubeProxyCatalog() *FlagCatalog {
	c := &FlagCatalog{Component: platform.KubeProxy, byName: map[string]*FlagSpec{}, byShort: map[string]*FlagSpec{}}
	for _, f := range platform.KubeProxyFlags() {
		c.add(&FlagSpec{Name: f.Name, Kind: f.Kind, Deprecated: f.Deprecated, WindowsOnly: f.WindowsOnly,
			validate: kindValidator(f.Kind)})
	}
	var lc logsapi.LoggingConfiguration
	fs := pflag.NewFlagSet("kube-proxy-logging", pflag.ContinueOnError)
	logsapi.AddFlags(&lc, fs)
	fs.VisitAll(func(f *pflag.Flag) {
		val := f.Value
		c.add(&FlagSpec{Name: f.Name, Kind: kindOfPflag(f), Shorthand: f.Shorthand,
			validate: func(v string) error { return val.Set(v) }})
	})
	addCommon(c)
	return c
}

// addCommon adds --help and --version, which every component accepts.
func addCommon(c *FlagCatalog) {
	if _, ok := c.byName["help"]; !ok {
		c.add(&FlagSpec{Name: "help", Kind: platform.KindBool, Shorthand: "h"})
	}
	if _, ok := c.byName["version"]; !ok {
		c.add(&FlagSpec{Name: "version", Kind: platform.KindString})
	}
}

func kindOfPflag(f *pflag.Flag) platform.FlagKind {
	if f.NoOptDefVal != "" {
		// Boolean-like: may stand alone.
		return platform.KindBool
	}
	switch f.Value.Type() {
	case "bool":
		return platform.KindBool
	case "int", "int32", "int64", "uint", "uint32", "uint64":
		return platform.KindInt
	case "float32", "float64":
		return platform.KindFloat
	case "duration":
		return platform.KindDuration
	case "stringSlice", "strings", "[]string":
		return platform.KindList
	case "mapStringBool", "mapStringString":
		return platform.KindMap
	}
	return platform.KindString
}

// kindValidator validates by kind where no real parser is available.
func kindValidator(k platform.FlagKind) func(string) error {
	switch k {
	case platform.KindBool:
		return func(v string) error {
			_, err := strconv.ParseBool(v)
			return err
		}
	case platform.KindInt:
		return func(v string) error {
			_, err := strconv.ParseInt(v, 0, 64)
			return err
		}
	case platform.KindFloat:
		return func(v string) error {
			_, err := strconv.ParseFloat(v, 64)
			return err
		}
	case platform.KindDuration:
		return func(v string) error {
			_, err := time.ParseDuration(v)
			return err
		}
	case platform.KindMap:
		return func(v string) error {
			if strings.TrimSpace(v) == "" {
				return nil
			}
			for _, kv := range strings.Split(v, ",") {
				k, b, ok := strings.Cut(strings.TrimSpace(kv), "=")
				if !ok || k == "" {
					return fmt.Errorf("missing bool value for %q", kv)
				}
				if _, err := strconv.ParseBool(b); err != nil {
					return fmt.Errorf("invalid value of %s: %s, err: %w", k, b, err)
				}
			}
			return nil
		}
	}
	return nil
}
