//go:build !linux

package fileio

import (
	"os"
	"time"
)

// atime is the access time kept when a file is replaced; only Linux reads it back.
func atime(os.FileInfo) time.Time { return time.Now() }

// ctime is not read outside Linux (size, mtime and inode still are).
func ctime(os.FileInfo) (time.Time, bool) { return time.Time{}, false }
