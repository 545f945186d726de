package discover

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// MarshalJSON-like output: the Result as indented JSON with sorted map keys (encoding/json
// sorts them), so the same cluster gives the same bytes.
func (r *Result) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode discovery result: %w", err)
	}
	return append(b, '\n'), nil
}

// YAML renders the discovered Cluster as a kubewin spec whose values carry comments naming
// their source; conflicts, missing values, refused reads and notes head the document. The
// document decodes as a v1alpha1.Cluster (comments are ignored by decoders).
func (r *Result) YAML() ([]byte, error) {
	ann := r.annotations()
	// Nodes are encoded one at a time and spliced in, so that a 5,000-node cluster never has
	// its whole YAML tree in memory at once.
	c := *r.Cluster
	nodes := c.Spec.Nodes
	c.Spec.Nodes = []v1alpha1.Node{}
	var head bytes.Buffer
	if err := encodeAnnotated(&head, &c, "", ann, r.header()); err != nil {
		return nil, err
	}
	out := head.Bytes()
	const marker = "\n  nodes: []\n"
	i := bytes.Index(out, []byte(marker))
	if len(nodes) == 0 || i < 0 {
		return out, nil
	}
	var b bytes.Buffer
	b.Grow(len(out) + 600*len(nodes))
	b.Write(out[:i])
	b.WriteString("\n  nodes:\n")
	var one bytes.Buffer
	for k := range nodes {
		one.Reset()
		if err := encodeAnnotated(&one, nodes[k:k+1], "spec.nodes", ann, ""); err != nil {
			return nil, err
		}
		for _, line := range bytes.SplitAfter(one.Bytes(), []byte("\n")) {
			if len(line) > 0 {
				b.WriteString("    ")
				b.Write(line)
			}
		}
	}
	b.Write(out[i+len(marker):])
	return b.Bytes(), nil
}

// encodeAnnotated writes v (encoded through its JSON tags) as block-style YAML with the
// annotations of the paths under path as comments.
func encodeAnnotated(w *bytes.Buffer, v any, path string, ann map[string]string, head string) error {
	js, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", pathOr(path), err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(js, &doc); err != nil {
		return fmt.Errorf("re-read %s as YAML: %w", pathOr(path), err)
	}
	annotate(doc.Content[0], path, ann)
	doc.HeadComment = head
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("encode YAML of %s: %w", pathOr(path), err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("encode YAML of %s: %w", pathOr(path), err)
	}
	return nil
}

func pathOr(p string) string {
	if p == "" {
		return "cluster"
	}
	return p
}

// annotations maps field paths to the comment their value gets.
func (r *Result) annotations() map[string]string {
	ann := make(map[string]string, len(r.Provenance)+len(r.Missing))
	for path, p := range r.Provenance {
		c := p.Source
		if len(p.Agrees) > 0 {
			c += "; agrees: " + strings.Join(p.Agrees, "; ")
		}
		ann[path] = c
	}
	others := map[string][]string{}
	var order []string
	for _, c := range r.Conflicts {
		if _, ok := others[c.Field]; !ok {
			order = append(order, c.Field)
		}
		for _, v := range c.Values {
			if v.Value != c.Chosen {
				others[c.Field] = append(others[c.Field], fmt.Sprintf("%s says %s", v.Source, v.Value))
			}
		}
	}
	for _, f := range order {
		c := "CONFLICT: " + strings.Join(others[f], "; ")
		if src := r.Provenance[f].Source; src != "" {
			c += "; used: " + src
		}
		ann[f] = c
	}
	for _, m := range r.Missing {
		if len(m.Nodes) == 0 {
			ann[m.Field] = "MISSING: supply " + m.Supply
			continue
		}
		// spec.nodes[*].nics[0].name -> spec.nodes[NAME].nics[0].name
		for _, n := range m.Nodes {
			ann[strings.Replace(m.Field, "[*]", "["+n+"]", 1)] = "MISSING: supply " + m.Supply
		}
	}
	return ann
}

// annotate walks the YAML tree built from the JSON encoding, turns flow style (JSON) into
// block style with scalar lists inline, and attaches comments by field path. Elements of
// spec.nodes are addressed by name, other list elements by index.
func annotate(n *yaml.Node, path string, ann map[string]string) {
	n.Style = 0
	switch n.Kind {
	case yaml.MappingNode:
		// Empty settings blocks (windows: {}, images: {}) say nothing; drop them.
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			if v := n.Content[i+1]; v.Kind == yaml.MappingNode && len(v.Content) == 0 {
				continue
			}
			kept = append(kept, n.Content[i], n.Content[i+1])
		}
		n.Content = kept
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			key.Style = 0
			p := key.Value
			if path != "" {
				p = path + "." + key.Value
			}
			annotate(val, p, ann)
			if c, ok := ann[p]; ok {
				if val.Kind == yaml.ScalarNode || (val.Kind == yaml.SequenceNode && val.Style == yaml.FlowStyle) {
					val.LineComment = c
				} else {
					key.HeadComment = c
				}
			}
		}
	case yaml.SequenceNode:
		scalars := true
		for i, el := range n.Content {
			if el.Kind != yaml.ScalarNode {
				scalars = false
			}
			idx := "[" + strconv.Itoa(i) + "]"
			if path == "spec.nodes" {
				if name := mapValue(el, "name"); name != "" {
					idx = "[" + name + "]"
				}
			}
			annotate(el, path+idx, ann)
		}
		if scalars && len(n.Content) > 0 {
			n.Style = yaml.FlowStyle
		}
	default:
		// A null (absent list) or a scalar keeps its value; yaml quotes strings that need it.
	}
}

func mapValue(n *yaml.Node, key string) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// header is the comment block at the top of the YAML document.
func (r *Result) header() string {
	var b strings.Builder
	b.WriteString("Discovered by kubewin discover. Comments name each value's source.\n")
	fmt.Fprintf(&b, "Cluster made by: %s", r.MadeBy.Tool)
	if len(r.MadeBy.Evidence) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(r.MadeBy.Evidence, "; "))
	}
	b.WriteString("\n")
	for _, c := range r.Conflicts {
		fmt.Fprintf(&b, "CONFLICT %s:", c.Field)
		for _, v := range c.Values {
			fmt.Fprintf(&b, " [%s from %s]", v.Value, v.Source)
		}
		fmt.Fprintf(&b, "; using %s\n", c.Chosen)
	}
	for _, m := range r.Missing {
		fmt.Fprintf(&b, "MISSING %s: supply %s", m.Field, m.Supply)
		if len(m.Nodes) > 0 {
			fmt.Fprintf(&b, " (nodes: %s)", abbreviate(m.Nodes, 10))
		}
		b.WriteString("\n")
	}
	for _, d := range r.Denied {
		fmt.Fprintf(&b, "DENIED %s (see kubewin discover --print-rbac)\n", d)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "NOTE %s\n", n)
	}
	for _, p := range r.WindowsPrerequisites {
		fmt.Fprintf(&b, "WINDOWS %s: %s (%s); fix: %s\n", p.ID, p.Problem, p.Source, p.Fix)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Summary is the short account the CLI prints to stderr.
func (r *Result) Summary() string {
	var b strings.Builder
	for _, c := range r.Conflicts {
		fmt.Fprintf(&b, "conflict: %s:", c.Field)
		for _, v := range c.Values {
			fmt.Fprintf(&b, " %s (%s);", v.Value, v.Source)
		}
		fmt.Fprintf(&b, " using %s\n", c.Chosen)
	}
	for _, m := range r.Missing {
		fmt.Fprintf(&b, "missing: %s: supply %s", m.Field, m.Supply)
		if len(m.Nodes) > 0 {
			fmt.Fprintf(&b, " (%s: %s)", pluralNodes(len(m.Nodes)), abbreviate(m.Nodes, 5))
		}
		b.WriteString("\n")
	}
	for _, d := range r.Denied {
		fmt.Fprintf(&b, "forbidden: kubewin needs %s (kubewin discover --print-rbac prints the roles it needs)\n", d)
	}
	return b.String()
}

func pluralNodes(n int) string {
	if n == 1 {
		return "1 node"
	}
	return strconv.Itoa(n) + " nodes"
}
