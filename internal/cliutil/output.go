package cliutil

import (
	"fmt"
	"strings"
)

// ValidateFormat checks an -o value against the formats a command supports.
func ValidateFormat(got string, allowed ...string) error {
	for _, a := range allowed {
		if got == a {
			return nil
		}
	}
	return BadInputf("unknown output format %q: expected one of %s", got, strings.Join(allowed, ", "))
}

// Plural returns "1 node" / "2 nodes".
func Plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
