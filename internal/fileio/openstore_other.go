//go:build !unix

package fileio

import "os"

// openNonBlocking opens path read-only (no O_NOFOLLOW or O_NONBLOCK on this platform).
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }

func setBlocking(*os.File) error { return nil }
