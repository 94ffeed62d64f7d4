//go:build unix

package fileio

import (
	"os"

	"golang.org/x/sys/unix"
)

// openNonBlocking opens path read-only with O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC.
func openNonBlocking(path string) (*os.File, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// setBlocking clears O_NONBLOCK on f (a regular file: reads behave the same either way; cleared
// so that nothing downstream sees a flag it did not ask for).
func setBlocking(f *os.File) error {
	var serr error
	if err := withRawFd(f, func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err == nil && fl&unix.O_NONBLOCK != 0 {
			_, err = unix.FcntlInt(fd, unix.F_SETFL, fl&^unix.O_NONBLOCK)
		}
		serr = err
	}); err != nil {
		return err
	}
	return serr
}
