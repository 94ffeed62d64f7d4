package fileio

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openDirPath opens dir as a path-only descriptor (O_PATH|O_DIRECTORY: no read permission
// needed, nothing but lookups through it) and returns it with the name that reaches the
// directory through it, /proc/self/fd/<n>, or "" when /proc/self/fd does not lead there (no
// /proc mounted: the *at system calls still work through the descriptor).
func openDirPath(dir string) (*os.File, string, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", &os.PathError{Op: "open", Path: dir, Err: err}
	}
	at := "/proc/self/fd/" + strconv.Itoa(fd)
	var a, b unix.Stat_t
	if unix.Fstat(fd, &a) != nil || unix.Stat(at, &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
		at = ""
	}
	return os.NewFile(uintptr(fd), dir), at, nil
}

// rel is how p is named for an *at system call: the pinned directory's descriptor and "." (p is
// the directory) or p's base name (p is one of its entries); else AT_FDCWD and p.
func (d *dirPin) rel(p string) (int, string) {
	switch {
	case d == nil:
		return unix.AT_FDCWD, p
	case p == d.dir:
		return d.fd, "."
	case filepath.Dir(p) == d.dir:
		return d.fd, filepath.Base(p)
	}
	return unix.AT_FDCWD, p
}

func (d *dirPin) lstatAt(p string) (os.FileInfo, error) {
	fd, name := d.rel(p)
	var st unix.Stat_t
	for {
		err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "lstat", Path: p, Err: err}
		}
		break
	}
	return newStatInfo(filepath.Base(p), &st), nil
}

func linkAt(a *dirPin, old string, b *dirPin, new string) error {
	ofd, oname := a.rel(old)
	nfd, nname := b.rel(new)
	if err := ignoringEINTR(func() error { return unix.Linkat(ofd, oname, nfd, nname, 0) }); err != nil {
		return &os.LinkError{Op: "link", Old: old, New: new, Err: err}
	}
	return nil
}

func (d *dirPin) renameAt(old, new string) error {
	ofd, oname := d.rel(old)
	nfd, nname := d.rel(new)
	if err := ignoringEINTR(func() error { return unix.Renameat(ofd, oname, nfd, nname) }); err != nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
	}
	return nil
}

// unlinkAt removes p (a directory with dir: AT_REMOVEDIR).
func (d *dirPin) unlinkAt(p string, dir bool) error {
	fd, name := d.rel(p)
	flags := 0
	if dir {
		flags = unix.AT_REMOVEDIR
	}
	if err := ignoringEINTR(func() error { return unix.Unlinkat(fd, name, flags) }); err != nil {
		return &os.PathError{Op: "remove", Path: p, Err: err}
	}
	return nil
}

func (d *dirPin) openAt(p string, flag int, perm os.FileMode) (*os.File, error) {
	fd, name := d.rel(p)
	var nfd int
	err := ignoringEINTR(func() error {
		var err error
		nfd, err = unix.Openat(fd, name, flag|unix.O_CLOEXEC, uint32(perm.Perm()))
		return err
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(nfd), p), nil
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != unix.EINTR {
			return err
		}
	}
}

// statInfo is an os.FileInfo of an fstatat(2) (os builds one only from a path or an open
// file). Its Sys is a *syscall.Stat_t, as os's is; compare it with sameFile, not os.SameFile.
type statInfo struct {
	name string
	sys  syscall.Stat_t
}

func newStatInfo(name string, st *unix.Stat_t) *statInfo {
	// x/sys/unix's Stat_t and syscall's are the same kernel structure on Linux.
	return &statInfo{name: name, sys: *(*syscall.Stat_t)(unsafe.Pointer(st))}
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.sys.Size }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.sys.Mtim.Unix()) }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return &s.sys }

// Mode is os's mapping of st_mode (FileMode).
func (s *statInfo) Mode() fs.FileMode { return FileMode(uint32(s.sys.Mode)) }

func (d *dirPin) subAt(p string) (*dirPin, os.FileInfo, error) {
	fd, name := d.rel(p)
	var nfd int
	err := ignoringEINTR(func() error {
		var err error
		nfd, err = unix.Openat(fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if err == unix.ENOTDIR || err == unix.ELOOP {
		return nil, nil, &os.PathError{Op: "open", Path: p, Err: errNotADirectory}
	}
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(nfd), p)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	at := ""
	if d.at != "" {
		at = procFD(nfd)
	}
	return newDirPin(p, f, at), fi, nil
}

func (d *dirPin) mkdirAt(p string, perm os.FileMode) error {
	fd, name := d.rel(p)
	if err := ignoringEINTR(func() error { return unix.Mkdirat(fd, name, uint32(perm.Perm())) }); err != nil {
		return &os.PathError{Op: "mkdir", Path: p, Err: err}
	}
	return nil
}

// chownSelf gives the pinned directory itself to uid and gid (fchownat of its descriptor,
// AT_EMPTY_PATH).
func (d *dirPin) chownSelf(uid, gid int) error {
	return ignoringEINTR(func() error { return unix.Fchownat(d.fd, "", uid, gid, unix.AT_EMPTY_PATH) })
}

func (d *dirPin) holdAt() (*dirPin, error) {
	fd, err := unix.FcntlInt(uintptr(d.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "fcntl", Path: d.dir, Err: err}
	}
	at := ""
	if d.at != "" {
		at = procFD(fd)
	}
	return newDirPin(d.dir, os.NewFile(uintptr(fd), d.dir), at), nil
}

// mkdirAsAt makes p (mkdirat through d, or by path without a pin) with the calling thread's
// file-system ids set to uid and gid (setfsgid(2), setfsuid(2)): the directory is theirs from
// the instant it exists, and it is made only where they may make it (the kernel checks their
// write permission on the directory it is made in, not root's). The ids are per thread: the
// mkdirat runs on a goroutine locked to its own thread that is never unlocked, so the thread,
// and its changed ids with it, ends when the goroutine does (no other goroutine ever runs with
// them). The error is the mkdirat's, or one saying the ids could not be taken (nothing made).
func (d *dirPin) mkdirAsAt(p string, perm os.FileMode, uid, gid int) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		_, _ = unix.SetfsgidRetGid(gid)
		_, _ = unix.SetfsuidRetUid(uid)
		// An invalid id (-1) changes nothing and returns the current one: the check.
		cg, _ := unix.SetfsgidRetGid(-1)
		cu, _ := unix.SetfsuidRetUid(-1)
		if cu != uid || cg != gid {
			done <- &os.PathError{Op: "mkdir", Path: p, Err: fmt.Errorf("could not take the file-system ids %d:%d (now %d:%d)", uid, gid, cu, cg)}
			return
		}
		fd, name := d.rel(p)
		done <- ignoringEINTR(func() error { return unix.Mkdirat(fd, name, uint32(perm.Perm())) })
	}()
	err := <-done
	if errno, ok := err.(unix.Errno); ok {
		return &os.PathError{Op: "mkdir", Path: p, Err: errno}
	}
	return err
}
