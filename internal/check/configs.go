package check

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"github.com/kubewin/kubewin/internal/platform"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/containernetworking/cni/libcni"
	toml "github.com/pelletier/go-toml/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	proxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

func loadKeepalived(ctx *Context, file string, data []byte) {
	kc, err := ParseKeepalived(file, data)
	if err != nil {
		ctx.AddProblem("KW0001", Location{File: file, Line: errLine(err)}, "keepalived.conf: "+err.Error(),
			"fix the syntax; `keepalived -t -f "+file+"` shows keepalived's own verdict")
		return
	}
	ctx.Keepalived = append(ctx.Keepalived, kc)
}

func loadSysctl(ctx *Context, file, text string) {
	sf := &SysctlFile{File: file, Values: map[string]SysctlValue{}}
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";") {
			continue
		}
		k, v, _ := strings.Cut(l, "=")
		sf.Values[strings.TrimSpace(k)] = SysctlValue{Value: strings.TrimSpace(v), Line: i + 1}
	}
	ctx.Sysctls = append(ctx.Sysctls, sf)
}

// loadStructured handles JSON/YAML inputs; it reports whether the file was recognised.
// orig is the file as stored (data is a template's rendering as check reads it).
func loadStructured(ctx *Context, file string, docs []yamlDoc, data []byte, orig string) bool {
	var head map[string]json.RawMessage
	if err := json.Unmarshal(docs[0].JSON, &head); err != nil {
		return false
	}
	has := func(k string) bool { _, ok := head[k]; return ok }
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(head[k], &s)
		return s
	}
	kind, apiVersion := str("kind"), str("apiVersion")
	switch {
	case anyKubeadmDoc(docs):
		loadKubeadm(ctx, file, docs, data, orig)
	case kind == "KubeletConfiguration":
		loadKubeletConfig(ctx, file, docs[0], data)
	case kind == "KubeProxyConfiguration":
		loadKubeProxyConfig(ctx, file, docs[0], data)
	case kind == "Config" && apiVersion == "v1" && (has("clusters") || has("users")):
		loadKubeconfig(ctx, file, docs[0])
	case kind == "Cluster" && strings.HasPrefix(apiVersion, "kubewin.io/"):
		ctx.AddProblem("KW0002", Location{File: file, Line: docs[0].Line}, "a kubewin cluster spec given as a config file",
			"pass it with -f "+file)
	case strings.HasPrefix(apiVersion, "kubewin.io/") && kubewinDataKinds[kind] != "" && len(docs) == 1:
		// kubewin's own data (plan.json, tor-routes.json, hns/network.json): nothing a
		// component reads, and not a Kubernetes object to apply.
		ctx.KubewinFiles = append(ctx.KubewinFiles, KubewinFile{File: file, What: kubewinDataKinds[kind]})
	case apiVersion != "" && kind != "":
		loadManifests(ctx, newManifestDecoder(), file, data)
	case has("cniVersion") || has("plugins") || (has("type") && has("name")):
		loadCNI(ctx, file, docs[0])
	case has("Network") && has("Backend"):
		loadFlannel(ctx, file, docs[0])
	case has("insecure-registries") || has("exec-opts") || has("bridge") || has("registry-mirrors") ||
		has("storage-driver") || has("data-root") || has("graph"):
		loadDockerDaemon(ctx, file, docs[0])
	default:
		return false
	}
	return true
}

// anyKubeadmDoc reports whether a document of the file is a kubeadm configuration (kubeadm
// files often open with a KubeletConfiguration or put it after InitConfiguration).
func anyKubeadmDoc(docs []yamlDoc) bool {
	for _, d := range docs {
		if d.Node != nil && isKubeadmAPIVersion(scalarField(d.Node, "apiVersion")) {
			return true
		}
	}
	return false
}

// loadManifests decodes every object of a manifest file.
func loadManifests(ctx *Context, dec *manifestDecoder, file string, data []byte) {
	docs, err := splitYAML(data)
	for _, d := range docs {
		ctx.Objects = append(ctx.Objects, dec.decodeObjects(ctx, file, d, d.Pos, "", d.JSON)...)
	}
	if err != nil {
		ctx.AddProblem("KW0001", Location{File: file, Line: errLine(err)}, "cannot parse manifest: "+err.Error(),
			"fix the YAML (indentation, quoting); documents after the error were not checked")
	}
}

// topFields lists the top-level keys a document sets.
func topFields(doc yamlDoc) map[string]bool {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(doc.JSON, &m)
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// strictProblems turns a strict decoding error into KW0005 problems.
func strictProblems(ctx *Context, file string, pos *Positions, err error, what string) {
	msgs := reStrictField.FindAllStringSubmatch(err.Error(), -1)
	if len(msgs) == 0 {
		ctx.AddProblem("KW0005", Location{File: file}, what+": "+err.Error(), "")
		return
	}
	for _, m := range msgs {
		loc := Location{File: file, Field: m[2]}
		loc.Line, loc.Column = pos.Locate(m[2])
		ctx.AddProblem("KW0005", loc, fmt.Sprintf("%s: %s field %q (the binary warns and ignores it)", what, m[1], m[2]),
			"remove the field or correct its spelling/case")
	}
}

func loadKubeletConfig(ctx *Context, file string, doc yamlDoc, data []byte) {
	obj, err := decodeComponentConfig(ctx, file, doc, "KubeletConfiguration", kubeletv1beta1.AddToScheme)
	if err != nil {
		ctx.AddProblem("KW0001", Location{File: file, Line: doc.Line}, "KubeletConfiguration: "+err.Error(), "")
		return
	}
	raw, ok := obj.(*kubeletv1beta1.KubeletConfiguration)
	if !ok {
		ctx.AddProblem("KW0001", Location{File: file}, fmt.Sprintf("KubeletConfiguration decoded to %T", obj), "")
		return
	}
	// The kubelet applies the file's featureGates to its own gate first; when that fails it
	// reports only that error (and its defaulting would panic), so kubewin defaults with the
	// release's gate as it stands.
	gate, gateProblems, gatesOK := validateKubeletFeatureGates(ctx.Gates, raw.FeatureGates)
	if !gatesOK {
		gate, _ = ctx.Gates.Effective(nil)
	}
	kc := raw.DeepCopy()
	setKubeletDefaults(kc, gate)
	d := &KubeletConfigDoc{File: file, Config: kc, Set: topFields(doc), Pos: doc.Pos,
		// the kubelet reads only *.conf files from its --config-dir drop-in directory
		// (kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file, "drop-in")
		DropIn: strings.EqualFold(filepath.Ext(file), ".conf")}
	d.OS = OSUnknown
	if hasWindowsPath(string(data)) || strings.Contains(kc.ContainerRuntimeEndpoint, "npipe") {
		d.OS = OSWindows
	} else if strings.HasPrefix(kc.ContainerRuntimeEndpoint, "unix://") {
		d.OS = OSLinux
	}
	var problems []kubeletProblem
	if gatesOK {
		problems = validateKubelet(kc, gateProblems, &kubeletEnv{Gate: gate, OS: d.OS, Version: ctx.Version})
	} else if !(strings.Contains(gateProblems[0], "unrecognized feature gate") && !platform.SupportedKubernetes(ctx.Version) && ctx.Version.Less(ctx.Newest)) {
		// The gate registry is the newest release's: a gate of a release it no longer knows
		// (LegacyNodeRoleBehavior in a 1.19 file) is judged by KW1108 from the gate history.
		problems = []kubeletProblem{{Field: "featureGates", Message: gateProblems[0]}}
	}
	for _, p := range problems {
		loc := Location{File: file, Field: p.Field}
		if loc.Line, loc.Column = doc.Pos.Locate(p.Field); loc.Line == 0 {
			loc.Line = 1
		}
		ctx.AddProblem("KW0012", loc, "KubeletConfiguration: "+p.Message, "")
	}
	ctx.KubeletConfigs = append(ctx.KubeletConfigs, d)
}

func splitAggregate(err error) []string {
	type agg interface{ Errors() []error }
	var a agg
	if errors.As(err, &a) {
		var out []string
		for _, e := range a.Errors() {
			out = append(out, e.Error())
		}
		sort.Strings(out)
		return out
	}
	return []string{err.Error()}
}

// reSchemeName is the " in scheme \"file.go:line\"" tail of apimachinery's not-registered
// error: the name of the scheme's Go call site, which means nothing to a user.
var reSchemeName = regexp.MustCompile(` in scheme "[^"]*"`)

// decodeComponentConfig decodes a KubeletConfiguration or KubeProxyConfiguration with the
// official versioned types (k8s.io/kubelet, k8s.io/kube-proxy) and apimachinery's strict
// serializer, as the binaries load their --config: unknown and duplicate fields are KW0005
// problems, then the file is decoded again leniently, as the binaries do after warning.
func decodeComponentConfig(ctx *Context, file string, doc yamlDoc, what string, register func(*runtime.Scheme) error) (runtime.Object, error) {
	scheme := runtime.NewScheme()
	if err := register(scheme); err != nil {
		return nil, fmt.Errorf("scheme: %w", err)
	}
	obj, _, err := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer().Decode(doc.JSON, nil, nil)
	if err != nil && runtime.IsStrictDecodingError(err) {
		strictProblems(ctx, file, doc.Pos, err, what)
		obj, _, err = serializer.NewCodecFactory(scheme, serializer.DisableStrict).UniversalDeserializer().Decode(doc.JSON, nil, nil)
	}
	if err != nil {
		return nil, errors.New(reSchemeName.ReplaceAllString(err.Error(), ""))
	}
	return obj, nil
}

func loadKubeProxyConfig(ctx *Context, file string, doc yamlDoc, data []byte) {
	obj, err := decodeComponentConfig(ctx, file, doc, "KubeProxyConfiguration", proxyv1alpha1.AddToScheme)
	if err != nil {
		ctx.AddProblem("KW0001", Location{File: file, Line: doc.Line}, "KubeProxyConfiguration: "+err.Error(), "")
		return
	}
	raw, ok := obj.(*proxyv1alpha1.KubeProxyConfiguration)
	if !ok {
		ctx.AddProblem("KW0001", Location{File: file}, fmt.Sprintf("KubeProxyConfiguration decoded to %T", obj), "")
		return
	}
	pc := raw.DeepCopy()
	setKubeProxyDefaults(pc)
	d := &KubeProxyConfigDoc{File: file, Config: pc, Set: topFields(doc), Pos: doc.Pos}
	for _, e := range validateKubeProxy(pc, ctx.Gates, ctx.Version) {
		loc := Location{File: file, Field: e.Field}
		loc.Line, loc.Column = doc.Pos.Locate(loc.Field)
		ctx.AddProblem("KW0012", loc, "KubeProxyConfiguration: "+e.Error(), "")
	}
	ctx.KubeProxyConfigs = append(ctx.KubeProxyConfigs, d)
}

// cniRaw is the part of a Windows CNI config kubewin reads beyond libcni's types.
type cniRaw struct {
	Type           string            `json:"type"`
	AdditionalArgs []json.RawMessage `json:"AdditionalArgs"`
	Policies       []json.RawMessage `json:"policies"`
	Delegate       *struct {
		Type           string            `json:"type"`
		Policies       []json.RawMessage `json:"policies"`
		AdditionalArgs []json.RawMessage `json:"AdditionalArgs"`
	} `json:"delegate"`
	IPAM *struct {
		Type    string `json:"type"`
		Subnet  string `json:"subnet"`
		Gateway string `json:"gateway"`
		Ranges  [][]struct {
			Subnet  string `json:"subnet"`
			Gateway string `json:"gateway"`
		} `json:"ranges"`
	} `json:"ipam"`
}

type hnsPolicyJSON struct {
	Name  string `json:"Name"`
	Value struct {
		Type              string   `json:"Type"`
		ExceptionList     []string `json:"ExceptionList"`
		DestinationPrefix string   `json:"DestinationPrefix"`
		NeedEncap         bool     `json:"NeedEncap"`
		Settings          struct {
			Exceptions        []string `json:"Exceptions"`
			DestinationPrefix string   `json:"DestinationPrefix"`
			NeedEncap         bool     `json:"NeedEncap"`
		} `json:"Settings"`
	} `json:"Value"`
}

func loadCNI(ctx *Context, file string, doc yamlDoc) {
	conf := &CNIConf{File: file, Dir: filepath.Dir(file), Pos: doc.Pos}
	var plugins [][]byte
	var pluginPaths []string
	if strings.Contains(string(doc.JSON), `"plugins"`) {
		list, err := libcni.NetworkConfFromBytes(doc.JSON)
		if err != nil {
			ctx.AddProblem("KW0001", Location{File: file, Line: doc.Line}, "CNI conflist (libcni): "+err.Error(), "")
			return
		}
		conf.IsList = true
		conf.Name, conf.CNIVersion = list.Name, list.CNIVersion
		for i, p := range list.Plugins {
			plugins = append(plugins, p.Bytes)
			pluginPaths = append(pluginPaths, fmt.Sprintf("plugins[%d]", i))
		}
	} else {
		pc, err := libcni.NetworkPluginConfFromBytes(doc.JSON)
		if err != nil {
			ctx.AddProblem("KW0001", Location{File: file, Line: doc.Line}, "CNI conf (libcni): "+err.Error(), "")
			return
		}
		conf.Name, conf.CNIVersion = pc.Network.Name, pc.Network.CNIVersion
		plugins = append(plugins, doc.JSON)
		pluginPaths = append(pluginPaths, "")
	}
	for i, pb := range plugins {
		pc, err := libcni.NetworkPluginConfFromBytes(pb)
		if err != nil {
			ctx.AddProblem("KW0001", Location{File: file, Line: doc.Pos.Line(pluginPaths[i])}, "CNI plugin (libcni): "+err.Error(), "")
			continue
		}
		var raw cniRaw
		_ = json.Unmarshal(pb, &raw)
		if i == 0 {
			conf.Type = pc.Network.Type
			conf.Nameservers = pc.Network.DNS.Nameservers
			conf.Search = pc.Network.DNS.Search
			conf.Capabilities = pc.Network.Capabilities
			if raw.IPAM != nil {
				conf.IPAMType, conf.IPAMSubnet, conf.IPAMGateway = raw.IPAM.Type, raw.IPAM.Subnet, raw.IPAM.Gateway
				if len(raw.IPAM.Ranges) > 0 && len(raw.IPAM.Ranges[0]) > 0 {
					conf.IPAMSubnet, conf.IPAMGateway = raw.IPAM.Ranges[0][0].Subnet, raw.IPAM.Ranges[0][0].Gateway
				}
			}
		}
		base := pluginPaths[i]
		join := func(k string) string {
			if base == "" {
				return k
			}
			return base + "." + k
		}
		conf.Policies = append(conf.Policies, hnsPolicies(raw.AdditionalArgs, join("AdditionalArgs"))...)
		conf.Policies = append(conf.Policies, hnsPolicies(raw.Policies, join("policies"))...)
		if raw.Delegate != nil {
			if i == 0 {
				conf.Delegate = raw.Delegate.Type
			}
			conf.Policies = append(conf.Policies, hnsPolicies(raw.Delegate.Policies, join("delegate.policies"))...)
			conf.Policies = append(conf.Policies, hnsPolicies(raw.Delegate.AdditionalArgs, join("delegate.AdditionalArgs"))...)
		}
	}
	ctx.CNIConfs = append(ctx.CNIConfs, conf)
}

func hnsPolicies(raw []json.RawMessage, path string) []HNSPolicy {
	var out []HNSPolicy
	for i, r := range raw {
		var p hnsPolicyJSON
		if json.Unmarshal(r, &p) != nil {
			continue
		}
		hp := HNSPolicy{Type: p.Value.Type, Path: fmt.Sprintf("%s[%d]", path, i)}
		hp.Exceptions = append(hp.Exceptions, p.Value.ExceptionList...)
		hp.Exceptions = append(hp.Exceptions, p.Value.Settings.Exceptions...)
		hp.DestinationPrefix = p.Value.DestinationPrefix
		if hp.DestinationPrefix == "" {
			hp.DestinationPrefix = p.Value.Settings.DestinationPrefix
		}
		hp.NeedEncap = p.Value.NeedEncap || p.Value.Settings.NeedEncap
		out = append(out, hp)
	}
	return out
}

func loadFlannel(ctx *Context, file string, doc yamlDoc) {
	var nc struct {
		Network string `json:"Network"`
		Backend struct {
			Type string `json:"Type"`
			VNI  int    `json:"VNI"`
			Port int    `json:"Port"`
		} `json:"Backend"`
	}
	if err := json.Unmarshal(doc.JSON, &nc); err != nil {
		ctx.AddProblem("KW0001", Location{File: file, Line: doc.Line}, "net-conf.json: "+err.Error(), "")
		return
	}
	ctx.FlannelNetConfs = append(ctx.FlannelNetConfs, &FlannelNetConf{File: file, Network: nc.Network,
		Backend: strings.ToLower(nc.Backend.Type), VNI: nc.Backend.VNI, Port: nc.Backend.Port, Pos: doc.Pos})
}

func loadDockerDaemon(ctx *Context, file string, doc yamlDoc) {
	var dd struct {
		InsecureRegistries []string `json:"insecure-registries"`
		ExecOpts           []string `json:"exec-opts"`
	}
	if err := json.Unmarshal(doc.JSON, &dd); err != nil {
		ctx.AddProblem("KW0001", Location{File: file, Line: doc.Line}, "daemon.json: "+err.Error(), "")
		return
	}
	d := &DockerDaemon{File: file, InsecureRegistries: dd.InsecureRegistries, Pos: doc.Pos}
	for _, o := range dd.ExecOpts {
		if v, ok := strings.CutPrefix(o, "native.cgroupdriver="); ok {
			d.CgroupDriver = v
		}
	}
	ctx.DockerDaemons = append(ctx.DockerDaemons, d)
}

func loadKubeconfig(ctx *Context, file string, doc yamlDoc) {
	var kc struct {
		Users []struct {
			Name string `json:"name"`
			User struct {
				ClientCertificateData string `json:"client-certificate-data"`
			} `json:"user"`
		} `json:"users"`
	}
	if err := json.Unmarshal(doc.JSON, &kc); err != nil {
		ctx.AddProblem("KW0001", Location{File: file, Line: doc.Line}, "kubeconfig: "+err.Error(), "")
		return
	}
	d := &KubeconfigDoc{File: file}
	for i, u := range kc.Users {
		ku := KubeconfigUser{Name: u.Name, Line: doc.Pos.Line(fmt.Sprintf("users[%d]", i))}
		if u.User.ClientCertificateData != "" {
			if b, err := base64.StdEncoding.DecodeString(u.User.ClientCertificateData); err == nil {
				if blk, _ := pem.Decode(b); blk != nil {
					if cert, err := x509.ParseCertificate(blk.Bytes); err == nil {
						ku.Groups = cert.Subject.Organization
						ku.CommonName = cert.Subject.CommonName
					}
				}
			}
		}
		d.Users = append(d.Users, ku)
	}
	ctx.Kubeconfigs = append(ctx.Kubeconfigs, d)
}

var reTOMLTable = regexp.MustCompile(`^\s*\[\[?\s*(.+?)\s*\]\]?\s*(#.*)?$`)

// tomlIndex maps "table.path key" to its line, for containerd findings.
type tomlIndex map[string]int

func indexTOML(text string) tomlIndex {
	idx := tomlIndex{}
	table := ""
	for i, l := range strings.Split(text, "\n") {
		if m := reTOMLTable.FindStringSubmatch(l); m != nil {
			table = normTOMLPath(m[1])
			idx[table] = i + 1
			continue
		}
		k, _, ok := strings.Cut(l, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.HasPrefix(k, "#") {
			continue
		}
		key := normTOMLPath(k)
		full := key
		if table != "" {
			full = table + "." + key
		}
		if _, seen := idx[full]; !seen {
			idx[full] = i + 1
		}
	}
	return idx
}

// normTOMLPath removes quotes and spaces around dots: plugins."io.containerd.grpc.v1.cri" →
// plugins.io.containerd.grpc.v1.cri (good enough for lookups by suffix).
func normTOMLPath(p string) string {
	var b strings.Builder
	for _, part := range splitTOMLKey(p) {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(part)
	}
	return b.String()
}

func splitTOMLKey(p string) []string {
	var parts []string
	var cur strings.Builder
	q := byte(0)
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			q = c
		case c == '.':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	parts = append(parts, strings.TrimSpace(cur.String()))
	return parts
}

func loadContainerd(ctx *Context, file string, data []byte) {
	var m map[string]any
	if err := toml.Unmarshal(data, &m); err != nil {
		line := 0
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ = de.Position()
		}
		ctx.AddProblem("KW0001", Location{File: file, Line: line}, "containerd config.toml: "+err.Error(), "")
		return
	}
	text := string(data)
	idx := indexTOML(text)
	cc := &ContainerdConfig{File: file}
	if v, ok := m["version"]; ok {
		switch n := v.(type) {
		case int64:
			cc.Version = int(n)
		case float64:
			cc.Version = int(n)
		}
	}
	cc.Windows = strings.Contains(text, "runhcs") || hasWindowsPath(text)
	// Walk every table with its dotted path (keys are kept unquoted).
	var walk func(path []string, v map[string]any)
	walk = func(path []string, v map[string]any) {
		p := strings.Join(path, ".")
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(path) >= 2 && path[len(path)-2] == "mirrors" && strings.HasSuffix(strings.Join(path[:len(path)-1], "."), "registry.mirrors") {
			if l := idx[p]; l > 0 && (cc.MirrorsLine == 0 || l < cc.MirrorsLine) {
				cc.MirrorsLine = l
			}
		}
		for _, k := range keys {
			val := v[k]
			full := k
			if p != "" {
				full = p + "." + k
			}
			if _, isTable := val.(map[string]any); !isTable {
				if belongs, ok := containerdKeyHome(k, p); !ok {
					cc.Misplaced = append(cc.Misplaced, ContainerdMisplaced{Key: k, Table: p, Belongs: belongs, Line: idx[full]})
				}
			}
			if k == "config_path" && strings.HasSuffix(p, "registry") {
				if s, ok := val.(string); ok && s != "" {
					cc.ConfigPath, cc.ConfigPathLine = s, idx[full]
				}
			}
			switch x := val.(type) {
			case map[string]any:
				walk(append(append([]string(nil), path...), k), x)
				continue
			case bool:
				switch {
				case k == "SystemdCgroup" && strings.HasSuffix(p, "runtimes.runc.options"):
					b := x
					cc.SystemdCgroup, cc.SystemdCgroupLine = &b, idx[full]
				case k == "insecure_skip_verify" && x:
					host := hostFromRegistryPath(path)
					cc.Insecure = append(cc.Insecure, InsecureRegistry{Host: host, Reason: "tls.insecure_skip_verify = true", Line: idx[full]})
				}
			case string:
				switch {
				case k == "sandbox_image" || (k == "sandbox" && strings.HasSuffix(p, "pinned_images")):
					cc.SandboxImage, cc.SandboxImageLine = x, idx[full]
				case k == "conf_dir" && strings.HasSuffix(p, "cni"):
					cc.CNIConfDir = x
				case k == "bin_dir" && strings.HasSuffix(p, "cni"):
					cc.CNIBinDir = x
				}
			case []any:
				if k == "endpoint" && strings.Contains(p, "registry.mirrors") {
					for _, e := range x {
						if s, ok := e.(string); ok && strings.HasPrefix(strings.ToLower(s), "http://") {
							cc.Insecure = append(cc.Insecure, InsecureRegistry{Host: s, Reason: "plain-HTTP mirror endpoint", Line: idx[full]})
						}
					}
				}
			}
		}
		// runtimes.<name> tables are runtime handlers.
		if len(path) >= 2 && path[len(path)-2] == "runtimes" {
			h := RuntimeHandlerConf{Name: path[len(path)-1], Line: idx[p]}
			if s, ok := v["runtime_type"].(string); ok {
				h.RuntimeType = s
			}
			if opts, ok := v["options"].(map[string]any); ok {
				if s, ok := opts["SandboxImage"].(string); ok {
					h.SandboxImage = s
				}
				switch n := opts["SandboxIsolation"].(type) {
				case int64:
					h.SandboxIsolation = int(n)
				case float64:
					h.SandboxIsolation = int(n)
				}
			}
			if s, ok := v["sandbox_image"].(string); ok && h.SandboxImage == "" {
				h.SandboxImage = s
			}
			cc.Handlers = append(cc.Handlers, h)
		}
	}
	walk(nil, m)
	ctx.Containerd = append(ctx.Containerd, cc)
}

// hostFromRegistryPath extracts the registry host from plugins...registry.configs.<host>.tls.
func hostFromRegistryPath(path []string) string {
	for i := 0; i+1 < len(path); i++ {
		if path[i] == "configs" || path[i] == "mirrors" {
			return path[i+1]
		}
	}
	return strings.Join(path, ".")
}

// atoiOr parses s or returns def.
func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}

// containerdHomes are where containerd reads well-known keys (containerd docs/cri/config.md
// for config version 2 and 3): a key with a known home found under another table was swallowed
// by a table header opened before it, and containerd ignores it there. It returns the home and
// whether table is one.
//
// containerd 1.7 and 2.x also read config_path and max_concurrent_downloads in the transfer
// service's table, plugins."io.containerd.transfer.v1.local" (containerd v1.7
// plugins/transfer/plugin.go transferConfig: MaxConcurrentDownloads
// `toml:"max_concurrent_downloads"`, RegistryConfigPath `toml:"config_path"`); `containerd
// config default` of 1.7 writes both there.
var containerdHomes = map[string][]string{
	"sandbox_image":            {"io.containerd.grpc.v1.cri", "plugins.cri"},
	"SystemdCgroup":            {".options"},
	"config_path":              {".registry", "io.containerd.transfer.v1.local"},
	"conf_dir":                 {".cni"},
	"bin_dir":                  {".cni"},
	"max_concurrent_downloads": {"io.containerd.grpc.v1.cri", "io.containerd.cri.v1.images", "plugins.cri", "io.containerd.transfer.v1.local"},
	"default_runtime_name":     {".containerd", "io.containerd.cri.v1.runtime"},
	"runtime_type":             {""}, // inside runtimes.<name>, checked by name below
}

func containerdKeyHome(key, table string) (string, bool) {
	homes, ok := containerdHomes[key]
	if !ok {
		return "", true
	}
	if key == "runtime_type" {
		// containerd 1.x CRI config also reads it in the deprecated Runtime tables
		// containerd.default_runtime and containerd.untrusted_workload_runtime
		// (containerd/containerd v1.6 pkg/cri/config/config.go, ContainerdConfig.DefaultRuntime,
		// UntrustedWorkloadRuntime)
		parts := strings.Split(table, ".")
		last := parts[len(parts)-1]
		return "a runtimes.<handler> table", len(parts) >= 2 && parts[len(parts)-2] == "runtimes" ||
			last == "default_runtime" || last == "untrusted_workload_runtime"
	}
	for _, h := range homes {
		if strings.HasSuffix(table, h) {
			return "", true
		}
	}
	if key == "sandbox_image" && strings.Contains(table, ".runtimes.") {
		return "", true // a handler's own sandbox image (kubewin's Hyper-V handlers)
	}
	return strings.TrimPrefix(homes[0], "."), false
}
