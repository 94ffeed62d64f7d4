//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// onReadOnlyFS reports whether dir is on a file system mounted read-only (access(2) says
// EROFS for W_OK): a copied home on a read-only mount or image, where SQLite can create no
// -wal or -shm.
func onReadOnlyFS(dir string) bool { return unix.Access(dir, unix.W_OK) == unix.EROFS }

// writeDenied is why this process cannot write the database at path, as "<file or
// directory>: read-only file system" (EROFS) or "…: permission denied" (EACCES) wrapping the
// errno: access(2) for W_OK of the file, then of its directory (where SQLite creates the
// -journal, or the -wal and -shm). nil when access allows both or gives another answer.
// SQLite itself only says "unable to open database file" or "attempt to write a readonly
// database" there.
func writeDenied(path string) error {
	for _, p := range []string{path, filepath.Dir(path)} {
		if err := unix.Access(p, unix.W_OK); errors.Is(err, unix.EROFS) || errors.Is(err, unix.EACCES) {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}
