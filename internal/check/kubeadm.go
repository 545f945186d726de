package check

import (
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubewin/kubewin/internal/check/templates"
	"github.com/kubewin/kubewin/internal/platform"
)

// kubeadm configuration files (apiVersion kubeadm.k8s.io/v1beta2…v1beta4): InitConfiguration,
// JoinConfiguration, ClusterConfiguration, UpgradeConfiguration and ResetConfiguration, often
// in one multi-document file with a KubeletConfiguration and a KubeProxyConfiguration. They are
// not a kubelet command line: of their fields only nodeRegistration.kubeletExtraArgs reaches
// the kubelet's command line as flags, through the environment file kubeadm writes
// (/var/lib/kubelet/kubeadm-flags.env). Facts from k8s.io/kubernetes
// cmd/kubeadm/app/apis/kubeadm/v1beta2/types.go (KubeletExtraArgs map[string]string, "passes
// through extra arguments to the kubelet ... via the environment file kubeadm writes at
// runtime"), v1beta3 (the same map) and v1beta4/types.go (KubeletExtraArgs []Arg{name, value},
// "the flag name as it appears on the command line except without leading dash(es)"); the
// other flags kubeadm writes there come from nodeRegistration.criSocket, name and taints
// (cmd/kubeadm/app/phases/kubelet/flags.go buildKubeletArgs), and the rest of the kubelet's
// settings from the cluster's kubelet-config ConfigMap, so the command line read from the file
// is partial.

// KubeadmConfigDoc is one kubeadm configuration document.
type KubeadmConfigDoc struct {
	File string
	Kind string
	// APIVersion as written ("kubeadm.k8s.io/v1beta3").
	APIVersion string
	Line       int
	// UnsafeSkipCAVerification is the line of discovery.bootstrapToken.unsafeSkipCAVerification
	// when it is true (0 when not set or false).
	UnsafeSkipCAVerification int
	// UnsafeSkipRenderTime: the value is a template placeholder, known only at render time.
	UnsafeSkipRenderTime bool
}

// isKubeadmAPIVersion reports whether apiVersion is one of kubeadm's configuration groups.
func isKubeadmAPIVersion(apiVersion string) bool {
	return strings.HasPrefix(apiVersion, "kubeadm.k8s.io/")
}

// reUnsafeSkipCA matches discovery.bootstrapToken.unsafeSkipCAVerification as written. It is
// read from the stored text, not the parsed documents, so that the setting is seen in every
// branch of a template (check parses a data-format template with each condition's first
// branch).
var reUnsafeSkipCA = regexp.MustCompile(`(?m)^[ \t]*unsafeSkipCAVerification:[ \t]*([^ \t\r\n#]+)`)

// loadKubeadm reads every document of a kubeadm configuration file: kubeadm's own kinds are
// recorded (and their kubeletExtraArgs read as a partial kubelet command line), component
// configs in the same file are loaded as the files of their own kind would be. orig is the
// file as stored.
func loadKubeadm(ctx *Context, file string, docs []yamlDoc, data []byte, orig string) {
	li := newLineIndex(string(data))
	var kdocs []*KubeadmConfigDoc
	for _, d := range docs {
		if d.Node == nil || d.Node.Kind != yaml.MappingNode {
			continue
		}
		kind, apiVersion := scalarField(d.Node, "kind"), scalarField(d.Node, "apiVersion")
		switch {
		case kind == "KubeletConfiguration":
			loadKubeletConfig(ctx, file, d, data)
		case kind == "KubeProxyConfiguration":
			loadKubeProxyConfig(ctx, file, d, data)
		case isKubeadmAPIVersion(apiVersion):
			doc := &KubeadmConfigDoc{File: file, Kind: kind, APIVersion: apiVersion, Line: d.Line}
			kdocs = append(kdocs, doc)
			ctx.KubeadmConfigs = append(ctx.KubeadmConfigs, doc)
			if nr := mapPath(d.Node, "nodeRegistration"); nr != nil {
				if cl := kubeletExtraArgs(ctx, file, kind, nr, li); cl != nil {
					ctx.CommandLines = append(ctx.CommandLines, cl)
				}
			}
		}
	}
	if len(kdocs) == 0 {
		return
	}
	oli := newLineIndex(orig)
	for _, m := range reUnsafeSkipCA.FindAllStringSubmatchIndex(orig, -1) {
		line := oli.lineOf(m[0])
		v := strings.Trim(orig[m[2]:m[3]], `"'`)
		// the document holding the line: the last one that starts at or before it
		doc := kdocs[0]
		for _, d := range kdocs {
			if d.Line <= line {
				doc = d
			}
		}
		switch {
		case strings.HasPrefix(v, "{{"): // a placeholder (the match stops at its first blank)
			doc.UnsafeSkipCAVerification, doc.UnsafeSkipRenderTime = line, true
		case strings.EqualFold(v, "true"):
			doc.UnsafeSkipCAVerification = line
		}
	}
}

// kubeletExtraArgs reads nodeRegistration.kubeletExtraArgs (a map before v1beta4, a list of
// {name, value} from v1beta4) as the kubelet flags it becomes. Every flag sits at its key's
// position in the file.
func kubeletExtraArgs(ctx *Context, file, kind string, nr *yaml.Node, li *lineIndex) *CommandLine {
	k, args := mapEntry(nr, "kubeletExtraArgs")
	if args == nil {
		return nil
	}
	offset := func(n *yaml.Node) int {
		if n.Line < 1 || n.Line > len(li.starts) {
			return 0
		}
		return li.starts[n.Line-1] + max(n.Column-1, 0)
	}
	var toks []Token
	add := func(nameNode, valueNode *yaml.Node) {
		if nameNode == nil || nameNode.Kind != yaml.ScalarNode || valueNode == nil || valueNode.Kind != yaml.ScalarNode {
			return
		}
		name := strings.TrimLeft(nameNode.Value, "-")
		if name == "" {
			return
		}
		tk := Token{Text: "--" + name + "=" + valueNode.Value, Offset: offset(nameNode)}
		tk.End = tk.Offset + len(nameNode.Value)
		for _, s := range templates.Scan(valueNode.Value) {
			if s.Kind == templates.Expr {
				tk.Vars = append(tk.Vars, valueNode.Value[s.Start:s.End])
			}
		}
		toks = append(toks, tk)
	}
	switch args.Kind {
	case yaml.MappingNode: // v1beta2, v1beta3: map[string]string
		for i := 0; i+1 < len(args.Content); i += 2 {
			add(args.Content[i], args.Content[i+1])
		}
	case yaml.SequenceNode: // v1beta4: []Arg{name, value}
		for _, el := range args.Content {
			if el.Kind != yaml.MappingNode {
				continue
			}
			_, n := mapEntry(el, "name")
			_, v := mapEntry(el, "value")
			add(n, v)
		}
	}
	cl := &CommandLine{Component: platform.Kubelet, File: file, Line: k.Line, Program: "kubelet",
		Origin: "kubeadm " + kind + " nodeRegistration.kubeletExtraArgs", Env: map[string]EnvVar{},
		// kubeadm adds flags of its own and the kubelet reads the cluster's KubeletConfiguration:
		// a setting missing here may be set there
		Partial: true}
	cl.Flags, cl.Args = parseFlags(toks, ctx.Catalogs.For(platform.Kubelet), nil, li, 0)
	if _, v := mapEntry(nr, "criSocket"); v != nil {
		switch s := strings.ToLower(v.Value); {
		case strings.HasPrefix(s, "npipe:"):
			cl.OS, cl.OSEvidence = OSWindows, "kubeadm nodeRegistration.criSocket is a named pipe"
		case strings.HasPrefix(s, "unix:") || strings.HasPrefix(s, "/"):
			cl.OS, cl.OSEvidence = OSLinux, "kubeadm nodeRegistration.criSocket is a unix socket"
		}
	}
	return cl
}

// mapEntry returns the key and value nodes of key in mapping m.
func mapEntry(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// mapPath follows keys through nested mappings.
func mapPath(m *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		_, m = mapEntry(m, k)
		if m == nil {
			return nil
		}
	}
	return m
}

// scalarField is the scalar value of key in mapping m ("" when absent).
func scalarField(m *yaml.Node, key string) string {
	if _, v := mapEntry(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}
