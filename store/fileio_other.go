//go:build !unix

package store

import "os"

func chownLike(*os.File, os.FileInfo) {}

// nlink is unknown here: a backup is then a hard link only where the platform allows it.
func nlink(os.FileInfo) uint64 { return 1 }
