package fileio

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing the n bytes of f at off to disk, without
// waiting (sync_file_range SYNC_FILE_RANGE_WRITE): the fsync that makes the file durable then
// waits for less, and the disk works while the rest is copied. Durability still comes from
// the fsync alone; an error here is ignored (the fsync reports it).
func startWriteback(f *os.File, off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}
