package verify

import (
	"os"
	"testing"
)

func TestSmokeExample(t *testing.T) {
	c, p := example(t)
	m := build(t, c, p, nil)
	r := run(t, m)
	r.WriteText(os.Stdout)
}
