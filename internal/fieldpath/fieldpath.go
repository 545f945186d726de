// Package fieldpath handles the field paths kubewin's parsers report errors and positions by:
// JSON names joined with dots, list indexes in brackets ("spec.nodes[2].nics[0].ip").
package fieldpath

import "strings"

// Parent strips the last element: "a.b[3]" -> "a.b" -> "a" -> "".
func Parent(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}
