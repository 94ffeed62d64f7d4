package mcpconfig

import (
	"errors"
	"fmt"
)

// Sentinel causes carried by ParseError.Err (test them with errors.Is).
var (
	// ErrSyntax: the file is not JSON-with-comments (the agent's JSON.parse fails).
	ErrSyntax = errors.New("syntax error")
	// ErrTrailingComma: a comma before "]" or "}". strip-json-comments + JSON.parse reject it.
	ErrTrailingComma = errors.New("trailing comma")
	// ErrByteOrderMark: the file starts with a UTF-8 BOM, which JSON.parse rejects.
	ErrByteOrderMark = errors.New("UTF-8 byte order mark")
	// ErrNotObject: the top-level value is not a JSON object.
	ErrNotObject = errors.New("not a JSON object")
)

// ParseError reports a file that cannot be used, at the position of the problem. Line and
// Column are 1-based; Column counts bytes. Error() is "path:line:col: reason", the form
// editors and CI annotators jump to. The caller reports it and goes on with other files.
type ParseError struct {
	Path         string
	Line, Column int
	Reason       string
	// Err is the cause: one of the Err* sentinels of this package (possibly wrapping the
	// parser's own error).
	Err error
}

// Error implements error.
func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Column, e.Reason)
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// Warning is a non-fatal finding about a file: an entry the agent ignores, a duplicate key, a
// value of the wrong type. Messages never contain secret values.
type Warning struct {
	Path         string
	Line, Column int
	Message      string
}

// String returns "path:line:col: message".
func (w Warning) String() string {
	return fmt.Sprintf("%s:%d:%d: %s", w.Path, w.Line, w.Column, w.Message)
}
