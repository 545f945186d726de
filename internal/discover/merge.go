package discover

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// Merge overlays the user's spec (-f) on a discovered one: every value the user set wins, every
// value the user left unset comes from discovery. Nodes are matched by name: a node in both is
// merged field by field (a user's NIC list replaces the discovered one as a whole, because NICs
// have no stable identity to match on), discovered nodes the user did not mention are kept, and
// user nodes that are not in the cluster yet (the nodes to join) are appended in the user's
// order. Labels are merged key by key. Neither input is modified; either may be nil.
//
// "Set" means non-zero: a plain bool the user sets to false (windows.hyperV, enableDSR) cannot
// override a true, but discovery never sets those.
func Merge(discovered, user *v1alpha1.Cluster) *v1alpha1.Cluster {
	out := deepCopy(discovered)
	if out == nil {
		out = &v1alpha1.Cluster{}
	}
	if user == nil {
		return out
	}
	u := deepCopy(user)
	dNodes, uNodes := out.Spec.Nodes, u.Spec.Nodes
	out.Spec.Nodes, u.Spec.Nodes = nil, nil
	overlay(reflect.ValueOf(out).Elem(), reflect.ValueOf(u).Elem())

	merged := make([]v1alpha1.Node, 0, len(dNodes)+len(uNodes))
	byName := make(map[string]int, len(uNodes))
	for i, n := range uNodes {
		byName[n.Name] = i
	}
	used := make([]bool, len(uNodes))
	for _, d := range dNodes {
		if i, ok := byName[d.Name]; ok {
			used[i] = true
			un := uNodes[i]
			overlay(reflect.ValueOf(&d).Elem(), reflect.ValueOf(&un).Elem())
			if len(un.NICs) > 0 && un.ClusterNIC == "" && d.ClusterNIC != "" && !hasNIC(un.NICs, d.ClusterNIC) {
				// The discovered cluster NIC name does not name one of the user's NICs.
				d.ClusterNIC = ""
			}
		}
		merged = append(merged, d)
	}
	for i, n := range uNodes {
		if !used[i] {
			merged = append(merged, n)
		}
	}
	if dNodes != nil || uNodes != nil {
		out.Spec.Nodes = merged
	}
	return out
}

func hasNIC(nics []v1alpha1.NIC, name string) bool {
	for _, n := range nics {
		if n.Name == name {
			return true
		}
	}
	return false
}

// overlay copies every non-zero field of src over dst, recursing into structs and non-nil
// struct pointers; slices replace as a whole, maps merge key by key.
func overlay(dst, src reflect.Value) {
	for i := 0; i < src.NumField(); i++ {
		sf, df := src.Field(i), dst.Field(i)
		switch sf.Kind() {
		case reflect.Struct:
			overlay(df, sf)
		case reflect.Pointer:
			if sf.IsNil() {
				continue
			}
			if sf.Elem().Kind() == reflect.Struct && !df.IsNil() {
				overlay(df.Elem(), sf.Elem())
				continue
			}
			df.Set(sf)
		case reflect.Map:
			if sf.Len() == 0 {
				continue
			}
			if df.IsNil() {
				df.Set(reflect.MakeMapWithSize(sf.Type(), sf.Len()))
			}
			iter := sf.MapRange()
			for iter.Next() {
				df.SetMapIndex(iter.Key(), iter.Value())
			}
		case reflect.Slice:
			if sf.Len() > 0 {
				df.Set(sf)
			}
		default:
			if !sf.IsZero() {
				df.Set(sf)
			}
		}
	}
}

// deepCopy copies a Cluster through JSON (the types are plain data with JSON tags).
func deepCopy(c *v1alpha1.Cluster) *v1alpha1.Cluster {
	if c == nil {
		return nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("discover: copy cluster: %v", err))
	}
	var out v1alpha1.Cluster
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("discover: copy cluster: %v", err))
	}
	return &out
}
