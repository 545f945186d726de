package v1alpha1

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// FieldError is one problem with a cluster description. Field is a path in the document's JSON
// names ("spec.nodes[3].nics[0].prefix"); File, Line and Column are filled by Parse (or by
// Source.Annotate for errors found later, e.g. by the planner, which only knows paths).
type FieldError struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Field is the path of the offending value; empty for problems of the whole document
	// (e.g. YAML syntax errors).
	Field string `json:"field,omitempty"`
	// Message says what was found, e.g. "33 is out of range".
	Message string `json:"message"`
	// Expected says what would have been accepted, e.g. "0-32".
	Expected string `json:"expected,omitempty"`
}

// NewFieldError returns an error for field without a position; expected may be empty.
func NewFieldError(field, message, expected string) *FieldError {
	return &FieldError{Field: field, Message: message, Expected: expected}
}

// Error renders "file:line:col: field: message (expected ...)", leaving out the parts that are
// unknown.
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	if e.Line > 0 {
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteByte(':')
		if e.Column > 0 {
			b.WriteString(strconv.Itoa(e.Column))
			b.WriteByte(':')
		}
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	if e.Expected != "" {
		b.WriteString(" (expected ")
		b.WriteString(e.Expected)
		b.WriteByte(')')
	}
	return b.String()
}

// ErrorList is every problem found in one document. It implements error with one line per
// problem; a nil or empty list means no problems (use Err to get a plain nil error).
type ErrorList []*FieldError

// Error renders one line per problem, in the list's order.
func (l ErrorList) Error() string {
	lines := make([]string, 0, len(l))
	for _, e := range l {
		lines = append(lines, e.Error())
	}
	return strings.Join(lines, "\n")
}

// Err returns nil for an empty list and the list otherwise, so that callers never return a
// non-nil error interface holding an empty list.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Add appends a problem with field, message and expected value.
func (l *ErrorList) Add(field, message, expected string) {
	*l = append(*l, NewFieldError(field, message, expected))
}

// Sort orders the list by file, line, field, column, message and expected value, so that the
// same problems always print in the same order.
func (l ErrorList) Sort() {
	slices.SortStableFunc(l, func(a, b *FieldError) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Field, b.Field),
			cmp.Compare(a.Column, b.Column),
			cmp.Compare(a.Message, b.Message),
			cmp.Compare(a.Expected, b.Expected),
		)
	})
}

// addf is the validation helpers' shorthand: the message is formatted, expected is not.
func (l *ErrorList) addf(field fmt.Stringer, expected, format string, args ...any) {
	*l = append(*l, NewFieldError(field.String(), fmt.Sprintf(format, args...), expected))
}
