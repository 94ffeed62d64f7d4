package fileio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/store"
)

// OwnerError is a rewritten or restored file that could not be given the owner and group it is
// to have (chown: only root may give a file away): Want is what it should belong to, Got what
// it belongs to now. A fix run records Want in Change.Before.Owner; an undo returns it inside a
// *CommittedError (the content is restored, the owner is not).
type OwnerError struct {
	Path      string
	Want, Got store.FileOwner
	// Restore: the error of an undo (the owner is to be given back), else of a rewrite.
	Restore bool
	Err     error
}

func (e *OwnerError) Error() string {
	why := e.Err
	var pe *fs.PathError
	if errors.As(why, &pe) {
		why = pe.Err // the temp file's name says nothing
	}
	if e.Restore {
		return fmt.Sprintf("its owner could not be given back (%v): before the run it belonged to %s, group %d; it now belongs to %s, group %d: only root can change that (as root: chown %d:%d %s)",
			why, owner.Describe(e.Want.UID), e.Want.GID, owner.Describe(e.Got.UID), e.Got.GID, e.Want.UID, e.Want.GID, shellQuote(e.Path))
	}
	return fmt.Sprintf("its owner could not be kept (%v): it belonged to %s, group %d; the new file belongs to %s, group %d: only root can change that (as root: chown %d:%d %s); undo gives back the content, not the owner",
		why, owner.Describe(e.Want.UID), e.Want.GID, owner.Describe(e.Got.UID), e.Got.GID, e.Want.UID, e.Want.GID, shellQuote(e.Path))
}

func (e *OwnerError) Unwrap() error { return e.Err }

// giveOwner gives f (the temp that will replace path) the owner want, when known; before chmod
// (chown clears setuid/setgid). It returns an *OwnerError when f then belongs to someone else
// (not root over another user's file: chown fails with EPERM), nil otherwise.
func giveOwner(f *os.File, path string, want *store.FileOwner, restore bool) error {
	if want == nil {
		return nil
	}
	err := f.Chown(int(want.UID), int(want.GID))
	if err == nil {
		return nil
	}
	fi, serr := f.Stat()
	if serr != nil {
		return nil
	}
	got := ownerOf(fi)
	if got == nil || *got == *want {
		return nil
	}
	return &OwnerError{Path: path, Want: *want, Got: *got, Restore: restore, Err: err}
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	for _, r := range s {
		if !(r == '/' || r == '.' || r == '_' || r == '-' || r == '+' || r == ':' || r == '@' || r == ',' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) {
			out := "'"
			for _, c := range s {
				if c == '\'' {
					out += `'\''`
				} else {
					out += string(c)
				}
			}
			return out + "'"
		}
	}
	if s == "" {
		return "''"
	}
	return s
}
