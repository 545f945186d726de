//go:build linux

package a

import "fmt"

func iptables() error { return fmt.Errorf("iptables-restore failed with status %d", 1) }
