//go:build !unix

package fileio

import (
	"os"
	"time"
)

// setFileTimes sets the times of f by its name: this platform has no descriptor-based call.
func setFileTimes(f *os.File, atime, mtime time.Time) error {
	return os.Chtimes(f.Name(), atime, mtime)
}
