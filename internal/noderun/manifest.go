// Package noderun supervises the processes of a Kubernetes node (containerd, kubelet,
// kube-proxy) the way rke2's agent does: it reads a manifest of services written by
// `kubewin join`, starts each service once its dependencies run and the files it needs exist,
// restarts it with exponential backoff when it exits, applies manifest changes while running,
// rotates its log, and reports the state of every service in a status file.
package noderun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kubewin/kubewin/internal/atomicfs"
	"github.com/kubewin/kubewin/internal/fieldpath"
)

// Manifest API identity. A manifest with anything else is rejected, so a future format is never
// half-understood by an older supervisor.
const (
	ManifestAPIVersion = "kubewin.io/v1alpha1"
	ManifestKind       = "NodeServices"
)

// Manifest lists the services a node runs.
type Manifest struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Services   []Service `json:"services"`
}

// Service is one supervised process.
type Service struct {
	// Name is a DNS label, unique in the manifest.
	Name string `json:"name"`
	// Path is the absolute path of the executable.
	Path string   `json:"path"`
	Args []string `json:"args,omitempty"`
	// Env entries (KEY=VALUE) are added to the supervisor's own environment; a key given here
	// overrides the inherited value.
	Env []string `json:"env,omitempty"`
	// After names services that must be running (started and alive for StartGrace) before
	// this one starts. It only orders starts: a dependency's later restart leaves this service
	// alone, because kubelet must survive a containerd restart.
	After []string `json:"after,omitempty"`
	// WaitFiles must all exist before the service starts (kubeconfigs, certificates).
	WaitFiles []string `json:"waitFiles,omitempty"`
	// LogFile receives stdout and stderr and is rotated as LogFile, LogFile.1, ...
	LogFile string `json:"logFile"`
}

// ManifestError is one problem in a manifest. Line and Column are 1-based and 0 when unknown
// (a Manifest built in memory and passed to WriteManifest has no source positions).
type ManifestError struct {
	File   string
	Line   int
	Column int
	// Field is the JSON path of the offending value, e.g. "services[1].after[0]"; empty for
	// problems with the document as a whole (syntax errors).
	Field string
	// Msg says what was expected and what was found.
	Msg string
}

func (e *ManifestError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// LoadManifest reads and validates the manifest at path. Every problem found is reported as a
// *ManifestError (joined with errors.Join when there are several); a missing file is reported
// with an error that satisfies errors.Is(err, fs.ErrNotExist).
func LoadManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read node services manifest: %w", err)
	}
	return ParseManifest(path, data)
}

// ParseManifest decodes and validates a manifest; file is only used in error messages.
//
// The document is walked token by token instead of unmarshalled, because encoding/json matches
// keys case-insensitively, lets a repeated key silently win, and cannot say on which line a bad
// value is; all three would make a hand-edited manifest behave differently than it reads.
func ParseManifest(file string, data []byte) (*Manifest, error) {
	p := &parser{file: file, data: data, dec: json.NewDecoder(bytes.NewReader(data)), pos: map[string]int64{}}
	m, err := p.manifest()
	if err != nil {
		return nil, err
	}
	if errs := validate(m, file, p.locate); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return m, nil
}

// WriteManifest validates m and replaces path with it atomically (temporary file in the same
// directory, then rename), so the supervisor polling path never reads a half-written manifest.
// The bytes are deterministic: indented JSON in field order, with a trailing newline.
func WriteManifest(path string, m *Manifest) error {
	if m == nil {
		return fmt.Errorf("write node services manifest %s: nil manifest", path)
	}
	if errs := validate(m, path, nil); len(errs) > 0 {
		return fmt.Errorf("write node services manifest: %w", errors.Join(errs...))
	}
	data, err := marshalManifest(m)
	if err != nil {
		return fmt.Errorf("write node services manifest %s: %w", path, err)
	}
	// 0600: service environments may carry tokens.
	if err := atomicfs.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write node services manifest: %w", err)
	}
	return nil
}

func marshalManifest(m *Manifest) ([]byte, error) {
	c := *m
	if c.Services == nil {
		// "services": [] rather than null, so a reader never has to special-case null.
		c.Services = []Service{}
	}
	data, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// parser walks a manifest document and remembers the offset of every field it saw, so that
// validation errors found later can point at a line.
type parser struct {
	file string
	data []byte
	dec  *json.Decoder
	pos  map[string]int64 // field path -> byte offset of its key (or array element)
}

func (p *parser) manifest() (*Manifest, error) {
	m := &Manifest{}
	err := p.object("", func(key, path string) error {
		switch key {
		case "apiVersion":
			return p.str(path, &m.APIVersion)
		case "kind":
			return p.str(path, &m.Kind)
		case "services":
			return p.array(path, func(elem string) error {
				var s Service
				if err := p.service(elem, &s); err != nil {
					return err
				}
				m.Services = append(m.Services, s)
				return nil
			})
		default:
			return p.errAt(p.pos[path], path, "unknown field; expected one of apiVersion, kind, services")
		}
	})
	if err != nil {
		return nil, err
	}
	// Anything after the top-level object is a second document or garbage; both mean the file
	// is not what the writer intended.
	off := p.dec.InputOffset()
	if tok, err := p.dec.Token(); err != io.EOF {
		if err != nil {
			return nil, p.jsonErr(err, "")
		}
		return nil, p.errAt(off, "", fmt.Sprintf("unexpected %s after the top-level object", describe(tok)))
	}
	return m, nil
}

func (p *parser) service(path string, s *Service) error {
	return p.object(path, func(key, fpath string) error {
		switch key {
		case "name":
			return p.str(fpath, &s.Name)
		case "path":
			return p.str(fpath, &s.Path)
		case "logFile":
			return p.str(fpath, &s.LogFile)
		case "args":
			return p.strs(fpath, &s.Args)
		case "env":
			return p.strs(fpath, &s.Env)
		case "after":
			return p.strs(fpath, &s.After)
		case "waitFiles":
			return p.strs(fpath, &s.WaitFiles)
		default:
			return p.errAt(p.pos[fpath], fpath, "unknown field; expected one of name, path, args, env, after, waitFiles, logFile")
		}
	})
}

// object reads a JSON object (null counts as an empty one) and calls field for every key, with
// the decoder positioned before the value. Repeated keys are rejected.
func (p *parser) object(path string, field func(key, path string) error) error {
	off, present, err := p.open(path, '{', "an object")
	if err != nil || !present {
		return err
	}
	if path != "" {
		p.pos[path] = off
	}
	seen := map[string]bool{}
	for p.dec.More() {
		off := p.dec.InputOffset()
		tok, err := p.dec.Token()
		if err != nil {
			return p.jsonErr(err, path)
		}
		key, ok := tok.(string)
		if !ok {
			return p.errAt(off, path, fmt.Sprintf("expected a field name, got %s", describe(tok)))
		}
		fpath := key
		if path != "" {
			fpath = path + "." + key
		}
		p.pos[fpath] = off
		if seen[key] {
			return p.errAt(off, fpath, "field given twice")
		}
		seen[key] = true
		if err := field(key, fpath); err != nil {
			return err
		}
	}
	if _, err := p.dec.Token(); err != nil { // the closing '}'
		return p.jsonErr(err, path)
	}
	return nil
}

// open reads the token that starts an object or array (delim) at path and returns its offset;
// present is false for null, which counts as empty.
func (p *parser) open(path string, delim json.Delim, what string) (off int64, present bool, err error) {
	off = p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return off, false, p.jsonErr(err, path)
	}
	if tok == nil {
		return off, false, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != delim {
		return off, false, p.errAt(off, path, fmt.Sprintf("expected %s, got %s", what, describe(tok)))
	}
	return off, true, nil
}

// array reads a JSON array (null counts as an empty one) and calls elem for every element.
func (p *parser) array(path string, elem func(path string) error) error {
	if _, present, err := p.open(path, '[', "an array"); err != nil || !present {
		return err
	}
	for i := 0; p.dec.More(); i++ {
		epath := path + "[" + strconv.Itoa(i) + "]"
		p.pos[epath] = p.dec.InputOffset()
		if err := elem(epath); err != nil {
			return err
		}
	}
	if _, err := p.dec.Token(); err != nil { // the closing ']'
		return p.jsonErr(err, path)
	}
	return nil
}

// str reads a string value; null leaves dst unchanged, as if the field were left out.
func (p *parser) str(path string, dst *string) error {
	v, isNull, err := p.token(path)
	if err == nil && !isNull {
		*dst = v
	}
	return err
}

// strs reads a list of strings. A null element is refused: inside a list it is almost
// certainly a templating mistake, and dropping it silently would shift the arguments.
func (p *parser) strs(path string, dst *[]string) error {
	return p.array(path, func(epath string) error {
		off := p.dec.InputOffset()
		v, isNull, err := p.token(epath)
		if err != nil {
			return err
		}
		if isNull {
			return p.errAt(off, epath, "expected a string, got null")
		}
		*dst = append(*dst, v)
		return nil
	})
}

func (p *parser) token(path string) (v string, isNull bool, err error) {
	off := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return "", false, p.jsonErr(err, path)
	}
	switch t := tok.(type) {
	case string:
		return t, false, nil
	case nil:
		return "", true, nil
	default:
		return "", false, p.errAt(off, path, fmt.Sprintf("expected a string, got %s", describe(tok)))
	}
}

func (p *parser) jsonErr(err error, path string) error {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return p.errAt(syn.Offset-1, "", "invalid JSON: "+strings.TrimPrefix(syn.Error(), "json: "))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return p.errAt(int64(len(p.data)), path, "unexpected end of file")
	default:
		return p.errAt(p.dec.InputOffset(), path, strings.TrimPrefix(err.Error(), "json: "))
	}
}

func (p *parser) errAt(off int64, field, msg string) *ManifestError {
	line, col := lineCol(p.data, skipSpace(p.data, off))
	return &ManifestError{File: p.file, Line: line, Column: col, Field: field, Msg: msg}
}

// locate gives the line and column of a field path, falling back to its nearest parent.
func (p *parser) locate(path string) (int, int) {
	for q := path; q != ""; q = fieldpath.Parent(q) {
		if off, ok := p.pos[q]; ok {
			return lineCol(p.data, skipSpace(p.data, off))
		}
	}
	return 0, 0
}

// skipSpace moves an offset reported by the decoder (which points just after the previous
// token) to the start of the next token, so errors point at the value and not at a comma.
func skipSpace(data []byte, off int64) int64 {
	if off < 0 {
		off = 0
	}
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return off
}

func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

func describe(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "an array"
		default:
			return fmt.Sprintf("%q", string(v))
		}
	case string:
		return fmt.Sprintf("the string %q", v)
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	case float64, json.Number:
		return fmt.Sprintf("the number %v", v)
	default:
		return fmt.Sprintf("%v", v)
	}
}

// validate checks everything the parser cannot: identity, names, paths, references and cycles.
// locate may be nil (no source positions).
func validate(m *Manifest, file string, locate func(string) (int, int)) []error {
	var errs []error
	add := func(field, format string, args ...any) {
		e := &ManifestError{File: file, Field: field, Msg: fmt.Sprintf(format, args...)}
		if locate != nil {
			e.Line, e.Column = locate(field)
		}
		errs = append(errs, e)
	}
	if m.APIVersion != ManifestAPIVersion {
		add("apiVersion", "expected %q, got %q", ManifestAPIVersion, m.APIVersion)
	}
	if m.Kind != ManifestKind {
		add("kind", "expected %q, got %q", ManifestKind, m.Kind)
	}
	index := map[string]int{}
	logOwner := map[string]string{}
	for i, s := range m.Services {
		f := fmt.Sprintf("services[%d]", i)
		if err := checkDNSLabel(s.Name); err != "" {
			add(f+".name", "%s", err)
		} else if j, dup := index[s.Name]; dup {
			add(f+".name", "duplicate service name %q (also services[%d])", s.Name, j)
		} else {
			index[s.Name] = i
		}
		checkAbs(add, f+".path", s.Path, "the executable")
		checkAbs(add, f+".logFile", s.LogFile, "the log file")
		if s.LogFile != "" {
			// Two writers rotating one file would rename each other's output away.
			clean := filepath.Clean(s.LogFile)
			if other, ok := logOwner[clean]; ok {
				add(f+".logFile", "log file %q is already used by service %q", s.LogFile, other)
			} else {
				logOwner[clean] = s.Name
			}
		}
		for j, e := range s.Env {
			k, _, ok := strings.Cut(e, "=")
			if !ok || k == "" {
				add(fmt.Sprintf("%s.env[%d]", f, j), "expected KEY=VALUE, got %q", e)
			}
		}
		for j, w := range s.WaitFiles {
			checkAbs(add, fmt.Sprintf("%s.waitFiles[%d]", f, j), w, "the file to wait for")
		}
	}
	for i, s := range m.Services {
		seen := map[string]bool{}
		for j, a := range s.After {
			f := fmt.Sprintf("services[%d].after[%d]", i, j)
			switch _, known := index[a]; {
			case a == s.Name:
				add(f, "service %q cannot come after itself", a)
			case seen[a]:
				add(f, "service %q listed twice", a)
			case !known:
				add(f, "unknown service %q; expected the name of a service in this manifest", a)
			}
			seen[a] = true
		}
	}
	if cyc := findCycle(m.Services, index); cyc != nil {
		i := index[cyc[0]]
		add(fmt.Sprintf("services[%d].after", i), "dependency cycle %s", strings.Join(cyc, " -> "))
	}
	return errs
}

func checkAbs(add func(string, string, ...any), field, p, what string) {
	switch {
	case p == "":
		add(field, "expected the absolute path of %s, got nothing", what)
	case !filepath.IsAbs(p):
		add(field, "expected the absolute path of %s, got relative path %q", what, p)
	}
}

// checkDNSLabel returns why name is not an RFC 1123 label, or "".
func checkDNSLabel(name string) string {
	if name == "" {
		return "expected a DNS label (lowercase letters, digits and '-'), got nothing"
	}
	if len(name) > 63 {
		return fmt.Sprintf("expected a DNS label of at most 63 characters, got %d", len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (c != '-' || i == 0 || i == len(name)-1) {
			return fmt.Sprintf("expected a DNS label (lowercase letters, digits and '-', starting and ending with a letter or digit), got %q", name)
		}
	}
	return ""
}

// findCycle returns one dependency cycle as a path whose first and last names are equal, or
// nil. Unknown and self references are reported elsewhere and ignored here.
func findCycle(svcs []Service, index map[string]int) []string {
	const (
		unvisited = iota
		active
		done
	)
	color := make([]int, len(svcs))
	var stack []string
	var visit func(i int) []string
	visit = func(i int) []string {
		color[i] = active
		stack = append(stack, svcs[i].Name)
		for _, a := range svcs[i].After {
			j, ok := index[a]
			if !ok || j == i {
				continue
			}
			switch color[j] {
			case active:
				start := slices.Index(stack, a)
				return append(slices.Clone(stack[start:]), a)
			case unvisited:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = done
		return nil
	}
	for i := range svcs {
		if _, ok := index[svcs[i].Name]; !ok || index[svcs[i].Name] != i {
			continue // invalid or duplicate name: not part of the graph
		}
		if color[i] == unvisited {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}
