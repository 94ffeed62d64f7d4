package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/internal/owner"
)

// A rewrite works in the directory of its store: the backup link is made from the store's name,
// the temp is created and named there, the kept link to the original, the rename over the store,
// the checks between them, a rollback and the late bytes carried over. By path, each of those
// looks the directory up again, so the directory's owner could swap it (rename it away and put a
// symbolic link to another directory in its place) between two of them and have a run — root's,
// over a user's home — create, link or rename files in a directory the user cannot write (issue
// 30: a link is followed only to what its owner owns). A dirPin holds the store's directory open
// (an O_PATH descriptor, checked to hold the very file the rewrite opened) and every step names
// files relative to that descriptor with the *at system calls (fstatat, openat, linkat,
// renameat, unlinkat), so each lands in the directory the store was read from, wherever that
// directory is renamed meanwhile. They need no /proc: only an anonymous temp's link and the
// inotify watch of the store name the file through /proc/self/fd (without it the temp is a named
// one and the watch answers "opened", the safe side).

// dirPin is a store's directory held open. A nil *dirPin pins nothing (systems other than
// Linux): its methods work on paths as they are.
type dirPin struct {
	dir string   // the directory as named (what messages say)
	f   *os.File // the descriptor (O_PATH)
	fd  int      // f's descriptor number
	// at is "/proc/self/fd/<n>", the directory through the descriptor, where /proc leads there;
	// "" otherwise.
	at string
}

// pinDir holds open the directory of path. When store is not nil, the entry of path's name in
// the directory opened must be that file (same device and inode, no link followed), or the
// directory was swapped since store was opened: an error wrapping errDirMoved. Where
// directories cannot be held open so (systems other than Linux), it returns nil and no error
// (paths are used as they are).
func pinDir(path string, store os.FileInfo) (*dirPin, error) {
	dir := filepath.Dir(path)
	f, at, err := openDirPath(dir)
	if err != nil || f == nil {
		return nil, err
	}
	d := newDirPin(dir, f, at)
	if store != nil {
		if fi, err := d.lstat(path); err != nil || !sameFile(fi, store) {
			d.close()
			return nil, errDirMoved
		}
	}
	return d, nil
}

// newDirPin is the dirPin of dir held open as f (at: see dirPin.at).
func newDirPin(dir string, f *os.File, at string) *dirPin {
	return &dirPin{dir: dir, f: f, fd: int(f.Fd()), at: at}
}

// pinGoneStoreDir holds open the directory of path, a store that is not there (an undo
// restoring a store removed since the run: no file to check the directory against). As root the
// links on the way to the directory are resolved first (owner.Resolve: each must pass
// owner.LinkRefusal), the directory they lead to is held open, and it must still be what the
// path resolves to once open: else a *NotTheFileError (a link refused, or the directory swapped
// meanwhile). By path alone, the store's owner swapping the directory for a link to one they may
// not write, after undo found the store gone, had root create the store there. Off root, or
// where directories cannot be held open (nil: see pinDir), it is pinDir(path, nil).
func pinGoneStoreDir(path string) (*dirPin, error) {
	if !owner.AsRoot() {
		return pinDir(path, nil)
	}
	dir := filepath.Dir(path)
	real, err := owner.Resolve(dir)
	var le *owner.LinkError
	if errors.As(err, &le) {
		return nil, &NotTheFileError{Path: path, Reason: le.Error()}
	}
	if err != nil {
		return nil, err
	}
	f, at, err := openDirPath(real)
	if err != nil {
		if pe := (*os.PathError)(nil); errors.As(err, &pe) {
			pe.Path = dir
		}
		return nil, err
	}
	if f == nil {
		return pinDir(path, nil)
	}
	fi, err := f.Stat()
	again, rerr := owner.Resolve(dir)
	rfi, lerr := os.Lstat(real)
	if err != nil || rerr != nil || again != real || lerr != nil || !os.SameFile(rfi, fi) {
		f.Close()
		return nil, &NotTheFileError{Path: path, Reason: "its directory changed while it was opened (swapped for a link?)"}
	}
	return newDirPin(dir, f, at), nil
}

// errDirMoved: the directory found at a store's directory's path no longer holds the file
// opened there.
var errDirMoved = errors.New("its directory was replaced by another process")

// procPath is p named through /proc/self/fd/<n> of the pinned directory when p is the directory
// or one of its entries and /proc leads there; "" when p is such a name but /proc does not
// (the caller must not look p up by path: it may lead elsewhere); p itself otherwise (a path
// outside the directory, or no pin).
func (d *dirPin) procPath(p string) string {
	if d == nil {
		return p
	}
	in := p == d.dir || filepath.Dir(p) == d.dir
	switch {
	case !in:
		return p
	case d.at == "":
		return ""
	case p == d.dir:
		return d.at
	}
	return d.at + "/" + filepath.Base(p)
}

// err is err with the pinned directory's descriptor path in an *os.PathError or *os.LinkError
// given back as the directory's name (messages name files as the user knows them).
func (d *dirPin) err(err error) error {
	if d == nil || err == nil || d.at == "" {
		return err
	}
	unpin := func(p string) string {
		if rest, ok := strings.CutPrefix(p, d.at); ok && (rest == "" || rest[0] == '/') {
			return d.dir + rest
		}
		return p
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		pe.Path = unpin(pe.Path)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		le.Old, le.New = unpin(le.Old), unpin(le.New)
	}
	return err
}

// lstat is os.Lstat of p, through the pinned directory when p is it or one of its entries
// (fstatat, no link followed). The error names p.
func (d *dirPin) lstat(p string) (os.FileInfo, error) {
	if d == nil {
		return os.Lstat(p)
	}
	return d.lstatAt(p)
}

// link makes new a hard link to old (no link at old followed), each through the pinned
// directory when it is one of its entries (linkat); the error is an *os.LinkError naming both.
func (d *dirPin) link(old, new string) error { return linkPinned(d, old, d, new) }

// linkPinned is link with old looked up through a and new through b (either nil: by path).
func linkPinned(a *dirPin, old string, b *dirPin, new string) error {
	if a == nil && b == nil {
		return os.Link(old, new)
	}
	return linkAt(a, old, b, new)
}

// rename renames old to new, each through the pinned directory when it is one of its entries
// (renameat); the error is an *os.LinkError naming both.
func (d *dirPin) rename(old, new string) error {
	if d == nil {
		return os.Rename(old, new)
	}
	return d.renameAt(old, new)
}

// remove removes the file (not a directory) p, through the pinned directory when it is one of
// its entries (unlinkat); the error names p.
func (d *dirPin) remove(p string) error {
	if d == nil {
		return os.Remove(p)
	}
	return d.unlinkAt(p, false)
}

// openFile is os.OpenFile of p (O_CLOEXEC added), through the pinned directory when p is it or
// one of its entries (openat); the *os.File and its errors are named p.
func (d *dirPin) openFile(p string, flag int, perm os.FileMode) (*os.File, error) {
	if d == nil {
		return os.OpenFile(p, flag, perm)
	}
	return d.openAt(p, flag, perm)
}

// create creates the new file name (in the pinned directory: O_RDWR|O_CREATE|O_EXCL, mode
// 0600); the *os.File is named name, as are its errors.
func (d *dirPin) create(name string) (*os.File, error) {
	return d.openFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}

// hold is another hold of the pinned directory: a descriptor of its own, so that closing
// either leaves the other open (nil for nil).
func (d *dirPin) hold() (*dirPin, error) {
	if d == nil {
		return nil, nil
	}
	return d.holdAt()
}

// sameDir reports whether d and e hold the same directory (both nil: by path, the same).
func (d *dirPin) sameDir(e *dirPin) bool {
	if d == nil || e == nil {
		return d == e
	}
	a, err1 := d.f.Stat()
	b, err2 := e.f.Stat()
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// close releases the directory (nil-safe).
func (d *dirPin) close() {
	if d != nil {
		d.f.Close()
	}
}

// errNotADirectory: an entry on the way to a directory is a symbolic link or not a directory.
var errNotADirectory = errors.New("a symbolic link or not a directory (a move never goes through a link)")

// sub opens p, the directory itself or an entry of the pinned directory, as a directory held
// open, without following a link at its name (O_PATH|O_DIRECTORY|O_NOFOLLOW), with its fstat:
// an error matching fs.ErrNotExist when nothing is there, one wrapping errNotADirectory when it
// is a symbolic link or not a directory. With no pin (nil: by path) the *dirPin is nil and the
// stat p's lstat.
func (d *dirPin) sub(p string) (*dirPin, os.FileInfo, error) {
	if d == nil {
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, nil, err
		}
		if !fi.IsDir() {
			return nil, nil, &os.PathError{Op: "open", Path: p, Err: errNotADirectory}
		}
		return nil, fi, nil
	}
	return d.subAt(p)
}

// mkdir makes the directory p (through the pinned directory when p is one of its entries:
// mkdirat); the error names p.
func (d *dirPin) mkdir(p string, perm os.FileMode) error {
	if d == nil {
		return os.Mkdir(p, perm)
	}
	return d.mkdirAt(p, perm)
}

// mkdirAs makes the directory p as mkdir does, owned from its creation by uid and gid (as
// root: see mkdirAsParent); where a thread's file-system ids cannot be so set (systems other
// than Linux) it is mkdir, and the directory the effective user's.
func (d *dirPin) mkdirAs(p string, perm os.FileMode, uid, gid int) error {
	return d.mkdirAsAt(p, perm, uid, gid)
}

// stat is the fstat of the pinned directory (dir: its path, lstat'ed when there is no pin).
func (d *dirPin) stat(dir string) (os.FileInfo, error) {
	if d == nil {
		return os.Lstat(dir)
	}
	return d.f.Stat()
}
