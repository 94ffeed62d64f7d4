package fileio

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openAnonTemp opens a new regular file without a name in dir (open(2) O_TMPFILE, mode 0600,
// through pin when dir is its directory), to be named by linkAnonTemp (label, the name it is to
// get, is the *os.File's name: what its errors say); errors.ErrUnsupported (or open's error)
// where that is not to be relied on: a file system other than ext4, XFS, Btrfs and tmpfs
// (syncFSMagic: their journal or log commits the link before a later rename of the same name,
// so a rename that survives a crash brings the linked, fsynced inode with it), or no
// /proc/self/fd to name it by (linkat of a descriptor without it, AT_EMPTY_PATH, needs
// CAP_DAC_READ_SEARCH).
func openAnonTemp(pin *dirPin, dir, label string) (*os.File, error) {
	at, name := pin.rel(dir)
	fd, err := unix.Openat(at, name, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	var sfs unix.Statfs_t
	var st unix.Stat_t
	if unix.Fstatfs(fd, &sfs) != nil || syncFSMagic[int64(sfs.Type)] == "" || unix.Stat(procFD(fd), &st) != nil {
		unix.Close(fd)
		return nil, errors.ErrUnsupported
	}
	return os.NewFile(uintptr(fd), label), nil
}

func procFD(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// linkAnonTemp gives f (from openAnonTemp) the name name (through pin when name is in its
// directory): linkat(2) of its /proc/self/fd entry (AT_SYMLINK_FOLLOW: the file, not the magic
// link). An *os.LinkError matching os.ErrExist when name is taken.
func linkAnonTemp(f *os.File, pin *dirPin, name string) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	at, rel := pin.rel(name)
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		lerr = unix.Linkat(unix.AT_FDCWD, procFD(int(fd)), at, rel, unix.AT_SYMLINK_FOLLOW)
	}); err != nil {
		return err
	}
	if lerr != nil {
		return &os.LinkError{Op: "link", Old: "(unnamed temp)", New: name, Err: lerr}
	}
	return nil
}
