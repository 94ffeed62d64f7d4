package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// LeftoverDir is the directory of a store, held open for a cleanup that removes the temps a
// killed run left beside the store (".<name><digits>"). As root over users' homes, a cleanup by
// path follows whatever the path leads to when it is looked up: a user who swaps a directory on
// the way for a symbolic link has root remove (or lock) a same-named file in a directory the
// user cannot write. The directory is opened as an undo restoring a gone store opens it
// (pinGoneStoreDir: as root each link on the way must pass owner.LinkRefusal, and the directory
// must still be what the path resolves to once open), and the store's lock, each temp's lstat
// and its removal name the file relative to that descriptor (openat, fstatat, unlinkat), never
// following a link at the file's own name.
type LeftoverDir struct {
	store string
	pin   *dirPin // nil: by path (systems other than Linux)
}

// OpenLeftoverDir holds open the directory of store (an absolute or relative path). The error
// matches ErrNotTheFile (errors.Is) when a link on the way is refused or the directory changed
// while it was opened ("its directory not opened: <why>"), fs.ErrNotExist when the directory is
// not there.
func OpenLeftoverDir(store string) (*LeftoverDir, error) {
	pin, err := pinGoneStoreDir(store)
	if nf := (*NotTheFileError)(nil); errors.As(err, &nf) {
		return nil, &leftoverDirError{reason: nf.Reason}
	}
	if err != nil {
		return nil, err
	}
	return &LeftoverDir{store: store, pin: pin}, nil
}

// leftoverDirError is OpenLeftoverDir's refusal: errors.Is ErrNotTheFile.
type leftoverDirError struct{ reason string }

func (e *leftoverDirError) Error() string        { return "its directory not opened: " + e.reason }
func (e *leftoverDirError) Is(target error) bool { return target == ErrNotTheFile }

// Close lets go of the directory (a store lock taken by TryLockStore stays until its unlock).
func (d *LeftoverDir) Close() { d.pin.close() }

// TryLockStore locks the store as a rewrite does (tryLockFile), so that a cleanup leaves alone
// a store another process is rewriting: it opens the store read-only through the held
// directory, without following a link at its name, without creating it and without waiting on
// a FIFO, and locks only a regular file. busy is true when another process holds the lock;
// unlock (never nil) lets go of a lock taken. A store that is not there, a link or no regular
// file is neither locked nor busy.
func (d *LeftoverDir) TryLockStore() (unlock func(), busy bool, err error) {
	none := func() {}
	f, err := d.pin.openFile(d.store, os.O_RDONLY|noFollowNonBlock, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ELOOP) {
			return none, false, nil
		}
		return none, false, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return none, false, err
	}
	ok, err := tryLockFile(f)
	if !ok {
		f.Close()
		return none, err == nil, err
	}
	return func() { unlockFile(f); f.Close() }, false, nil
}

// Lstat is the lstat of tmp, an entry of the held directory, through it (fstatat: no link
// followed).
func (d *LeftoverDir) Lstat(tmp string) (os.FileInfo, error) { return d.pin.lstat(tmp) }

// RemoveTemp removes tmp, an entry of the held directory whose name is a temp name of the
// store's (IsTempName), when it is a regular file (its lstat through the directory): removed
// is true, and err says when the removal failed. Anything else at that name, or nothing, is
// left alone (removed false). The error is also set when tmp is not such a name (nothing done)
// or its lstat fails otherwise than by its absence.
func (d *LeftoverDir) RemoveTemp(tmp string) (removed bool, err error) {
	if filepath.Dir(tmp) != filepath.Dir(d.store) || !IsTempName(filepath.Base(tmp), filepath.Base(d.store)) {
		return false, &os.PathError{Op: "remove", Path: tmp, Err: errors.New("not a temp file of " + d.store)}
	}
	fi, err := d.pin.lstat(tmp)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil || !fi.Mode().IsRegular() {
		return false, err
	}
	if err := d.pin.remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return true, err
	}
	return true, nil
}
