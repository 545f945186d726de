package verify

import (
	"os"
	"testing"
)

func TestDbg(t *testing.T) {
	c, p := example(t)
	m := build(t, c, p, nil)
	v := NewVerifier(m, false)
	r := v.Run()
	for _, s := range v.enumerate() {
		if s.spec.kind == KindPodNodeLocal && s.spec.src.Node.Name == "node009" && s.spec.proto == TCP {
			res := v.trace(s.spec)
			WriteFlowText(os.Stdout, []FlowResult{res})
		}
	}
	_ = r
}
