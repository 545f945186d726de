package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
)

//go:embed page.html
var pageHTML string

// Layout: the picture is a fixed hierarchy — Linux nodes (gateway members one by one, other
// nodes as classes) on one side of the cluster network, Windows nodes with their HNS networks
// on the other — not a general graph, so the page places boxes in two columns itself instead
// of shipping a graph-layout library: the positions are deterministic, the page stays small
// (about 30 KB plus data), and a 5,000-node cluster is still a few dozen boxes because nodes
// are drawn as classes. Graphviz or a JS layout (dagre, ELK) would add a dependency and 0.3–1.5
// MB to every page without placing these boxes better.

// WriteHTML writes the page for p as one self-contained HTML document.
func WriteHTML(w io.Writer, p *Page) error {
	t, err := template.New("page").Parse(pageHTML)
	if err != nil {
		return fmt.Errorf("parse report template: %w", err)
	}
	// encoding/json escapes <, > and & (\u003c …), so the data cannot end the script element.
	data, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode report data: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, struct {
		Title string
		Data  template.JS
	}{Title: p.Cluster.Name, Data: template.JS(data)}); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}
