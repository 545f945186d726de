package templates

import (
	"regexp"
	"strconv"
	"strings"
)

// Version guards: templates that install Kubernetes for several releases emit a flag only for
// the releases that know it ({% if kube_version is version('v1.22.0', '<') %}
// --dynamic-config-dir=… {% endif %}, kubespray's kubelet.env.j2). A line inside such a
// branch is rendered only below that release, so a rule must not judge it at a target the
// template excludes, nor warn about a removal the template already stops short of.
//
// Conditions read: Jinja2/Ansible's version test (`x is version('1.22', '<')`, operators <,
// lt, <=, le; https://docs.ansible.com/ansible/latest/collections/ansible/builtin/version_test.html),
// the older version_compare filter with the same arguments, a plain comparison against a
// version string (`kube_version < 'v1.22'`), and Helm's semverCompare ("<1.22-0"; Sprig,
// https://masterminds.github.io/sprig/semver.html). Only conditions that name a version
// (a variable or function with "version" in its name) count.

// Below is an exclusive upper bound on the release a line is rendered for.
type Below struct {
	Major, Minor int
}

// String is "1.22".
func (b Below) String() string { return strconv.Itoa(b.Major) + "." + strconv.Itoa(b.Minor) }

var (
	reVersionTest = regexp.MustCompile(`(?i)version(?:_compare)?\s*\(\s*['"]v?(\d+)\.(\d+)(?:\.\d+)?[^'"]*['"]\s*,\s*['"](<=?|lt|le)['"]`)
	reVersionLess = regexp.MustCompile(`(?i)version\w*\s*(<=?)\s*['"]v?(\d+)\.(\d+)(?:\.\d+)?[^'"]*['"]`)
	reSemverLess  = regexp.MustCompile(`(?i)semverCompare\s+"\s*(<=?)\s*v?(\d+)\.(\d+)(?:\.\d+)?[^"]*"`)
)

// conditionBelow returns the bound a statement's condition sets, if it is a "release below"
// test.
func conditionBelow(cond string) (Below, bool) {
	bound := func(op, maj, min string) (Below, bool) {
		a, err1 := strconv.Atoi(maj)
		b, err2 := strconv.Atoi(min)
		if err1 != nil || err2 != nil {
			return Below{}, false
		}
		if op == "<=" || strings.EqualFold(op, "le") {
			b++ // <= 1.21 is below 1.22 (patch releases of 1.21 included)
		}
		return Below{a, b}, true
	}
	if m := reVersionTest.FindStringSubmatch(cond); m != nil {
		return bound(m[3], m[1], m[2])
	}
	if m := reVersionLess.FindStringSubmatch(cond); m != nil {
		return bound(m[1], m[2], m[3])
	}
	if m := reSemverLess.FindStringSubmatch(cond); m != nil {
		return bound(m[1], m[2], m[3])
	}
	return Below{}, false
}

// VersionBelow maps each 1-based line of text that only a "release below X" branch renders to
// the tightest such X. Lines in an {% else %} of such a test are not bounded (they are the
// releases at or above it), and neither are lines outside conditions.
func VersionBelow(text string) map[int]Below {
	spans := Scan(text)
	type frame struct {
		below   Below
		bounded bool
	}
	var stack []frame
	out := map[int]Below{}
	cur := func() (Below, bool) {
		var b Below
		ok := false
		for _, f := range stack {
			if f.bounded && (!ok || f.below.Major < b.Major || f.below.Major == b.Major && f.below.Minor < b.Minor) {
				b, ok = f.below, true
			}
		}
		return b, ok
	}
	line, pos := 1, 0
	mark := func(from, to int) {
		// lines from offset from up to offset to take the current bound
		b, ok := cur()
		l := line + strings.Count(text[pos:from], "\n")
		last := l + strings.Count(text[from:to], "\n")
		if ok {
			for i := l; i <= last; i++ {
				out[i] = b
			}
		}
	}
	for _, sp := range spans {
		if sp.Kind != Stmt {
			continue
		}
		mark(pos, sp.Start)
		line += strings.Count(text[pos:sp.Start], "\n")
		pos = sp.Start
		word := sp.Inner
		if k := strings.IndexAny(word, " \t("); k >= 0 {
			word = word[:k]
		}
		switch word {
		case "if":
			b, ok := conditionBelow(sp.Inner)
			stack = append(stack, frame{below: b, bounded: ok})
		case "for", "range", "with", "define", "block", "macro", "call", "filter", "raw":
			stack = append(stack, frame{})
		case "elif", "else":
			if n := len(stack); n > 0 {
				stack[n-1] = frame{} // the other branches: at or above the bound
			}
		case "end", "endif", "endfor", "endmacro", "endcall", "endfilter", "endraw", "endblock", "endwith":
			if n := len(stack); n > 0 {
				stack = stack[:n-1]
			}
		}
	}
	mark(pos, len(text))
	return out
}
