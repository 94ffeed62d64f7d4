package fileio

import (
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// atime returns the access time of fi (kept when a file is replaced), falling back to now.
func atime(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(st.Atim.Sec), int64(st.Atim.Nsec))
	}
	return time.Now()
}

// ctime returns the inode change time of fi: any write or metadata change moves it, and no
// process can set it back.
func ctime(fi os.FileInfo) (time.Time, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)), true
	}
	return time.Time{}, false
}

// setFileTimes sets the access and modification times of the file open as f through its
// descriptor (futimens: utimensat with a NULL path), to the nanosecond. Never through its path:
// a temp file's name lives in a directory its owner may write, and between the temp's creation
// and this call that owner could swap the name for a symbolic link to any file, whose times a
// path-based call (os.Chtimes) would set instead — as root, any file's (issue 30 finding 4).
func setFileTimes(f *os.File, atime, mtime time.Time) error {
	ts := [2]unix.Timespec{unix.NsecToTimespec(atime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	var errno syscall.Errno
	if err := withRawFd(f, func(fd uintptr) {
		_, _, errno = unix.Syscall6(unix.SYS_UTIMENSAT, fd, 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
	}); err != nil {
		return err
	}
	if errno != 0 {
		return &os.PathError{Op: "futimens", Path: f.Name(), Err: errno}
	}
	return nil
}
