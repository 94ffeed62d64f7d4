//go:build unix && !linux

package fileio

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// setFileTimes sets the times of the file open as f through its descriptor (futimes), never its
// path (see the Linux version). futimes takes microseconds: the sub-microsecond digits of the
// times are not kept on these platforms.
func setFileTimes(f *os.File, atime, mtime time.Time) error {
	tv := []unix.Timeval{unix.NsecToTimeval(atime.UnixNano()), unix.NsecToTimeval(mtime.UnixNano())}
	if err := unix.Futimes(int(f.Fd()), tv); err != nil {
		return &os.PathError{Op: "futimes", Path: f.Name(), Err: err}
	}
	return nil
}
