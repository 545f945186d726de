package a

import "fmt"

// Win32Error prints like hcsshim's HcsError.
type Win32Error struct{ Op, Msg string }

func (e *Win32Error) Error() string {
	s := e.Op + " "
	s += fmt.Sprintf("failed in Win32: %s (0x%x)", e.Msg, 5)
	return s
}

// plainError returns literal text from Error().
type plainError struct{ name string }

func (e plainError) Error() string { return "network " + e.name + " is not ready yet" }
