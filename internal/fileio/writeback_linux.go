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

// writeBack writes every dirty page of f to disk and waits for them (sync_file_range(2) of the
// whole file: SYNC_FILE_RANGE_WAIT_BEFORE|SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER),
// without the journal commit and the flush of the disk's cache an fsync makes: the syncfs(2)
// that follows (syncShared) makes those, once for several files. It returns the writeback
// errors of f's file since f was opened, and only those: the kernel's wait ends with
// file_check_and_advance_wb_err on f (mm/filemap.c file_fdatawait_range, used by
// sync_file_range since Linux 4.14; syncFSKernel asks for 5.8 anyway), the errseq cursor an
// fsync of f would have consulted. So an error of this file reaches its own rewrite, whatever
// the syncfs reports or misses (syncfs reports the file system's errors made since its
// descriptor was opened, to one caller).
func writeBack(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = ignoringEINTR(func() error {
			return unix.SyncFileRange(int(fd), 0, 0, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
		})
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "sync_file_range", Path: f.Name(), Err: serr}
	}
	return nil
}
