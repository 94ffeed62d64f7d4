//go:build unix

package fileio

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLockFile takes an exclusive advisory lock (flock(2) LOCK_EX|LOCK_NB) on f's open file
// description, held until f is closed or unlockFile: false and no error when another process
// (or another descriptor) holds one. Locking the descriptor a rewrite opened, not its path, locks
// the very file it read and creates nothing (a lock by path opens it O_CREAT, following a link).
func tryLockFile(f *os.File) (bool, error) {
	var lerr error
	if err := withRawFd(f, func(fd uintptr) { lerr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB) }); err != nil {
		return false, err
	}
	if errors.Is(lerr, unix.EWOULDBLOCK) {
		return false, nil
	}
	if lerr != nil {
		return false, &os.PathError{Op: "flock", Path: f.Name(), Err: lerr}
	}
	return true, nil
}

// unlockFile lets go of tryLockFile's lock.
func unlockFile(f *os.File) {
	_ = withRawFd(f, func(fd uintptr) { _ = unix.Flock(int(fd), unix.LOCK_UN) })
}

// TryLockStore locks the store file at path as a rewrite does (tryLockFile), for a cleanup that
// must leave alone a store another process is rewriting: it opens path read-only without
// following a link at its name, without creating it and without waiting on a FIFO, and locks
// only a regular file. busy is true when another process holds the lock; unlock (never nil)
// lets go of a lock taken. A path naming nothing, a link or no regular file is neither locked
// nor busy.
func TryLockStore(path string) (unlock func(), busy bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollowNonBlock, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ELOOP) {
			return func() {}, false, nil
		}
		return func() {}, false, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return func() {}, false, err
	}
	ok, err := tryLockFile(f)
	if !ok {
		f.Close()
		return func() {}, err == nil, err
	}
	return func() { f.Close() }, false, nil
}
