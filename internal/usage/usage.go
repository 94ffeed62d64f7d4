// Package usage is the error of a bad flag or value found below the command layer
// (pipeline, audit): the CLI prints it and exits 2. A leaf (internal/layering
// TestLeavesImportNothingOfTheModule).
package usage

import "fmt"

// Error is a bad flag or value; Err says which and why.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf is an *Error with a formatted message (%w wraps as fmt.Errorf does).
func Errorf(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...)}
}
