//go:build unix

package fileio

import (
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/sessionfix/sessionfix/internal/owner"
)

// giveMadeDirs gives each directory of made (made by path, outermost first, where no directory
// is held open: giveParentsOwner without a pin; as root they are root's, mode 0700) the owner
// and group of the directory it was made in, when running as root: a root run moving a user's
// store (fix --apply --move-legacy over users' homes) left the directories on its new path
// root's, and the user's agent could not reach the store there. The directory is changed
// through its parent held open, without following a link at its name (fchownat,
// AT_SYMLINK_NOFOLLOW), and gets that parent's owner: a parent swapped for a link leads only to
// a directory whose own owner gets it. Off root nothing is done (the directories are the user's
// already).
func giveMadeDirs(made []string) error {
	if !owner.AsRoot() {
		return nil
	}
	for _, d := range made {
		parent := filepath.Dir(d)
		pfd, err := unix.Open(parent, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return &os.PathError{Op: "open", Path: parent, Err: err}
		}
		var st unix.Stat_t
		err = unix.Fstat(pfd, &st)
		if err == nil {
			err = unix.Fchownat(pfd, filepath.Base(d), int(st.Uid), int(st.Gid), unix.AT_SYMLINK_NOFOLLOW)
		}
		unix.Close(pfd)
		if err != nil {
			return &os.PathError{Op: "chown", Path: d, Err: err}
		}
	}
	return nil
}

// giveParentsOwner gives the directory sub (at p, just made in parent, both held open; nil:
// by path, giveMadeDirs) the owner and group of parent, as root (see giveMadeDirs); off root
// nothing is done.
func giveParentsOwner(sub *dirPin, p string, parent *dirPin) error {
	if !owner.AsRoot() {
		return nil
	}
	if sub == nil {
		return giveMadeDirs([]string{p})
	}
	pfi, err := parent.stat(filepath.Dir(p))
	if err != nil {
		return err
	}
	st, ok := pfi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if err := sub.chownSelf(int(st.Uid), int(st.Gid)); err != nil {
		return &os.PathError{Op: "chown", Path: p, Err: err}
	}
	return nil
}

// fileIDs returns the owner and group of fi (ok false where its stat does not say).
func fileIDs(fi os.FileInfo) (uid, gid uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return st.Uid, st.Gid, true
}
