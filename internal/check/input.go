package check

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubewin/kubewin/internal/check/templates"
	"github.com/kubewin/kubewin/internal/plan"
	"github.com/kubewin/kubewin/internal/platform"
	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Input is everything the user handed to `kubewin check`.
type Input struct {
	// SpecFile is -f; UseExample uses the embedded example instead. Both may be empty.
	SpecFile   string
	SpecData   []byte
	UseExample bool
	// KubernetesVersion is --kubernetes-version ("" = from the spec, else the newest).
	KubernetesVersion string
	// KubeletFlags and KubeProxyFlags are --kubelet-flags / --kube-proxy-flags values.
	KubeletFlags   []string
	KubeProxyFlags []string
	// Files are positional arguments: configuration files or directories, recognised by
	// content. Manifests are --manifests paths (files or directories).
	Files     []string
	Manifests []string
	// Plan, when set, is used instead of planning the spec (tests and benchmarks).
	Plan *plan.Plan
	// Spec, when set, is used instead of reading SpecFile (already parsed and valid).
	Spec *v1alpha1.Cluster
	// ReadFile reads inputs; nil means os.ReadFile. Tests use it to inject bytes.
	ReadFile func(string) ([]byte, error)
}

// ErrBadInput marks errors that make the whole run bad input (exit 2).
var ErrBadInput = errors.New("bad input")

// Load reads, recognises and parses every input. An error means the run cannot proceed at all
// (unreadable path, bad version); problems with individual inputs are recorded in
// ctx.Problems and become findings. specBad reports an invalid cluster spec.
func Load(in Input) (ctx *Context, specBad bool, err error) {
	cats, err := NewCatalogs()
	if err != nil {
		return nil, false, err
	}
	gates, err := NewGateRegistry()
	if err != nil {
		return nil, false, err
	}
	ctx = &Context{Catalogs: cats, Gates: gates, Newest: platform.NewestKubernetes()}
	read := in.ReadFile
	if read == nil {
		read = os.ReadFile
	}

	specBad = loadSpec(ctx, in, read)

	// Target version: --kubernetes-version, else the spec's, else the newest.
	switch {
	case in.KubernetesVersion != "":
		v, err := platform.ParseVersion(in.KubernetesVersion)
		if err != nil {
			return nil, false, fmt.Errorf("--kubernetes-version: %w: %w", err, ErrBadInput)
		}
		ctx.Version, ctx.VersionFrom = v, "--kubernetes-version"
	case ctx.Spec != nil:
		v, err := platform.ParseVersion(ctx.Spec.Spec.KubernetesVersion)
		if err == nil {
			ctx.Version, ctx.VersionFrom = v, "spec"
			break
		}
		fallthrough
	default:
		ctx.Version, ctx.VersionFrom = platform.NewestKubernetes(), "default"
	}

	for i, s := range in.KubeletFlags {
		loadFlagString(ctx, fmt.Sprintf("--kubelet-flags[%d]", i), s, platform.Kubelet)
	}
	for i, s := range in.KubeProxyFlags {
		loadFlagString(ctx, fmt.Sprintf("--kube-proxy-flags[%d]", i), s, platform.KubeProxy)
	}
	files, err := expand(in.Files, nil)
	if err != nil {
		return nil, specBad, err
	}
	ctx.bundles = newBundleIndex(read)
	for _, f := range files {
		data, err := read(f)
		if err != nil {
			return nil, specBad, fmt.Errorf("read %s: %w: %w", f, err, ErrBadInput)
		}
		loadFile(ctx, f, data)
	}
	mfiles, err := expand(in.Manifests, []string{".yaml", ".yml", ".json"})
	if err != nil {
		return nil, specBad, err
	}
	if err := loadManifestFiles(ctx, mfiles, read); err != nil {
		return nil, specBad, err
	}
	followWrites(ctx)
	assignNodes(ctx)
	return ctx, specBad, nil
}

// loadManifestFiles decodes manifest files on every CPU (YAML parsing dominates a large run)
// and merges the results in file order, so the outcome does not depend on scheduling. read
// must be safe for concurrent use (os.ReadFile is).
func loadManifestFiles(ctx *Context, files []string, read func(string) ([]byte, error)) error {
	type result struct {
		objs  []*Object
		probs []Problem
		tmpls []TemplateFile
		err   error
	}
	res := make([]result, len(files))
	dec := newManifestDecoder()
	next := make(chan int)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	if workers > len(files) {
		workers = len(files)
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				data, err := read(files[i])
				if err != nil {
					res[i].err = fmt.Errorf("read %s: %w: %w", files[i], err, ErrBadInput)
					continue
				}
				tmp := &Context{}
				if noteTemplate(tmp, files[i], string(data)) {
					// a Helm chart's or a templated manifest: parsed as rendered (templated.go)
					data = []byte(templates.Blank(string(data)))
				}
				loadManifests(tmp, dec, files[i], data)
				res[i] = result{objs: tmp.Objects, probs: tmp.Problems, tmpls: tmp.Templates}
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, r := range res {
		if r.err != nil {
			return r.err
		}
		ctx.Objects = append(ctx.Objects, r.objs...)
		ctx.Problems = append(ctx.Problems, r.probs...)
		ctx.Templates = append(ctx.Templates, r.tmpls...)
	}
	return nil
}

// loadSpec reads the cluster spec (or the example) and plans it.
func loadSpec(ctx *Context, in Input, read func(string) ([]byte, error)) (bad bool) {
	var (
		c   *v1alpha1.Cluster
		src *v1alpha1.Source
		err error
	)
	switch {
	case in.Spec != nil:
		c, ctx.SpecFile = in.Spec, "<spec>"
	case in.SpecFile != "":
		ctx.SpecFile = in.SpecFile
		data := in.SpecData
		if data == nil {
			data, err = read(in.SpecFile)
			if err != nil {
				ctx.AddProblem("KW0004", Location{File: in.SpecFile}, fmt.Sprintf("cannot read the cluster spec: %v", err), "")
				return true
			}
		}
		c, src, err = v1alpha1.Parse(in.SpecFile, data)
	case in.UseExample:
		ctx.SpecFile = v1alpha1.ExampleFile
		c, src, err = v1alpha1.ParseExample()
	default:
		if in.Plan != nil {
			ctx.Plan = in.Plan
		}
		return false
	}
	ctx.SpecSrc = src
	if err != nil {
		addSpecErrors(ctx, err)
		return true
	}
	ctx.Spec = c
	if in.Plan != nil {
		ctx.Plan = in.Plan
		return false
	}
	p, err := plan.New(c)
	if err != nil {
		addSpecErrors(ctx, err)
		return true
	}
	ctx.Plan = p
	return false
}

func addSpecErrors(ctx *Context, err error) {
	var list v1alpha1.ErrorList
	if errors.As(err, &list) {
		if ctx.SpecSrc != nil {
			list = ctx.SpecSrc.Annotate(list)
		}
		for _, fe := range list {
			loc := Location{File: fe.File, Line: fe.Line, Column: fe.Column, Field: fe.Field}
			if loc.File == "" {
				loc.File = ctx.SpecFile
			}
			msg := fe.Message
			fix := ""
			if fe.Expected != "" {
				fix = "expected " + fe.Expected
			}
			ctx.AddProblem("KW0004", loc, msg, fix)
		}
		return
	}
	ctx.AddProblem("KW0004", Location{File: ctx.SpecFile}, err.Error(), "")
}

// expand turns paths into files: directories are walked (sorted, hidden entries skipped);
// exts filters files found in directories (not files named explicitly).
func expand(paths []string, exts []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %w", p, err, ErrBadInput)
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if path != p && strings.HasPrefix(name, ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			if len(exts) > 0 {
				ok := false
				for _, e := range exts {
					if strings.EqualFold(filepath.Ext(name), e) {
						ok = true
					}
				}
				if !ok {
					return nil
				}
			}
			found = append(found, path)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %w", p, err, ErrBadInput)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// loadFlagString loads a --kubelet-flags / --kube-proxy-flags value.
func loadFlagString(ctx *Context, name, s string, comp platform.Component) {
	li := newLineIndex(s)
	toks, _ := Tokenize(s, DialectAuto)
	withProgram := len(toks) > 0 && !strings.HasPrefix(toks[0].Text, "-")
	cl := buildCommandLine(ctx, name, s, 0, 1, li, comp, name[:strings.IndexByte(name, '[')], withProgram, DialectAuto, nil)
	ctx.CommandLines = append(ctx.CommandLines, cl)
}

// Kind of a recognised input file.
type fileKind string

// loadFile recognises a configuration file by content and parses it.
func loadFile(ctx *Context, file string, data []byte) {
	if bytes.IndexByte(data, 0) >= 0 {
		ctx.AddProblem("KW0002", Location{File: file}, "binary file, not a configuration kubewin knows", "")
		return
	}
	text := string(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	trim := strings.TrimSpace(text)
	ext := dataExt(file)
	// a template's data formats are parsed from a rewrite with the same lines: statements
	// blanked, unquoted placeholders quoted (templates.Blank); scripts and keepalived.conf are
	// read by readers that know template syntax themselves
	parsed := text
	if noteTemplate(ctx, file, text) {
		parsed = templates.Blank(text)
		storedTemplateParse(ctx, file, text, ext)
	}

	switch {
	case trim == "":
		ctx.AddProblem("KW0002", Location{File: file}, "empty file", "")
		return
	case looksKeepalived(text):
		loadKeepalived(ctx, file, data)
		return
	case looksContainerdTOML(text, ext):
		loadContainerd(ctx, file, []byte(parsed))
		return
	}
	if (looksStructured(trim, ext) || declaresObject(text)) && !looksSystemdUnit(trim) {
		docs, err := splitYAML([]byte(parsed))
		if err == nil && loadAnsibleTasks(ctx, file, docs, parsed) {
			return
		}
		if err == nil && len(docs) > 0 && docs[0].Node.Kind == yaml.MappingNode {
			if loadStructured(ctx, file, docs, []byte(parsed), text) {
				return
			}
			if v, ok := butaneVariant(docs[0].Node); ok {
				// a Butane config (Fedora CoreOS, Flatcar) writes files and units whose text
				// sits in block scalars: read as one script the YAML around them would be
				// judged as command lines
				ctx.AddProblem("KW0002", Location{File: file},
					"a Butane config (variant "+v+"): the files and systemd units it writes are not read; check them as files of their own", "")
				return
			}
		} else if err != nil && (ext == ".json" || ext == ".yaml" || ext == ".yml" || ext == ".conf" || ext == ".conflist" ||
			strings.HasPrefix(trim, "{") || strings.HasPrefix(trim, "apiVersion") || declaresObject(text)) {
			// a file that declares apiVersion and kind is a Kubernetes-style object even when
			// it does not parse: never read it as a command line
			ctx.AddProblem("KW0001", Location{File: file, Line: errLine(err)}, "cannot parse: "+err.Error(), "")
			return
		}
	}
	if looksSysctl(text) {
		loadSysctl(ctx, file, text)
		return
	}
	if looksModules(file, text) {
		mf := &ModulesFile{File: file, Modules: map[string]int{}}
		for i, l := range strings.Split(text, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, ";") {
				mf.Modules[l] = i + 1
			}
		}
		ctx.Modules = append(ctx.Modules, mf)
		return
	}
	forced := componentOfPath(file)
	if isFlagFile(text) {
		comp := forced
		if comp == "" {
			comp = guessComponentByFlags(ctx, text)
		}
		ctx.CommandLines = append(ctx.CommandLines, scanFlagFile(ctx, file, text, comp))
		return
	}
	sc, cls := scanScript(ctx, file, text, forced)
	if len(cls) == 0 && forced == "" && strings.HasPrefix(trim, "-") {
		// A bare flag file of unknown component: decide by its flags.
		forced = guessComponentByFlags(ctx, text)
		sc, cls = scanScript(ctx, file, text, forced)
	}
	if len(cls) == 0 && len(sc.FirewallOff) == 0 && len(sc.Writes) == 0 && len(sc.UnitEnv) == 0 && !ctx.hasProblem("KW0015", file) {
		if what, ok := ctx.bundleFile(file); ok {
			ctx.KubewinFiles = append(ctx.KubewinFiles, KubewinFile{File: file, What: what})
			return
		}
		ctx.AddProblem("KW0002", Location{File: file},
			"not recognised: no kubelet/kube-proxy command line, CNI conf, component config, containerd config, keepalived.conf, net-conf.json, kubeconfig, manifest or sysctl file",
			"")
		return
	}
	ctx.Scripts = append(ctx.Scripts, sc)
	ctx.CommandLines = append(ctx.CommandLines, cls...)
}

// reAPIVersionLine and reKindLine match top-level apiVersion: and kind: lines.
var reAPIVersionLine, reKindLine = regexp.MustCompile(`(?m)^apiVersion:[ \t]*\S`), regexp.MustCompile(`(?m)^kind:[ \t]*\S`)

// declaresObject reports whether text is a YAML document with top-level apiVersion: and kind:
// lines (a Kubernetes object or a component/kubeadm configuration) that opens, after comments
// and template statements, with one of them or a document marker. A script that only holds
// such a document in a here-document opens with code and is not one.
func declaresObject(text string) bool {
	if !reAPIVersionLine.MatchString(text) || !reKindLine.MatchString(text) {
		return false
	}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || templates.OnlyStatements(l) {
			continue
		}
		return strings.HasPrefix(l, "---") || strings.HasPrefix(l, "apiVersion:") || strings.HasPrefix(l, "kind:")
	}
	return false
}

func errLine(err error) int {
	var line int
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		fmt.Sscanf(msg[i+5:], "%d", &line)
	}
	return line
}

func looksKeepalived(text string) bool {
	return strings.Contains(text, "vrrp_instance") || strings.Contains(text, "global_defs") ||
		strings.Contains(text, "virtual_server ") || strings.Contains(text, "vrrp_script")
}

func looksContainerdTOML(text, ext string) bool {
	switch ext {
	case ".toml":
		return true
	case ".yaml", ".yml", ".json", ".bu", ".ign":
		return false
	}
	if looksYAMLDocument(text) {
		// a Butane/Ignition config or a cloud-init file that carries a containerd
		// config.toml in a block scalar is YAML; the TOML inside it is one of its values
		return false
	}
	return strings.Contains(text, "[plugins") && (strings.Contains(text, "containerd") || strings.Contains(text, "cri"))
}

// butaneVariant reports whether a YAML mapping is a Butane config: every Butane spec opens
// with the top-level keys variant and version (https://coreos.github.io/butane/specs/,
// "variant (string): used to differentiate configs for different operating systems").
func butaneVariant(n *yaml.Node) (string, bool) {
	var variant string
	hasVersion := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case "variant":
			variant = n.Content[i+1].Value
		case "version":
			hasVersion = true
		}
	}
	return variant, variant != "" && hasVersion
}

// looksYAMLDocument reports whether the first line with content opens a YAML document: "---",
// or a "key: value" mapping entry where TOML would write "key = value" or a [table] header.
func looksYAMLDocument(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if l == "---" || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "%YAML") {
			return true
		}
		if strings.HasPrefix(l, "[") {
			return false
		}
		k, _, ok := strings.Cut(l, ":")
		if !ok || strings.ContainsAny(k, "= \t\"'") {
			return false
		}
		return true
	}
	return false
}

func looksStructured(trim, ext string) bool {
	switch ext {
	case ".json", ".yaml", ".yml", ".conf", ".conflist", ".kubeconfig":
		return true
	}
	return strings.HasPrefix(trim, "{") || strings.HasPrefix(trim, "apiVersion:") || strings.HasPrefix(trim, "---") ||
		strings.HasPrefix(trim, "kind:")
}

func looksSysctl(text string) bool {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";") {
			continue
		}
		k, _, ok := strings.Cut(l, "=")
		k = strings.TrimSpace(k)
		if !ok || strings.ContainsAny(k, " \t") ||
			!(strings.HasPrefix(k, "net.") || strings.HasPrefix(k, "kernel.") || strings.HasPrefix(k, "vm.") || strings.HasPrefix(k, "fs.")) {
			return false
		}
		n++
	}
	return n > 0
}

// componentOfPath names the component a file belongs to from its name or directory
// ("kube-proxy.flags", "kubelet/flags").
func componentOfPath(file string) platform.Component {
	parts := strings.Split(strings.ToLower(filepath.ToSlash(file)), "/")
	for i := len(parts) - 1; i >= 0 && i >= len(parts)-2; i-- {
		switch {
		case strings.Contains(parts[i], "proxy"):
			return platform.KubeProxy
		case strings.Contains(parts[i], "kubelet"):
			return platform.Kubelet
		}
	}
	return ""
}

// looksModules recognises a modules-load.d file: in a modules-load.d directory, one module
// name per line.
func looksModules(file, text string) bool {
	if !strings.Contains(filepath.ToSlash(file), "modules-load.d/") && !strings.HasSuffix(file, ".modules") {
		return false
	}
	n := 0
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";") {
			continue
		}
		for _, c := range l {
			if !(c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
				return false
			}
		}
		n++
	}
	return n > 0
}

func guessComponentByFlags(ctx *Context, text string) platform.Component {
	toks, _ := Tokenize(text, DialectAuto)
	kl, kp := 0, 0
	for _, t := range toks {
		if !strings.HasPrefix(t.Text, "--") {
			continue
		}
		name, _, _ := strings.Cut(t.Text[2:], "=")
		_, inKL := ctx.Catalogs.Kubelet.Lookup(name)
		_, inKP := ctx.Catalogs.KubeProxy.Lookup(name)
		_, histKL := platform.LookupFlagChange(platform.Kubelet, normalizeFlagName(name))
		if inKL || histKL {
			kl++
		}
		if inKP {
			kp++
		}
	}
	if kp > kl {
		return platform.KubeProxy
	}
	return platform.Kubelet
}

// assignNodes attaches hand-written inputs to spec nodes: command lines by
// --hostname-override, and the OS of command lines from the spec node when their own text
// does not tell. Unknown OS defaults to Windows: kubewin checks Windows nodes first.
//
// The OS is taken only from evidence: the line's own text (settle), the spec node, or sibling
// inputs in the same directory whose OS is proven and agrees. Without evidence the line is
// judged as for Windows (kubewin checks Windows nodes first) but marked OSAssumed, and the
// engine turns the findings of rules that need a known OS into info.
func assignNodes(ctx *Context) {
	for _, cl := range ctx.CommandLines {
		if n, ok := ctx.SpecNode(cl.Node); ok && cl.OS == OSUnknown {
			cl.OS, cl.OSEvidence = OSKind(n.OS), "the spec's node "+n.Name
		}
	}
	for _, cl := range ctx.CommandLines {
		if cl.OS != OSUnknown {
			continue
		}
		if os, why := siblingOS(ctx, cl); os != OSUnknown {
			cl.OS, cl.OSEvidence = os, why
			continue
		}
		cl.OS, cl.OSAssumed = OSWindows, true
	}
}

// siblingOS is the OS proven by other inputs in the same directory as cl, when they agree.
func siblingOS(ctx *Context, cl *CommandLine) (OSKind, string) {
	dir := filepath.Dir(cl.File)
	found, why := OSUnknown, ""
	for _, o := range ctx.CommandLines {
		if o == cl || o.OS == OSUnknown || o.OSAssumed || filepath.Dir(o.File) != dir || o.File == cl.File || strings.HasPrefix(o.File, "--") {
			continue
		}
		if found != OSUnknown && found != o.OS {
			return OSUnknown, ""
		}
		found, why = o.OS, "the sibling "+filepath.Base(o.File)+" ("+o.OSEvidence+")"
	}
	return found, why
}

// hasProblem reports whether a problem of rule id was recorded for file.
func (ctx *Context) hasProblem(id, file string) bool {
	for _, p := range ctx.Problems {
		if p.RuleID == id && p.Location.File == file {
			return true
		}
	}
	return false
}

// looksSystemdUnit reports whether text is a systemd unit or drop-in (a .conf in
// kubelet.service.d/ is one, not YAML): its first section header is [Unit], [Service] or
// [Install]. It is read as a script (ExecStart= lines start programs).
func looksSystemdUnit(trim string) bool {
	for _, l := range strings.Split(trim, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";") {
			continue
		}
		return l == "[Unit]" || l == "[Service]" || l == "[Install]"
	}
	return false
}
