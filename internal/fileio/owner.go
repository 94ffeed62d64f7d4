package fileio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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

// giveRecordedOwner gives f, a store root restores where nothing was (undo --force of a store
// removed since the run, its backup a copy: root's), the owner and group want the run recorded
// — but only an owner the directory it is restored into (held open as pin) belongs to: the
// manifest is not trusted input (runlog.CheckRun bounds who may have written it, not what it
// says), and root must not give a file to another user, nor make one belong to a user in a
// directory that user could not have made it in. The group is want's when it is the
// directory's or one of the owner's groups (the user database: a group its owner could give the
// file themselves), else the directory's. Otherwise f stays root's and the error (returned
// inside a *CommittedError: restored) says why and how to give it.
func giveRecordedOwner(f *os.File, path string, pin *dirPin, want store.FileOwner) error {
	dir := filepath.Dir(path)
	dfi, err := pin.stat(dir)
	if err != nil {
		return fmt.Errorf("restored as root's: its directory could not be checked (%v)", err)
	}
	d := ownerOf(dfi)
	if d == nil {
		return nil
	}
	if d.UID != want.UID {
		return fmt.Errorf("restored as root's: the run recorded its owner as %s, group %d, but its directory %s belongs to %s, and as root a restored file is given back only to the owner of its directory (if %s is right: chown %d:%d %s)",
			owner.Describe(want.UID), want.GID, dir, owner.Describe(d.UID), owner.Describe(want.UID), want.UID, want.GID, shellQuote(path))
	}
	gid := want.GID
	if gid != d.GID && !owner.InGroup(want.UID, gid) {
		gid = d.GID
	}
	if err := f.Chown(int(want.UID), int(gid)); err != nil {
		return fmt.Errorf("restored as root's: chown to %s, group %d: %w", owner.Describe(want.UID), gid, err)
	}
	return nil
}
