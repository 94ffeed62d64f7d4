package fileio

import (
	"os"
	"sync/atomic"
)

// The file-system seam for fault tests: every step of a rewrite, restore or run record that
// can fail on a real disk (write, fsync, rename, opening and fsyncing a directory) first asks
// Fault, and fails with the error a hook returns. Without a hook (always, outside tests)
// Fault returns nil and costs one atomic load.

// Fault operations, the op argument of a fault hook.
const (
	FaultWrite   = "write"     // writing a temp file, backup, journal or manifest
	FaultSync    = "fsync"     // fsync of a temp file, backup or journal
	FaultRename  = "rename"    // the rename that replaces a store or a manifest
	FaultOpenDir = "open-dir"  // opening a directory to fsync it
	FaultSyncDir = "dir-fsync" // fsync of a directory
	FaultSyncFS  = "syncfs"    // syncfs(2) of the file system holding a directory (path: the directory)
)

// FaultHook decides whether the operation op on path fails (nil: it goes ahead).
type FaultHook func(op, path string) error

var faultHook atomic.Pointer[FaultHook]

// SetFaultHook installs h for every later Fault call (nil removes it) and returns a function
// restoring the previous hook. For tests only.
func SetFaultHook(h FaultHook) (restore func()) {
	var p *FaultHook
	if h != nil {
		p = &h
	}
	old := faultHook.Swap(p)
	return func() { faultHook.Store(old) }
}

// Fault returns the error the installed hook injects for op on path, nil without a hook.
func Fault(op, path string) error {
	if h := faultHook.Load(); h != nil {
		if err := (*h)(op, path); err != nil {
			return &os.PathError{Op: op, Path: path, Err: err}
		}
	}
	return nil
}

// faultWriter fails a Write with the hook's error for FaultWrite on path.
type faultWriter struct {
	w    interface{ Write([]byte) (int, error) }
	path string
}

func (f faultWriter) Write(p []byte) (int, error) {
	if err := Fault(FaultWrite, f.path); err != nil {
		return 0, err
	}
	return f.w.Write(p)
}
