package plan

import (
	"errors"
	"fmt"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// errorList is the planner's way of building a v1alpha1.ErrorList: every error New and
// LayoutGatewayGroup return is a v1alpha1.ErrorList whose Field is a spec path
// ("spec.gatewayGroups[0].vridRange") or, for LayoutGatewayGroup, a path relative to the group
// ("vridRange"), so that v1alpha1.Source.Annotate can place planner errors in the file.
type errorList v1alpha1.ErrorList

func (l *errorList) add(field, format string, args ...any) {
	*l = append(*l, v1alpha1.NewFieldError(field, fmt.Sprintf(format, args...), ""))
}

// addPrefixed appends the errors of a nested computation, rooting relative field paths at prefix.
func (l *errorList) addPrefixed(prefix string, err error) {
	if err == nil {
		return
	}
	var nested v1alpha1.ErrorList
	if !errors.As(err, &nested) {
		l.add(prefix, "%v", err)
		return
	}
	for _, e := range nested {
		c := *e
		if c.Field == "" {
			c.Field = prefix
		} else {
			c.Field = prefix + "." + c.Field
		}
		*l = append(*l, &c)
	}
}

// err returns nil for an empty list, the list as a v1alpha1.ErrorList otherwise.
func (l errorList) err() error {
	return v1alpha1.ErrorList(l).Err()
}
