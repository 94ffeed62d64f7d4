//go:build !unix

package sqlite

// onReadOnlyFS is false where access(2) cannot tell (see rofs_unix.go).
func onReadOnlyFS(string) bool { return false }

// writeDenied is nil where access(2) cannot tell (see rofs_unix.go).
func writeDenied(string) error { return nil }
