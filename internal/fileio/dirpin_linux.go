package fileio

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openDirPath opens dir as a path-only descriptor (O_PATH|O_DIRECTORY: no read permission
// needed, nothing but lookups through it) and returns it with the name that reaches the
// directory through it, /proc/self/fd/<n>; nil and no error when /proc/self/fd does not lead
// there (no /proc mounted).
func openDirPath(dir string) (*os.File, string, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", &os.PathError{Op: "open", Path: dir, Err: err}
	}
	at := "/proc/self/fd/" + strconv.Itoa(fd)
	var a, b unix.Stat_t
	if unix.Fstat(fd, &a) != nil || unix.Stat(at, &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
		unix.Close(fd)
		return nil, "", nil
	}
	return os.NewFile(uintptr(fd), dir), at, nil
}

// createAs creates the new file at path (open(2) O_RDWR|O_CREAT|O_EXCL, mode 0600) as an
// *os.File named name (what its errors say).
func createAs(path, name string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}
