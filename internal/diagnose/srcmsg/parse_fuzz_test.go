package srcmsg

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/kubewin/kubewin/internal/diagnose/srcmsg/extract"
)

// FuzzParse: any index text (gzip-wrapped) either parses into an index that matches without
// panicking or is refused with an error.
func FuzzParse(f *testing.F) {
	f.Add(extract.Header + "\nc\t\tm\tf.go\tF\terror\tv1\tfailed to attach endpoint %s to compartment %d: %v\n")
	f.Add(extract.Header + "\n# source x@v1\nc\tlinux\tm\tf.go\t\twarning\tv1,v2\tunable to open the netlink socket\\tnow\n")
	f.Add(extract.Header + "\nshort\tline\n")
	f.Add("not the header\n")
	f.Fuzz(func(t *testing.T, text string) {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		ix, err := Parse(&buf)
		if err != nil {
			return
		}
		for _, e := range ix.Entries() {
			for _, h := range ix.Match(e.Format) {
				if h.Start < 0 || h.End > len(h.Text) || h.Start > h.End {
					t.Fatalf("bad hit %+v", h)
				}
			}
		}
	})
}
