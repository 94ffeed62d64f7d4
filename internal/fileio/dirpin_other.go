//go:build !linux

package fileio

import "os"

// openDirPath: directories are held open and named through their descriptor on Linux only
// (/proc/self/fd); elsewhere a rewrite names files by path.
func openDirPath(string) (*os.File, string, error) { return nil, "", nil }

// createAs is not reached here (no directory is pinned): os.OpenFile of path.
func createAs(path, _ string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}
