package fileio

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// syncFSMagic are the file systems whose syncfs(2) makes every entry made in any directory of
// theirs durable and reports a failure to do so (their metadata goes through a journal or log
// that syncfs commits and waits for: ext4, XFS, Btrfs; tmpfs has nothing to make durable).
// Elsewhere (NFS, FUSE, 9p, overlays …) syncfs may do less than fsync: each directory is
// fsynced instead.
var syncFSMagic = map[int64]string{
	unix.EXT4_SUPER_MAGIC:  "ext4",
	unix.XFS_SUPER_MAGIC:   "xfs",
	unix.BTRFS_SUPER_MAGIC: "btrfs",
	unix.TMPFS_MAGIC:       "tmpfs",
}

// syncFSKernel reports whether the running kernel is Linux 5.8 or newer: from 5.8 syncfs(2)
// also returns the writeback errors of the file system's files since the descriptor was opened
// (errseq on the superblock, commit 735e4ae5ba28), not only the journal's.
var syncFSKernel = sync.OnceValue(func() bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	rel := unix.ByteSliceToString(u.Release[:])
	maj, rest, _ := strings.Cut(rel, ".")
	minStr, _, _ := strings.Cut(rest, ".")
	minStr = strings.TrimRightFunc(minStr, func(r rune) bool { return r < '0' || r > '9' })
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(minStr)
	return err1 == nil && err2 == nil && (a > 5 || a == 5 && b >= 8)
})

// fsKey returns the identity of the file system holding dir (its device) and whether one
// syncfs(2) of it may stand for an fsync of each of its directories (syncFSMagic, syncFSKernel).
// With pin (dir held open) the descriptor's fstat and fstatfs say; without, dir's by path.
func fsKey(dir string, pin *dirPin) (dev uint64, ok bool) {
	if !syncFSKernel() {
		return 0, false
	}
	var st unix.Stat_t
	var fs unix.Statfs_t
	if pin != nil {
		if unix.Fstat(pin.fd, &st) != nil || unix.Fstatfs(pin.fd, &fs) != nil {
			return 0, false
		}
	} else if unix.Stat(dir, &st) != nil || unix.Statfs(dir, &fs) != nil {
		return 0, false
	}
	if _, known := syncFSMagic[int64(fs.Type)]; !known {
		return 0, false
	}
	return uint64(st.Dev), true
}

// syncFS makes every directory entry of the file system holding dir durable: syncfs(2) on dir
// (which writes back and waits for the whole file system: its journal commit covers every
// rename, link and create made before the call), opened through pin when it holds dir (nil: by
// path; O_DIRECTORY either way: a FIFO is an error, not a wait).
func syncFS(dir string, pin *dirPin) error {
	if err := Fault(FaultSyncFS, dir); err != nil {
		return err
	}
	f, err := pin.openFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return nil
}
