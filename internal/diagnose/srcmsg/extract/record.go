// Package extract finds the message formats that a component's source prints or returns as errors
// (Go via go/ast, keepalived's C by its log_message/report_config_error calls) and writes them as
// the compact, deterministic index that package srcmsg embeds.
package extract

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Levels a format is recorded with.
const (
	LevelError    = "error"    // klog.ErrorS/Errorf, logr Error, logrus Error*, log_message(LOG_ERR)
	LevelWarning  = "warning"  // klog.Warning*, logrus Warn*, LOG_WARNING
	LevelFatal    = "fatal"    // klog.Fatal*/Exit*, logrus Fatal*/Panic*, LOG_CRIT/ALERT/EMERG
	LevelInfoErr  = "info-err" // an info-level call that carries an error (klog.V(n).InfoS(..., "err", err))
	LevelReturned = "returned" // fmt.Errorf, errors.New/Errorf/Wrap, status.Errorf: printed by a caller
	LevelNotice   = "notice"   // keepalived LOG_NOTICE/LOG_INFO about a failure, and config errors
)

// Record is one message format at one source location.
type Record struct {
	Component string // kubelet, kubeadm, kube-proxy, client-go, containerd, hcsshim, cni, flannel, calico, keepalived
	OS        string // windows, linux, or "" when the file builds on both
	Module    string // module path (or source package name for C)
	File      string // path inside the module
	Func      string // enclosing function ("Type.Method" for methods), "" at package level
	Level     string
	Format    string // printf-style: literal text with verbs where values go
}

func (r Record) key() string {
	return strings.Join([]string{r.Component, r.OS, r.Module, r.File, r.Func, r.Level, r.Format}, "\x00")
}

// Set collects records across versions; a record seen in several versions is kept once with all
// of them.
type Set struct {
	recs     map[string]Record
	versions map[string]map[string]bool
}

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{recs: map[string]Record{}, versions: map[string]map[string]bool{}}
}

// Add records r as found in version.
func (s *Set) Add(r Record, version string) {
	k := r.key()
	if _, ok := s.recs[k]; !ok {
		s.recs[k] = r
		s.versions[k] = map[string]bool{}
	}
	s.versions[k][version] = true
}

// Len is the number of distinct records.
func (s *Set) Len() int { return len(s.recs) }

// Row is a record with the versions it occurs in, as written to the index.
type Row struct {
	Record
	Versions []string
}

// Rows returns the records sorted by their key, versions sorted semver-aware, so that the same
// sources always give the same order.
func (s *Set) Rows() []Row {
	keys := make([]string, 0, len(s.recs))
	for k := range s.recs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rows := make([]Row, 0, len(keys))
	for _, k := range keys {
		vs := make([]string, 0, len(s.versions[k]))
		for v := range s.versions[k] {
			vs = append(vs, v)
		}
		sort.Slice(vs, func(i, j int) bool { return VersionLess(vs[i], vs[j]) })
		rows = append(rows, Row{Record: s.recs[k], Versions: vs})
	}
	return rows
}

// VersionLess orders "v1.9.2" before "v1.13.0" by comparing the dotted numeric fields, falling
// back to string order for the rest.
func VersionLess(a, b string) bool {
	fa, fb := versionFields(a), versionFields(b)
	for i := 0; i < len(fa) && i < len(fb); i++ {
		if fa[i] != fb[i] {
			return fa[i] < fb[i]
		}
	}
	if len(fa) != len(fb) {
		return len(fa) < len(fb)
	}
	return a < b
}

func versionFields(v string) []int {
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	var out []int
	for _, p := range strings.Split(v, ".") {
		n := 0
		for _, c := range p {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		out = append(out, n)
	}
	return out
}

// Header is the first line of an index; package srcmsg refuses other layouts.
const Header = "# srcmsg index v1: component\tos\tmodule\tfile\tfunc\tlevel\tversions\tformat"

// escapeField keeps a field on one TSV line.
func escapeField(s string) string {
	if !strings.ContainsAny(s, "\\\t\n\r") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// UnescapeField reverses escapeField.
func UnescapeField(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// WriteTSV writes rows as gzip-compressed TSV. The gzip header carries no name and no time and the
// compression level is fixed, so equal rows give equal bytes.
func WriteTSV(w io.Writer, sources []string, rows []Row) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("gzip writer: %w", err)
	}
	bw := bufio.NewWriter(zw)
	fmt.Fprintln(bw, Header)
	for _, s := range sources {
		fmt.Fprintf(bw, "# source %s\n", escapeField(s))
	}
	for _, r := range rows {
		fields := []string{r.Component, r.OS, r.Module, r.File, r.Func, r.Level, strings.Join(r.Versions, ","), r.Format}
		for i, f := range fields {
			fields[i] = escapeField(f)
		}
		bw.WriteString(strings.Join(fields, "\t"))
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write index: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("close gzip: %w", err)
	}
	return nil
}
