package extract

import (
	"strings"
	"testing"
)

// FuzzCFormats: the C scanner never panics, and every format it returns comes from string
// literals of the input (so it is no longer than the input) with a level.
func FuzzCFormats(f *testing.F) {
	for _, s := range []string{
		`log_message(LOG_ERR, "Netlink: Cannot open netlink socket : (%s)", strerror(errno));`,
		"int\nf(void)\n{\n\treport_config_error(CONFIG_GENERAL_ERROR, \"a %s\" \"b\" PRIu32 \"c\", x);\n}\n",
		`log_message(LOG_INFO, "unterminated`, `log_message(`, `log_message(LOG_ERR,`, `/* log_message(LOG_ERR, "x") */`,
		"log_message(LOG_ERR, \"\\\"quoted\\\" \\n\", x)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, m := range CFormats(text) {
			if len(m.format) > len(text) {
				t.Fatalf("format %q longer than the input", m.format)
			}
			if m.level == "" {
				t.Fatalf("format %q without a level", m.format)
			}
		}
	})
}

// FuzzUnescapeField: escaping then unescaping gives the input back, and escaped text has no
// separators.
func FuzzUnescapeField(f *testing.F) {
	for _, s := range []string{"", "a\tb", `\\t`, "x\ny\r", `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := escapeField(s)
		if strings.ContainsAny(e, "\t\n\r") {
			t.Fatalf("escaped %q has a separator", s)
		}
		if got := UnescapeField(e); got != s {
			t.Fatalf("round trip of %q gave %q", s, got)
		}
		_ = UnescapeField(s) // arbitrary input must not panic
	})
}
