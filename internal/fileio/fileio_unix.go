//go:build unix

package fileio

import (
	"io/fs"
	"os"
	"syscall"

	"github.com/sessionfix/sessionfix/store"
)

// chownLike gives f the owner of fi, best effort (it only matters when run as root over
// another user's files, and fails harmlessly otherwise).
func chownLike(f *os.File, fi os.FileInfo) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}

// ownerOf is fi's owner and group (nil where the platform does not say).
func ownerOf(fi os.FileInfo) *store.FileOwner {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return &store.FileOwner{UID: st.Uid, GID: st.Gid}
	}
	return nil
}

// noFollowNonBlock are the open flags of a store opened for writing by name: a symbolic link is
// not followed, a FIFO does not block the open.
const noFollowNonBlock = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// nlink returns the number of hard links of fi (1 when unknown).
func nlink(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// openNoFollow opens path read-only, failing (ELOOP) when its last element is a symbolic link.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}

// devIno is fi's device and inode numbers (Move's identity of a moved file).
func devIno(fi os.FileInfo) (uint64, uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}

// withRawFd runs fn with f's descriptor, which stays open meanwhile.
func withRawFd(f *os.File, fn func(fd uintptr)) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Control(fn)
}

// sameFile is os.SameFile for stats of os and of a pinned directory's lookups (statInfo, which
// os.SameFile does not know): the same device and inode.
func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return false
	}
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	if ok1 && ok2 {
		return sa.Dev == sb.Dev && sa.Ino == sb.Ino
	}
	return os.SameFile(a, b)
}

// oDirectory is O_DIRECTORY: an open that must find a directory.
const oDirectory = syscall.O_DIRECTORY

// FileMode is the fs.FileMode of a stat(2) st_mode: its permission bits, its file type and its
// setuid, setgid and sticky bits, as os maps them (os/stat_linux.go) for its own stats; for a
// stat made otherwise (fstatat on a held directory, the SQLite open guard's fstat).
func FileMode(m uint32) fs.FileMode {
	fm := fs.FileMode(m & 0o777)
	switch m & syscall.S_IFMT {
	case syscall.S_IFBLK:
		fm |= fs.ModeDevice
	case syscall.S_IFCHR:
		fm |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		fm |= fs.ModeDir
	case syscall.S_IFIFO:
		fm |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		fm |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		fm |= fs.ModeSocket
	}
	if m&syscall.S_ISGID != 0 {
		fm |= fs.ModeSetgid
	}
	if m&syscall.S_ISUID != 0 {
		fm |= fs.ModeSetuid
	}
	if m&syscall.S_ISVTX != 0 {
		fm |= fs.ModeSticky
	}
	return fm
}
