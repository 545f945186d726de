package plan

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }

// wantFieldError fails unless err is a v1alpha1.ErrorList with an entry for field whose
// message contains every fragment.
func wantFieldError(t *testing.T, err error, field string, fragments ...string) {
	t.Helper()
	var el v1alpha1.ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("error %v (%T) is not a v1alpha1.ErrorList", err, err)
	}
	var fields []string
	for _, e := range el {
		fields = append(fields, e.Field)
		if e.Field != field {
			continue
		}
		ok := true
		for _, f := range fragments {
			ok = ok && strings.Contains(e.Message, f)
		}
		if ok {
			return
		}
	}
	t.Fatalf("no error at %s containing %q; got fields %v:\n%v", field, fragments, slices.Compact(fields), err)
}
