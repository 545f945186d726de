package diagnose

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The field corpus (testdata/diagnose-field) holds error and benign lines quoted verbatim from
// public issue threads, each with its source (repository#issue) and, for errors, the cause the
// thread established and the signature whose cause fits it. It measures the catalogue on what
// nodes really print, not on examples we wrote ourselves.
const fieldDir = "../../testdata/diagnose-field"

type fieldRow struct {
	family, want, source, cause, line string
	lineNo                            int
}

func readFieldTSV(t *testing.T, name string, cols int) []fieldRow {
	t.Helper()
	f, err := os.Open(filepath.Join(fieldDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []fieldRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		if strings.HasPrefix(sc.Text(), "#") || sc.Text() == "" {
			continue
		}
		p := strings.Split(sc.Text(), "\t")
		if len(p) != cols {
			t.Fatalf("%s:%d: %d columns, want %d", name, n, len(p), cols)
		}
		r := fieldRow{lineNo: n}
		if cols == 5 {
			r.family, r.want, r.source, r.cause, r.line = p[0], p[1], p[2], p[3], p[4]
		} else {
			r.family, r.source, r.line = p[0], p[1], p[2]
		}
		if !strings.Contains(r.source, "#") {
			t.Fatalf("%s:%d: source %q is not repo#issue", name, n, r.source)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func scanLine(c *Catalogue, line string) *Report {
	return Scan(context.Background(), c, []string{"-"}, strings.NewReader(line+"\n"), Options{Workers: 1})
}

// TestFieldCorpus: recognition with the right cause on real error lines, per family, and no
// benign line from the same programs flagged as error or warning.
func TestFieldCorpus(t *testing.T) {
	c := mustCatalogue(t)
	known := map[string]bool{}
	for _, s := range c.Signatures() {
		known[s.ID] = true
	}
	errs := readFieldTSV(t, "errors.tsv", 5)
	// Per family: error lines, recognised with the right cause, answered with another cause
	// (a finding that is not the one the thread established), benign lines, benign lines flagged.
	type tally struct{ n, ok, wrong, benign, flagged int }
	fam := map[string]*tally{}
	total, ok := 0, 0
	for _, r := range errs {
		if !known[r.want] && !strings.HasPrefix(r.want, "NEW:") {
			t.Errorf("errors.tsv:%d: want %q is not a catalogue entry (a cause the catalogue lacks is written NEW:<ID>)", r.lineNo, r.want)
		}
		rep := scanLine(c, r.line)
		got := findingIDs(rep)
		if fam[r.family] == nil {
			fam[r.family] = &tally{}
		}
		fam[r.family].n++
		total++
		if _, hit := got[r.want]; hit {
			fam[r.family].ok++
			ok++
		} else if len(got) > 0 {
			fam[r.family].wrong++
		}
		if _, hit := got[r.want]; !hit && testing.Verbose() {
			t.Logf("miss errors.tsv:%d (%s) want %s got %v: %s", r.lineNo, r.source, r.want, keys(got), r.line)
		}
	}
	benign := readFieldTSV(t, "benign.tsv", 3)
	for _, r := range benign {
		if fam[r.family] == nil {
			fam[r.family] = &tally{}
		}
		fam[r.family].benign++
		rep := scanLine(c, r.line)
		flagged := false
		for _, f := range rep.Findings {
			if f.Severity == SevError || f.Severity == SevWarning {
				t.Errorf("benign.tsv:%d (%s) flagged %s: %s", r.lineNo, r.source, f.ID, r.line)
				flagged = true
			}
		}
		if flagged {
			fam[r.family].flagged++
		}
	}
	names := make([]string, 0, len(fam))
	for k := range fam {
		names = append(names, k)
	}
	sort.Strings(names)
	var sb strings.Builder
	fmt.Fprintf(&sb, "  %-13s %9s %9s %9s %9s\n", "family", "recall", "wrong", "benign", "precision")
	for _, k := range names {
		f := fam[k]
		prec := "-"
		if d := f.ok + f.wrong + f.flagged; d > 0 {
			prec = fmt.Sprintf("%.1f %%", 100*float64(f.ok)/float64(d))
		}
		fmt.Fprintf(&sb, "  %-13s %4d/%4d %9d %4d/%4d %9s\n", k, f.ok, f.n, f.wrong, f.flagged, f.benign, prec)
	}
	t.Logf("field corpus: %d/%d error lines recognised with the right cause (%.1f %%); %d benign lines\n"+
		"(wrong: error lines answered with another cause; benign: flagged/total; precision = right / (right + wrong + benign flagged))\n%s",
		ok, total, 100*float64(ok)/float64(total), len(benign), sb.String())
	if total == 0 || ok*10 < total*9 {
		t.Errorf("recognition %d/%d, want >= 90 %%", ok, total)
	}
}
