//go:build !linux

package sqlite

import "os"

// setDirect is Linux's O_DIRECT (direct_linux.go); elsewhere the copy is written through the
// page cache.
func setDirect(*os.File) bool { return false }

func clearDirect(*os.File) bool { return true }
