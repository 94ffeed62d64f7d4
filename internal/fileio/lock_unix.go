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
