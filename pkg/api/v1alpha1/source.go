package v1alpha1

import (
	"strconv"

	"github.com/kubewin/kubewin/internal/fieldpath"
)

// Position is a 1-based line and column in a source document.
type Position struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// Source remembers where every field of a parsed document came from, so that problems found
// after parsing (by Validate or the planner, which only know field paths) can point at the line
// the user has to change. A nil *Source is valid and knows no positions.
type Source struct {
	// File is the name shown in errors ("cluster.yaml", "<example>").
	File string
	pos  map[string]Position
}

// newSource sizes the position map by a guess of the fields in the document (one per ~16 bytes
// of YAML in the specs measured), which saves most rehashing on large specs.
func newSource(file string, fields int) *Source {
	return &Source{File: file, pos: make(map[string]Position, fields)}
}

// Locate returns the position of path ("spec.nodes[3].nics[0].prefix"). A path that is not in
// the document (a field left out, or filled by SetDefaults) falls back to its nearest parent
// that is; (0, 0) means no position is known.
func (s *Source) Locate(path string) (line, col int) {
	if s == nil {
		return 0, 0
	}
	for p := path; ; p = fieldpath.Parent(p) {
		if pos, ok := s.pos[p]; ok {
			return pos.Line, pos.Column
		}
		if p == "" {
			return 0, 0
		}
	}
}

// Annotate returns a sorted copy of errs in which every error without a line (and without a
// file, or with this source's file) gets this source's file and the position of its field (see
// Locate). The errors in errs are not
// modified, so a list can be annotated against several sources.
func (s *Source) Annotate(errs ErrorList) ErrorList {
	out := make(ErrorList, 0, len(errs))
	for _, e := range errs {
		if e == nil {
			continue
		}
		c := *e
		if s != nil && c.Line == 0 && (c.File == "" || c.File == s.File) {
			if c.File == "" {
				c.File = s.File
			}
			c.Line, c.Column = s.Locate(c.Field)
		}
		out = append(out, &c)
	}
	out.Sort()
	return out
}

func (s *Source) set(path fieldPath, line, col int) {
	if s != nil {
		s.pos[string(path)] = Position{Line: line, Column: col}
	}
}

// fieldPath is a field path under construction, in the JSON names users write.
type fieldPath string

// Child appends a field name.
func (p fieldPath) Child(name string) fieldPath {
	if p == "" {
		return fieldPath(name)
	}
	return p + "." + fieldPath(name)
}

// Index appends a list index.
func (p fieldPath) Index(i int) fieldPath { return p + "[" + fieldPath(strconv.Itoa(i)) + "]" }

// Key appends a map key.
func (p fieldPath) Key(k string) fieldPath { return p + "[" + fieldPath(k) + "]" }

func (p fieldPath) String() string { return string(p) }
