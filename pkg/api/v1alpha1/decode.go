package v1alpha1

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// maxValues bounds the values a document may reuse through aliases and merge keys, so that an
// "alias bomb" is rejected instead of exhausting memory and time. Values written out in the
// document cost nothing (they are bounded by its size); 2^17 reused values is still room for a
// node template merged into thousands of nodes.
const maxValues = 1 << 17

// decoder walks a yaml.Node tree against the Go type it must fill, the way encoding/json would
// with DisallowUnknownFields, but collecting every problem with its position instead of
// stopping at the first, and recording the position of every field for Source.
type decoder struct {
	src    *Source
	errs   ErrorList
	bad    []string // paths that failed to decode; Validate's findings under them are noise
	budget int
	spent  bool // the budget ran out and that was reported
	shared int  // > 0 while decoding a value reached through an alias or merge key
	fields map[reflect.Type][]structField
}

type structField struct {
	name  string // JSON name
	index int
}

// decodeDocument reads exactly one YAML (or JSON) document into a Cluster. The Cluster is nil
// when the document cannot be read at all (syntax error, empty, not a mapping).
func decodeDocument(file string, data []byte) (*Cluster, *Source, ErrorList, []string) {
	d := &decoder{src: newSource(file, len(data)/16), budget: maxValues, fields: map[reflect.Type][]structField{}}
	root, err := readSingleDocument(data)
	if err != nil {
		var fe *FieldError
		if !errors.As(err, &fe) {
			fe = &FieldError{Message: err.Error()}
		}
		fe.File = file
		return nil, d.src, ErrorList{fe}, nil
	}
	d.src.set("", root.Line, root.Column)
	if root.Kind != yaml.MappingNode {
		d.typeError("", root, reflect.TypeFor[Cluster]())
		return nil, d.src, d.errs, d.bad
	}
	c := &Cluster{}
	d.value(root, reflect.ValueOf(c).Elem(), "")
	if d.spent {
		// What was decoded before the budget ran out is arbitrary; validating it would only
		// bury the one error that matters.
		return nil, d.src, d.errs, d.bad
	}
	return c, d.src, d.errs, d.bad
}

// readSingleDocument parses data and insists on exactly one non-empty document.
func readSingleDocument(data []byte) (*yaml.Node, error) {
	docs, err := parseDocuments(data)
	if err != nil && bytes.ContainsRune(data, '\t') && startsLikeJSON(data) {
		// JSON allows tabs wherever it allows spaces; YAML does not allow them as indentation.
		// A raw tab cannot occur inside a JSON string, so replacing every tab keeps the text,
		// the line numbers and the columns of valid JSON.
		docs, err = parseDocuments(bytes.ReplaceAll(data, []byte{'\t'}, []byte{' '}))
	}
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 || isNull(docs[0]) {
		return nil, &FieldError{Line: 1, Message: "the document is empty",
			Expected: "a " + KindCluster + " (apiVersion " + GroupVersion + ")"}
	}
	if len(docs) > 1 {
		return nil, &FieldError{Line: docs[1].Line, Column: docs[1].Column,
			Message: fmt.Sprintf("found %d YAML documents", len(docs)), Expected: "exactly one document"}
	}
	return docs[0], nil
}

func parseDocuments(data []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, syntaxError(err)
		}
		if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
			docs = append(docs, doc.Content[0])
		} else {
			docs = append(docs, &doc)
		}
	}
}

func startsLikeJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError turns the YAML library's "yaml: line 3: could not find expected ':'" into a
// FieldError with a line.
func syntaxError(err error) *FieldError {
	msg := err.Error()
	fe := &FieldError{Expected: "valid YAML or JSON"}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		fe.Line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	fe.Message = "syntax error: " + strings.TrimPrefix(msg, "yaml: ")
	return fe
}

func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

func (d *decoder) fail(path fieldPath, n *yaml.Node, message, expected string) {
	d.errs = append(d.errs, &FieldError{File: d.src.File, Line: n.Line, Column: n.Column,
		Field: string(path), Message: message, Expected: expected})
	d.bad = append(d.bad, string(path))
}

// value decodes n into v, which has one of the kinds the spec types use.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path fieldPath) {
	if n.Kind == yaml.AliasNode {
		d.shared++
		defer func() { d.shared-- }()
	}
	n = resolveAlias(n)
	if n == nil {
		return
	}
	if d.shared > 0 && !d.spend(1, path, n) {
		return
	}
	if isNull(n) {
		return // null is the zero value, as in JSON; required fields are Validate's business
	}
	switch v.Kind() {
	case reflect.Struct:
		d.structValue(n, v, path)
	case reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		d.value(n, elem.Elem(), path)
		v.Set(elem)
	case reflect.Slice:
		d.sliceValue(n, v, path)
	case reflect.Map:
		d.mapValue(n, v, path)
	case reflect.String, reflect.Int, reflect.Bool:
		d.scalarValue(n, v, path)
	default:
		// The spec types use no other kinds; a test decodes every field to keep it that way.
		d.fail(path, n, fmt.Sprintf("kubewin cannot decode Go type %s", v.Type()), "a spec type")
	}
}

// spend takes k values from the budget and reports, once, when it runs out.
func (d *decoder) spend(k int, path fieldPath, n *yaml.Node) bool {
	if d.budget -= k; d.budget >= 0 {
		return true
	}
	if !d.spent {
		d.spent = true
		d.fail(path, n, fmt.Sprintf("the document reuses more than %d values through aliases or merge keys", maxValues),
			"a document without alias bombs")
	}
	return false
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for depth := 0; n != nil && n.Kind == yaml.AliasNode; depth++ {
		if depth > 100 {
			return nil
		}
		n = n.Alias
	}
	return n
}

func (d *decoder) structValue(n *yaml.Node, v reflect.Value, path fieldPath) {
	if n.Kind != yaml.MappingNode {
		d.typeError(path, n, v.Type())
		return
	}
	fields := d.structFields(v.Type())
	for _, kv := range d.pairs(n, path) {
		i := slices.IndexFunc(fields, func(f structField) bool { return f.name == kv.name })
		child := path.Child(kv.name)
		if i < 0 {
			d.fail(child, kv.key, unknownFieldMessage(kv.name, fields), "one of "+fieldNames(fields))
			continue
		}
		d.recordPosition(child, kv.key, kv.value)
		d.pairValue(kv, v.Field(fields[i].index), child)
	}
}

func (d *decoder) mapValue(n *yaml.Node, v reflect.Value, path fieldPath) {
	if n.Kind != yaml.MappingNode {
		d.typeError(path, n, v.Type())
		return
	}
	m := reflect.MakeMap(v.Type())
	for _, kv := range d.pairs(n, path) {
		child := path.Key(kv.name)
		d.recordPosition(child, kv.key, kv.value)
		elem := reflect.New(v.Type().Elem()).Elem()
		d.pairValue(kv, elem, child)
		m.SetMapIndex(reflect.ValueOf(kv.name).Convert(v.Type().Key()), elem)
	}
	v.Set(m)
}

func (d *decoder) sliceValue(n *yaml.Node, v reflect.Value, path fieldPath) {
	if n.Kind != yaml.SequenceNode {
		d.typeError(path, n, v.Type())
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		child := path.Index(i)
		if d.shared == 0 {
			d.src.set(child, item.Line, item.Column)
		}
		d.value(item, s.Index(i), child)
	}
	v.Set(s)
}

func (d *decoder) scalarValue(n *yaml.Node, v reflect.Value, path fieldPath) {
	if n.Kind != yaml.ScalarNode {
		d.typeError(path, n, v.Type())
		return
	}
	tag := n.ShortTag()
	switch {
	case v.Kind() == reflect.String && tag == "!!str":
		v.SetString(n.Value)
	case v.Kind() == reflect.Int && tag == "!!int":
		var i int64
		if err := n.Decode(&i); err != nil || v.OverflowInt(i) {
			d.fail(path, n, fmt.Sprintf("%s does not fit in an integer", n.Value), "an integer")
			return
		}
		v.SetInt(i)
	case v.Kind() == reflect.Bool && tag == "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			d.fail(path, n, fmt.Sprintf("%q is not a boolean", n.Value), "true or false")
			return
		}
		v.SetBool(b)
	default:
		d.typeError(path, n, v.Type())
	}
}

// recordPosition remembers where path is: the value for scalars (so "prefix: 33" points at 33),
// the key for mappings and lists (so "members:" is pointed at, not its first entry).
func (d *decoder) recordPosition(path fieldPath, key, value *yaml.Node) {
	if d.shared > 0 {
		return // inside reused content; errors point at the alias or merge that reused it
	}
	if value != nil && value.Kind == yaml.ScalarNode {
		d.src.set(path, value.Line, value.Column)
		return
	}
	d.src.set(path, key.Line, key.Column)
}

type keyValue struct {
	name       string
	key, value *yaml.Node
	merged     bool // came in through a merge key, so it is a reused value
}

func (d *decoder) pairValue(kv keyValue, v reflect.Value, path fieldPath) {
	if kv.merged {
		d.shared++
		defer func() { d.shared-- }()
	}
	d.value(kv.value, v, path)
}

// pairs lists a mapping's entries with merge keys ("<<: *base") expanded: explicit keys win over
// merged ones, earlier merge sources over later ones. A key given twice is an error, as in JSON
// decoding with strict checks (YAML itself forbids duplicate keys).
func (d *decoder) pairs(n *yaml.Node, path fieldPath) []keyValue {
	return d.mergedPairs(n, path, 0)
}

// maxMergeDepth bounds merge chains; an anchor may even merge itself, which has no end.
const maxMergeDepth = 16

func (d *decoder) mergedPairs(n *yaml.Node, path fieldPath, depth int) []keyValue {
	out := make([]keyValue, 0, len(n.Content)/2)
	seen := keySet{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, val)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.fail(path, k, "found "+describeNode(k)+" as a mapping key", "a string key")
			continue
		}
		if first := seen.get(k.Value); first != nil {
			d.fail(path.Child(k.Value), k, fmt.Sprintf("duplicate key %q (first given at line %d)", k.Value, first.Line),
				"each key once")
			continue
		}
		seen.add(k.Value, k)
		out = append(out, keyValue{name: k.Value, key: k, value: val})
	}
	for _, m := range merges {
		if depth >= maxMergeDepth {
			d.fail(path, m, fmt.Sprintf("merge keys (<<) nest more than %d deep", maxMergeDepth),
				"a merge that does not refer to itself")
			break
		}
		for _, src := range mergeSources(m) {
			if !d.spend(len(src.Content), path, src) {
				return out
			}
			if src.Kind != yaml.MappingNode {
				d.fail(path, m, "a merge key (<<) refers to a "+kindName(src), "a mapping or a list of mappings")
				continue
			}
			for _, kv := range d.mergedPairs(src, path, depth+1) {
				if seen.get(kv.name) == nil {
					seen.add(kv.name, kv.key)
					kv.merged = true
					out = append(out, kv)
				}
			}
		}
	}
	return out
}

// keySet finds a mapping's keys by linear search while there are few (the spec's mappings have
// a handful) and switches to a map for large ones, so neither case costs much.
type keySet struct {
	names []string
	nodes []*yaml.Node
	index map[string]*yaml.Node
}

const keySetLinear = 16

func (s *keySet) get(name string) *yaml.Node {
	if s.index != nil {
		return s.index[name]
	}
	for i, n := range s.names {
		if n == name {
			return s.nodes[i]
		}
	}
	return nil
}

func (s *keySet) add(name string, n *yaml.Node) {
	if s.index == nil && len(s.names) < keySetLinear {
		s.names = append(s.names, name)
		s.nodes = append(s.nodes, n)
		return
	}
	if s.index == nil {
		s.index = make(map[string]*yaml.Node, 2*keySetLinear)
		for i, k := range s.names {
			s.index[k] = s.nodes[i]
		}
	}
	s.index[name] = n
}

func mergeSources(m *yaml.Node) []*yaml.Node {
	m = resolveAlias(m)
	if m == nil {
		return nil
	}
	if m.Kind != yaml.SequenceNode {
		return []*yaml.Node{m}
	}
	out := make([]*yaml.Node, 0, len(m.Content))
	for _, c := range m.Content {
		if c = resolveAlias(c); c != nil {
			out = append(out, c)
		}
	}
	return out
}

func (d *decoder) typeError(path fieldPath, n *yaml.Node, t reflect.Type) {
	found := "found " + describeNode(n)
	expected := expectedKind(t)
	if t.Kind() == reflect.String && n.Kind == yaml.ScalarNode {
		expected += fmt.Sprintf(`; quote it: "%s"`, n.Value)
	}
	d.fail(path, n, found, expected)
}

func describeNode(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return kindName(n)
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	switch n.ShortTag() {
	case "!!str":
		return fmt.Sprintf("string %q", v)
	case "!!int", "!!float":
		return "number " + v
	case "!!bool":
		return "boolean " + v
	case "!!timestamp":
		return "timestamp " + v
	default:
		return fmt.Sprintf("%s value %q", n.ShortTag(), v)
	}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	default:
		return "alias"
	}
}

func expectedKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return expectedKind(t.Elem())
	case reflect.Struct:
		return "a mapping"
	case reflect.Slice:
		return "a list"
	case reflect.Map:
		return "a mapping of strings"
	case reflect.Int:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	default:
		return "a string"
	}
}

// structFields lists t's JSON field names in declaration order.
func (d *decoder) structFields(t reflect.Type) []structField {
	if fs, ok := d.fields[t]; ok {
		return fs
	}
	var fs []structField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fs = append(fs, structField{name: name, index: i})
	}
	d.fields[t] = fs
	return fs
}

func fieldNames(fs []structField) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

// unknownFieldMessage names the field and, for a near miss ("podCidrs", "nic"), the field the
// user probably meant.
func unknownFieldMessage(name string, fs []structField) string {
	msg := fmt.Sprintf("unknown field %q", name)
	best, bestDist := "", 3
	for _, f := range fs {
		if strings.EqualFold(f.name, name) {
			return msg + fmt.Sprintf("; did you mean %q?", f.name)
		}
		if dist := editDistance(strings.ToLower(name), strings.ToLower(f.name)); dist < bestDist {
			best, bestDist = f.name, dist
		}
	}
	if best != "" && len(name) > bestDist {
		msg += fmt.Sprintf("; did you mean %q?", best)
	}
	return msg
}

// editDistance is the Levenshtein distance, for suggestions only.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
