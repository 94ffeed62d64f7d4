//go:build !linux

package fileio

import "os"

// openWriters is only implemented on Linux (/proc); elsewhere the in-use checks rely on size,
// mtime, content and advisory locks.
func openWriters(*os.File, os.FileInfo) []string { return nil }

func openWritersFresh(*os.File, os.FileInfo) []string { return nil }

// fileID is unknown here.
type fileID struct{}

func idOfStat(os.FileInfo) fileID { return fileID{} }

func writersOf(fileID, bool) []string { return nil }

// openWatch is only implemented on Linux: elsewhere every open counts as possible.
type openWatch struct{}

func watchOpens(string) *openWatch { return nil }

func (w *openWatch) opened() bool { return true }

func (w *openWatch) close() {}
