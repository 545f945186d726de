package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubewin/kubewin/internal/fieldpath"
)

// Positions maps document paths ("spec.template.spec.containers[0].image") to their line and
// column, so that findings on decoded objects can point into the file the user wrote.
type Positions struct {
	// Base is added to every line: the first line of the document inside its file, minus one.
	Base int
	m    map[string][2]int
}

// Line returns the line of path, or of its nearest ancestor that has one; 0 when unknown.
func (p *Positions) Line(path string) int {
	l, _ := p.Locate(path)
	return l
}

// Locate returns line and column of path or its nearest ancestor.
func (p *Positions) Locate(path string) (int, int) {
	if p == nil || p.m == nil {
		return 0, 0
	}
	for {
		if lc, ok := p.m[path]; ok {
			return lc[0] + p.Base, lc[1]
		}
		if path == "" {
			return 0, 0
		}
		path = fieldpath.Parent(path)
	}
}

// maxAliasValues bounds the values reached through YAML aliases, so that an alias bomb in a
// hand-written file is a finding, not seconds of work and an out-of-memory. Values written out
// in the file are bounded by its size and not counted.
const maxAliasValues = 1 << 14

// yamlDoc is one decoded YAML (or JSON) document: its node tree, positions and JSON encoding.
type yamlDoc struct {
	Node *yaml.Node
	Pos  *Positions
	// JSON is the document re-encoded as JSON, ready for the Kubernetes decoders.
	JSON []byte
	// Line is the first line of the document in its file.
	Line int
}

// splitYAML decodes every document of a multi-document YAML (or a single JSON) stream.
// Documents that fail to decode end the stream with an error whose line is in the message.
func splitYAML(data []byte) ([]yamlDoc, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []yamlDoc
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if n.Kind == 0 || (n.Kind == yaml.DocumentNode && len(n.Content) == 0) {
			continue
		}
		root := &n
		if root.Kind == yaml.DocumentNode {
			root = root.Content[0]
		}
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			continue
		}
		pos := &Positions{m: map[string][2]int{}}
		budget := maxAliasValues
		var buf bytes.Buffer
		if err := encodeNode(&buf, root, "", pos, &budget, false); err != nil {
			return out, fmt.Errorf("line %d: %w", root.Line, err)
		}
		out = append(out, yamlDoc{Node: root, Pos: pos, JSON: buf.Bytes(), Line: root.Line})
	}
}

// encodeNode writes n as JSON and records the position of every path. It is a direct walk so
// that each manifest is parsed once (sigs.k8s.io/yaml would parse it a second time).
func encodeNode(buf *bytes.Buffer, n *yaml.Node, path string, pos *Positions, budget *int, aliased bool) error {
	if aliased {
		*budget--
		if *budget < 0 {
			return errors.New("YAML aliases expand to too many values")
		}
	}
	if _, ok := pos.m[path]; !ok {
		pos.m[path] = [2]int{n.Line, n.Column}
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return errors.New("unresolved alias")
		}
		return encodeNode(buf, n.Alias, path, pos, budget, true)
	case yaml.MappingNode:
		buf.WriteByte('{')
		seen := make(map[string]bool, len(n.Content)/2)
		first := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				return fmt.Errorf("line %d: merge keys (<<) are not supported", k.Line)
			}
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: mapping key is not a scalar", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("line %d: duplicate key %q", k.Line, k.Value)
			}
			seen[k.Value] = true
			if !first {
				buf.WriteByte(',')
			}
			first = false
			kb, _ := json.Marshal(k.Value)
			buf.Write(kb)
			buf.WriteByte(':')
			child := k.Value
			if path != "" {
				child = path + "." + k.Value
			}
			pos.m[child] = [2]int{k.Line, k.Column}
			if err := encodeNode(buf, v, child, pos, budget, aliased); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeNode(buf, c, path+"["+strconv.Itoa(i)+"]", pos, budget, aliased); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		return encodeScalar(buf, n)
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			buf.WriteString("null")
			return nil
		}
		return encodeNode(buf, n.Content[0], path, pos, budget, aliased)
	default:
		return fmt.Errorf("line %d: unsupported YAML node", n.Line)
	}
	return nil
}

func encodeScalar(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		buf.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		buf.WriteString(strconv.FormatBool(b))
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			// Too large for int64: keep the digits as a float literal the decoders reject
			// with a precise message.
			var f float64
			if err2 := n.Decode(&f); err2 != nil {
				return fmt.Errorf("line %d: %w", n.Line, err)
			}
			buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
			return nil
		}
		buf.WriteString(strconv.FormatInt(i, 10))
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b, err := json.Marshal(f)
		if err != nil {
			// NaN and Inf have no JSON form; keep them as strings.
			b, _ = json.Marshal(n.Value)
		}
		buf.Write(b)
	default:
		b, _ := json.Marshal(n.Value)
		buf.Write(b)
	}
	return nil
}

// lineOfOffset returns the 1-based line and column of byte offset off in data.
func lineOfOffset(data []byte, off int) (int, int) {
	if off > len(data) {
		off = len(data)
	}
	if off < 0 {
		off = 0
	}
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}
