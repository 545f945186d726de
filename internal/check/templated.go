package check

import (
	"path/filepath"
	"strings"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/kubewin/kubewin/internal/check/templates"
	"github.com/kubewin/kubewin/internal/platform"
)

// Templates: an input written for a template engine (Jinja2/Ansible, Go templates, Helm) is
// read as the template it is, not as the file it renders to. Its placeholders ({{ x }}) are
// values known only at render time: a rule never judges their value, a placeholder is never a
// flag or a path of its own, and flags written literally around them are judged as usual. Its
// statements ({% if %}) are dropped as the renderer drops them; the parts they guard are all
// read (the union of the branches), so a setting guarded by a condition counts as present.

// TemplateFile records that an input is a template and what its template syntax is.
type TemplateFile struct {
	File string
	templates.Info
	// Below maps lines rendered only below a Kubernetes release (a version-test branch) to it.
	Below map[int]templates.Below
}

// RenderedBelow returns the release below which the template renders line of file, when a
// version test bounds it.
func (c *Context) RenderedBelow(file string, line int) (platform.Version, bool) {
	t, ok := c.Template(file)
	if !ok || line <= 0 {
		return platform.Version{}, false
	}
	b, ok := t.Below[line]
	return platform.Version{Major: b.Major, Minor: b.Minor}, ok
}

// Template returns the template record of file, if the file holds template-engine syntax.
func (c *Context) Template(file string) (TemplateFile, bool) {
	for _, t := range c.Templates {
		if t.File == file {
			return t, true
		}
	}
	return TemplateFile{}, false
}

// RenderTime reports whether v holds a template expression ({{ x }}, <%= x %>): its value is known only
// when the template is rendered, so no rule can judge it.
func RenderTime(v string) bool {
	if !strings.Contains(v, "{{") && !strings.Contains(v, "<%") {
		return false
	}
	for _, s := range templates.Scan(v) {
		if s.Kind == templates.Expr {
			return true
		}
	}
	return false
}

// FillMarker reports whether v is a whole-value marker that a renderer other than a template
// engine replaces before use: an upper-case identifier with an underscore (MAX_PODS,
// DNS_CLUSTER_IP, as awslabs/amazon-eks-ami's kubelet.service filled by sed), or a name
// between __…__, @…@ or %…% delimiters. Only a value of the wrong type for its flag is taken
// for one (a number flag given MAX_PODS), so a real string value is never hidden.
func FillMarker(v string) bool {
	v = strings.TrimSpace(v)
	for _, d := range []string{"__", "@", "%"} {
		if len(v) > 2*len(d) && strings.HasPrefix(v, d) && strings.HasSuffix(v, d) && isMarkerName(v[len(d):len(v)-len(d)], false) {
			return true
		}
	}
	return isMarkerName(v, true)
}

// isMarkerName: upper-case letters, digits and underscores, starting with a letter; with
// needUnderscore, at least one underscore between words.
func isMarkerName(s string, needUnderscore bool) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	under := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_' && i > 0 && i < len(s)-1:
			under = true
		default:
			return false
		}
	}
	return under || !needUnderscore
}

// templateSuffixes are the extensions template engines' files carry after the extension of
// what they render to ("config.toml.j2", "kubelet.service.tmpl").
var templateSuffixes = map[string]bool{".j2": true, ".jinja": true, ".jinja2": true, ".tmpl": true, ".tpl": true,
	".gotmpl": true, ".template": true, ".erb": true}

// dataExt is the lower-cased extension of what file renders to: a template suffix is dropped
// ("containerd.toml.j2" is a .toml). A name that is only the suffix has no extension.
func dataExt(file string) string {
	base := strings.ToLower(filepath.Base(file))
	ext := filepath.Ext(base)
	if templateSuffixes[ext] {
		return filepath.Ext(strings.TrimSuffix(base, ext))
	}
	return ext
}

// noteTemplate records file as a template when its text holds template-engine syntax and
// returns whether it does.
func noteTemplate(ctx *Context, file, text string) bool {
	if !templates.HasSyntax(text) {
		return false
	}
	ctx.Templates = append(ctx.Templates, TemplateFile{File: file, Info: templates.Describe(text), Below: templates.VersionBelow(text)})
	return true
}

// storedTemplateParse notes, as info, that a template of a data format does not parse as
// stored: true of almost every template, and no problem, because the renderer runs first. The
// rendered structure is what check reads.
func storedTemplateParse(ctx *Context, file, text, ext string) {
	var err error
	switch ext {
	case ".json", ".yaml", ".yml":
		_, err = splitYAML([]byte(text))
	case ".toml":
		var m map[string]any
		err = toml.Unmarshal([]byte(text), &m)
	default:
		return
	}
	if err == nil {
		return
	}
	ctx.Problems = append(ctx.Problems, Problem{RuleID: "KW0001", Location: Location{File: file, Line: errLine(err)}, Severity: Info,
		Message: "a template: as stored it is not valid " + strings.TrimPrefix(ext, ".") + " (" + err.Error() + "); it is read as rendered, its placeholders as values known at render time",
		Fix:     "Nothing, if the template is rendered before use; check the rendered file too."})
}
