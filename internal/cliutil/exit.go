// Package cliutil holds the conventions every kubewin command shares: exit codes, output
// formats and atomic output directories.
package cliutil

import (
	"errors"
	"fmt"
)

// Exit codes are stable and documented in README.md.
const (
	// ExitOK: success, nothing found.
	ExitOK = 0
	// ExitFindings: the command ran and found problems (findings, failed flows, conflicts).
	ExitFindings = 1
	// ExitBadInput: bad flags, unreadable or invalid input; nothing was written.
	ExitBadInput = 2
)

// ExitError carries an exit code through cobra's error return.
type ExitError struct {
	Code int
	Err  error
	// Silent suppresses printing Err (the command already reported in detail).
	Silent bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// BadInput wraps err as exit code 2.
func BadInput(err error) error { return &ExitError{Code: ExitBadInput, Err: err} }

// BadInputf formats a bad-input error.
func BadInputf(format string, args ...any) error {
	return &ExitError{Code: ExitBadInput, Err: fmt.Errorf(format, args...)}
}

// Findings returns an exit-1 error that prints nothing more (the report is the output).
func Findings() error { return &ExitError{Code: ExitFindings, Silent: true} }

// CodeOf maps an error returned by a command to the process exit code: ExitError keeps its code,
// any other error is treated as bad input (usage errors from cobra land here too).
func CodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitBadInput
}

// ShouldPrint reports whether main should print err to stderr.
func ShouldPrint(err error) bool {
	var ee *ExitError
	if errors.As(err, &ee) {
		return !ee.Silent && ee.Err != nil
	}
	return err != nil
}
