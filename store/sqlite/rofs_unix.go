//go:build unix

package sqlite

import "golang.org/x/sys/unix"

// onReadOnlyFS reports whether dir is on a file system mounted read-only (access(2) says
// EROFS for W_OK): a copied home on a read-only mount or image, where SQLite can create no
// -wal or -shm.
func onReadOnlyFS(dir string) bool { return unix.Access(dir, unix.W_OK) == unix.EROFS }
