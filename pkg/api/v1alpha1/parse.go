package v1alpha1

import (
	"fmt"
	"os"
	"strings"
)

// ExampleFile is the file name errors show for the embedded example.
const ExampleFile = "<example>"

// Parse decodes one YAML or JSON document strictly (unknown fields, wrong types, duplicate keys
// are errors), applies SetDefaults and runs Validate. Every problem is reported at once: the
// error is an ErrorList whose entries carry file, line, column and field path, sorted by line.
//
// On error the Cluster is nil; the Source is always returned so that callers can still place
// their own findings. On success the Cluster is defaulted and valid.
func Parse(file string, data []byte) (*Cluster, *Source, error) {
	c, src, errs, bad := decodeDocument(file, data)
	if c == nil {
		return nil, src, src.Annotate(errs)
	}
	SetDefaults(c)
	for _, e := range Validate(c) {
		if !underAny(e.Field, bad) {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return nil, src, src.Annotate(errs)
	}
	return c, src, nil
}

// underAny reports whether field is one of paths or below one of them: a value that failed to
// decode was left empty, and what Validate says about that emptiness repeats the decode error.
func underAny(field string, paths []string) bool {
	for _, p := range paths {
		if field == p || strings.HasPrefix(field, p+".") || strings.HasPrefix(field, p+"[") {
			return true
		}
	}
	return false
}

// Decode decodes one document as strictly as Parse (with positions) but neither defaults nor
// validates it: it is for partial descriptions that are merged with discovered values before
// validation (kubewin plan --from-cluster -f FILE).
func Decode(file string, data []byte) (*Cluster, *Source, error) {
	c, src, errs, _ := decodeDocument(file, data)
	if len(errs) > 0 {
		return nil, src, src.Annotate(errs)
	}
	return c, src, nil
}

// Load reads and parses the cluster description at path (see Parse). A file that cannot be read
// is a plain error, not an ErrorList.
func Load(path string) (*Cluster, *Source, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read cluster spec: %w", err)
	}
	return Parse(path, data)
}

// ParseExample parses the embedded example; errors name the file "<example>".
func ParseExample() (*Cluster, *Source, error) {
	return Parse(ExampleFile, exampleYAML)
}
