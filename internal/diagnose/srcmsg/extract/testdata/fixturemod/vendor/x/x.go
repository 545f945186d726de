package x

import "fmt"

func f() error { return fmt.Errorf("vendored message is never indexed at all") }
