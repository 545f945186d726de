package a

import "fmt"

func helper() error { return fmt.Errorf("test helper message is never indexed") }
