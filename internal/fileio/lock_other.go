//go:build !unix

package fileio

import (
	"os"
	"sync"

	"github.com/gofrs/flock"
)

// tryLockFile locks the file f was opened from by its name (gofrs/flock; see the unix version).
// The lock is let go when the process ends: these systems are not run as root over other
// users' homes.
func tryLockFile(f *os.File) (bool, error) {
	lk := flock.New(f.Name())
	ok, err := lk.TryLock()
	if ok {
		heldLocks.Store(f, lk)
	}
	return ok, err
}

// unlockFile lets go of tryLockFile's lock.
func unlockFile(f *os.File) {
	if lk, ok := heldLocks.LoadAndDelete(f); ok {
		_ = lk.(*flock.Flock).Unlock()
	}
}

var heldLocks sync.Map
