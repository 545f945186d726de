package bootstrap

import (
	"strings"
	"testing"
)

func TestDecodeManifest(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		kinds    []string
		err      string
	}{
		{"header and two documents", "# rendered by kubewin\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: kube-system}\n---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: b}\n", []string{"ConfigMap", "DaemonSet"}, ""},
		{"empty documents skipped", "---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", []string{"ConfigMap"}, ""},
		{"no name", "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", nil, "without apiVersion, kind or metadata.name"},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", nil, "without apiVersion, kind or metadata.name"},
		{"not YAML", "apiVersion: [\n", nil, "decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := decodeManifest([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, o := range objs {
				kinds = append(kinds, o.GetKind())
			}
			if strings.Join(kinds, ",") != strings.Join(tc.kinds, ",") {
				t.Errorf("kinds %v, want %v", kinds, tc.kinds)
			}
		})
	}
}

func FuzzDecodeManifest(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: b}\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := decodeManifest(data)
		if err != nil {
			return
		}
		for _, o := range objs {
			if o.GetKind() == "" || o.GetAPIVersion() == "" || o.GetName() == "" {
				t.Fatalf("an object without kind, apiVersion or name: %v", o.Object)
			}
		}
	})
}
