//go:build ignore

package main

import "fmt"

func main() { fmt.Errorf("this tool message is never indexed at all") }
