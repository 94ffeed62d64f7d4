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
// files through it ("/proc/self/fd/<n>/<name>"), so each lands in the directory the store was
// read from, wherever that directory is renamed meanwhile.

// dirPin is a store's directory held open. A nil *dirPin pins nothing (systems without
// /proc/self/fd): its methods give paths and errors back unchanged.
type dirPin struct {
	dir string   // the directory as named (what messages say)
	f   *os.File // the descriptor
	at  string   // "/proc/self/fd/<n>": the directory through the descriptor
}

// pinDir holds open the directory of path. When store is not nil, the entry of path's name in
// the directory opened must be that file (os.SameFile, no link followed), or the directory was
// swapped since store was opened: an error wrapping errDirMoved. Where directories cannot be
// held and named so, it returns nil and no error (paths are used as they are).
func pinDir(path string, store os.FileInfo) (*dirPin, error) {
	dir := filepath.Dir(path)
	f, at, err := openDirPath(dir)
	if err != nil || f == nil {
		return nil, err
	}
	d := &dirPin{dir: dir, f: f, at: at}
	if store != nil {
		if fi, err := os.Lstat(d.path(path)); err != nil || !os.SameFile(fi, store) {
			d.close()
			return nil, errDirMoved
		}
	}
	return d, nil
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
	return &dirPin{dir: dir, f: f, at: at}, nil
}

// errDirMoved: the directory found at a store's directory's path no longer holds the file
// opened there.
var errDirMoved = errors.New("its directory was replaced by another process")

// path is p named through the pinned directory when p is the directory or one of its entries,
// else p.
func (d *dirPin) path(p string) string {
	if d == nil {
		return p
	}
	if p == d.dir {
		return d.at
	}
	if filepath.Dir(p) == d.dir {
		return d.at + "/" + filepath.Base(p)
	}
	return p
}

// err is err with the pinned directory's descriptor path in an *os.PathError or *os.LinkError
// given back as the directory's name (messages name files as the user knows them).
func (d *dirPin) err(err error) error {
	if d == nil || err == nil {
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

// create creates the new file name (in the pinned directory: O_RDWR|O_CREATE|O_EXCL, mode
// 0600); the *os.File is named name, as are its errors.
func (d *dirPin) create(name string) (*os.File, error) {
	if d == nil {
		return os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	}
	return createAs(d.path(name), name)
}

// close releases the directory (nil-safe).
func (d *dirPin) close() {
	if d != nil {
		d.f.Close()
	}
}
