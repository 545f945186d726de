package v1alpha1

// Validate checks a cluster description and returns every problem found, sorted, with field
// paths but no positions (Parse adds those; Source.Annotate does for other callers). It accepts
// a defaulted or an undefaulted Cluster: optional fields left empty are not errors.
func Validate(c *Cluster) ErrorList {
	v := &validator{c: c}
	v.meta()
	v.errs.Sort()
	return v.errs
}

// validator carries the cluster and what earlier rules learned about it (parsed addresses, node
// indices) to the rules that relate fields to each other.
type validator struct {
	c    *Cluster
	errs ErrorList
}

func (v *validator) meta() {
	if v.c.APIVersion != GroupVersion {
		v.errs.addf(fieldPath("apiVersion"), GroupVersion, "found %q", v.c.APIVersion)
	}
	if v.c.Kind != KindCluster {
		v.errs.addf(fieldPath("kind"), KindCluster, "found %q", v.c.Kind)
	}
}
