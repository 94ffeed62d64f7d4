//go:build !linux

package store

import "os"

// openWriters is only implemented on Linux (/proc); elsewhere the in-use checks rely on size,
// mtime, content and advisory locks.
func openWriters(os.FileInfo) []string { return nil }

func openWritersFresh(os.FileInfo) []string { return nil }
