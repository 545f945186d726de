package a

import "fmt"

func network(n string) error { return fmt.Errorf("hcn network %s was not found on this host", n) }
