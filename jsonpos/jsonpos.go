// Package jsonpos says where in a document an encoding/json error points. A leaf (internal/layering
// TestLeavesImportNothingOfTheModule), so every layer may use it: provider (check --provider's
// profile files) and the SQLite engine (--profile) both name FILE:LINE:COL of a bad byte with it.
package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// At returns ":LINE:COL" (1-based; COL counts bytes) of the byte of b that encoding/json's
// error err points at: a *json.SyntaxError or *json.UnmarshalTypeError (their Offset is just
// after that byte), or io.ErrUnexpectedEOF — what a json.Decoder returns, without an offset,
// for a document cut short — which points at b's last byte. Any other error (an unknown
// member, which has no offset) gives "".
func At(b []byte, err error) string {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		off = int64(len(b))
	default:
		return ""
	}
	off = min(max(off-1, 0), int64(len(b)))
	line := bytes.Count(b[:off], []byte("\n")) + 1
	col := off - int64(bytes.LastIndexByte(b[:off], '\n'))
	return fmt.Sprintf(":%d:%d", line, col)
}
