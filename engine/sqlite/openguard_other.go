//go:build !unix

package sqlite

import (
	"io/fs"

	"github.com/sessionfix/sessionfix/store"
)

var guardErr error

// pinnedOpen runs open: this platform has no guard (no FIFOs, no O_NOFOLLOW).
func pinnedOpen(_ store.FileID, open func() error) (refused refusal, got store.FileID, mode fs.FileMode, err error) {
	return 0, store.FileID{}, 0, open()
}
