package sqlite

import (
	"os"

	"golang.org/x/sys/unix"
)

// setDirect turns O_DIRECT on for f (fcntl F_SETFL): its writes then go from the caller's
// buffer to the disk without passing through the page cache (no page of the cache is
// allocated, filled and written back for them), each write returning once the disk has the
// bytes. It reports whether the flag is on: a file system without direct I/O refuses it
// (EINVAL). Durability still comes from fsync (the device's cache and the file's metadata).
func setDirect(f *os.File) bool { return setFlag(f, true) }

// clearDirect turns O_DIRECT off again (for a tail that is not a whole number of blocks).
func clearDirect(f *os.File) bool { return setFlag(f, false) }

func setFlag(f *os.File, on bool) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	_ = rc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil {
			return
		}
		if on {
			fl |= unix.O_DIRECT
		} else {
			fl &^= unix.O_DIRECT
		}
		_, err = unix.FcntlInt(fd, unix.F_SETFL, fl)
		ok = err == nil
	})
	return ok
}
