//go:build !unix

package sqlite

import (
	"io/fs"

	"github.com/sessionfix/sessionfix/store"
)

var guardErr error

// pinnedOpen runs open: this platform has no guard (no FIFOs, no O_NOFOLLOW).
func pinnedOpen(_ store.FileID, open func() error) (err error, refused refusal, got store.FileID, mode fs.FileMode) {
	return open(), 0, store.FileID{}, 0
}
