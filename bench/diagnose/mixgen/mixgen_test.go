package mixgen

import (
	"bytes"
	"testing"
)

func TestWriteDeterministic(t *testing.T) {
	var a, b, c bytes.Buffer
	if err := Write(&a, 1<<20, 7, 256<<10); err != nil {
		t.Fatal(err)
	}
	Write(&b, 1<<20, 7, 256<<10)
	Write(&c, 1<<20, 8, 256<<10)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("same seed, different output")
	}
	if bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Fatal("different seeds, same output")
	}
	if a.Len() < 1<<20 || a.Bytes()[a.Len()-1] != '\n' {
		t.Fatalf("size %d or missing final newline", a.Len())
	}
	for _, want := range []string{"\nI09", "\nW09", "\nE09", `level=error`, `\xce\u07b7`, "hcnCreateLoadBalancer"} {
		if !bytes.Contains(a.Bytes(), []byte(want)) {
			t.Errorf("mix lacks %q", want)
		}
	}
	long := 0
	for _, l := range bytes.Split(a.Bytes(), []byte("\n")) {
		if len(l) >= 2<<20 {
			long++
		}
	}
	// The first long line comes after 256 KiB and alone takes the output past 1 MiB.
	if long != 1 {
		t.Errorf("%d lines of 2 MiB, want 1", long)
	}
}
