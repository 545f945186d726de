package diagnose

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Visibility and recognition on field lines, per family: every error line must be surfaced (a
// finding of error or warning severity, or an unmatched group), recognised when an entry names
// it; benign lines from the same programs must not be flagged (a finding) nor surfaced as errors.
// The tuning part (errors.tsv, benign.tsv) is what the catalogue was written from; the sealed
// part (sealed/) was collected afterwards by someone who did not see the catalogue, with its
// expectations written before kubewin ran on it (testdata/diagnose-field/sealed/README.md).

type visTally struct {
	lines, visible, recognised           int
	benign, benignFlagged, benignSurface int
}

type visLine struct{ family, line string }

func measureVisibility(t *testing.T, c *Catalogue, errs, benign []visLine) (map[string]*visTally, []string) {
	scan := func(line string) *Report { return scanLineSources(t, c, line) }
	t.Helper()
	fam := map[string]*visTally{}
	get := func(f string) *visTally {
		if fam[f] == nil {
			fam[f] = &visTally{}
		}
		return fam[f]
	}
	var invisible []string
	for _, r := range errs {
		tl := get(r.family)
		tl.lines++
		recognised, visible := shownAndRecognised(scan(r.line))
		if recognised {
			tl.recognised++
		}
		if visible {
			tl.visible++
		} else if l := ParseLine([]byte(r.line)); l.isSurfaced() {
			// An error or warning by its own level or wording that nothing shows: a defect.
			invisible = append(invisible, r.family+": "+r.line)
		}
	}
	for _, r := range benign {
		tl := get(r.family)
		tl.benign++
		rep := scan(r.line)
		for _, f := range rep.Findings {
			if f.Severity == SevError || f.Severity == SevWarning {
				tl.benignFlagged++
				if testing.Verbose() {
					t.Logf("benign flagged %s: %s", f.ID, r.line)
				}
				break
			}
		}
		if len(rep.Unmatched) > 0 {
			tl.benignSurface++
			if testing.Verbose() {
				t.Logf("benign surfaced as error: %s", r.line)
			}
		}
	}
	return fam, invisible
}

func visTable(fam map[string]*visTally) (string, visTally) {
	names := make([]string, 0, len(fam))
	for k := range fam {
		names = append(names, k)
	}
	sort.Strings(names)
	var sb strings.Builder
	var tot visTally
	pct := percent
	fmt.Fprintf(&sb, "  %-12s %6s %9s %11s %8s %9s %16s\n", "family", "lines", "visible", "recognised", "benign", "flagged", "surfaced-as-error")
	for _, k := range names {
		f := fam[k]
		fmt.Fprintf(&sb, "  %-12s %6d %9s %11s %8d %9d %16d\n", k, f.lines, pct(f.visible, f.lines), pct(f.recognised, f.lines), f.benign, f.benignFlagged, f.benignSurface)
		tot.lines += f.lines
		tot.visible += f.visible
		tot.recognised += f.recognised
		tot.benign += f.benign
		tot.benignFlagged += f.benignFlagged
		tot.benignSurface += f.benignSurface
	}
	fmt.Fprintf(&sb, "  %-12s %6d %9s %11s %8d %9d %16d\n", "total", tot.lines, pct(tot.visible, tot.lines), pct(tot.recognised, tot.lines), tot.benign, tot.benignFlagged, tot.benignSurface)
	return sb.String(), tot
}

func TestVisibilityTuningPart(t *testing.T) {
	c, err := DefaultCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	var errs, benign []visLine
	for _, r := range readFieldTSV(t, "errors.tsv", 5) {
		errs = append(errs, visLine{r.family, r.line})
	}
	for _, r := range readFieldTSV(t, "benign.tsv", 3) {
		benign = append(benign, visLine{r.family, r.line})
	}
	fam, invisible := measureVisibility(t, c, errs, benign)
	table, tot := visTable(fam)
	t.Logf("tuning part (the catalogue was written from it):\n%s", table)
	for _, l := range invisible {
		t.Errorf("error-level line invisible: %s", l)
	}
	if tot.benignFlagged > 0 {
		t.Errorf("%d benign lines flagged", tot.benignFlagged)
	}
}

// sealedRows reads sealed/errors.tsv (family os severity source what_failed innermost cause line)
// or sealed/benign.tsv (family os source line).
func sealedRows(t *testing.T, part, name string, cols int) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fieldDir, part, name))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for i, ln := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if i == 0 || ln == "" || strings.HasPrefix(ln, "#") {
			continue
		}
		p := strings.Split(ln, "\t")
		if len(p) != cols {
			t.Fatalf("%s/%s:%d: %d columns, want %d", part, name, i+1, len(p), cols)
		}
		rows = append(rows, p)
	}
	return rows
}

// shownAndRecognised says how a report answers one error line: recognised when an entry explains
// it (known noise included: the line is explained as harmless) or the source location that printed
// it or its cause is known; visible when recognised or shown as an unmatched group.
func shownAndRecognised(rep *Report) (recognised, visible bool) {
	recognised = len(rep.Findings) > 0
	for _, u := range append(rep.Unmatched, rep.Warnings...) {
		recognised = recognised || u.Source != nil || u.CauseSource != nil
	}
	return recognised, recognised || len(rep.Unmatched) > 0 || len(rep.Warnings) > 0
}

// percent renders a/b as a percentage, "-" for an empty denominator.
func percent(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f %%", 100*float64(a)/float64(b))
}
