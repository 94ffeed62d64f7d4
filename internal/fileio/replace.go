package fileio

import (
	"context"
	"io"

	"github.com/sessionfix/sessionfix/store"
)

// Fingerprint returns the checksum a rewrite records for content it left
// (store.FileState.Fingerprint, "xxh3-128:<32 hex digits>": checksum.go) of everything r reads.
// A SQLite store hashes its database file through a descriptor it already holds (closing
// another one would drop SQLite's locks), so it hands the reader in.
func Fingerprint(r io.Reader) (string, error) {
	h := newXXH128()
	if _, err := io.CopyBuffer(h, r, make([]byte, copyBufSize)); err != nil {
		return "", err
	}
	return formatSum(h, xxh3Prefix), nil
}

// RestoreWith puts content back at path for an undo whose store checks its own record
// (engine/sqlite: a database file put back byte for byte): path must still be exactly want
// (size, mtime, and want's checksum — Fingerprint "xxh3-128:…" or SHA256 — checked in the pass
// that reads it), and transform writes the content to restore while reading the current one.
// It is the guarded rewrite of RewriteFile (a file another process holds open for writing or
// locked is refused with an *store.InUseError, and so is one that changed since want; the
// old inode is watched after the rename and the rename rolled back when a writer opened it
// meanwhile), the current file kept at "<backup>.before-undo" (numbered when taken), the new
// file given meta's mode and mtime. An error once the content is in place is a
// *CommittedError: restored.
func RestoreWith(ctx context.Context, path string, want store.FileState, transform Transform, backup string, meta store.FileState) error {
	ctx = WithBeforeCheck(ctx, nil) // the before-check seam is for applying a change, not undo
	_, err := rewriteFile(ctx, path, want, transform, store.ApplyOptions{BackupPath: undoBackupPath(&store.Change{Backup: backup})}, &meta)
	return err
}

type noteKey struct{}

// WithNoteRecorder returns a context whose restores call rec with what the user should know
// about how a store was restored (engine/sqlite: a database put back row by row, whose file
// bytes are therefore not the original's, and why); undo prints it beside the store.
func WithNoteRecorder(ctx context.Context, rec func(note string)) context.Context {
	return context.WithValue(ctx, noteKey{}, rec)
}

// Note tells the context's note recorder (WithNoteRecorder) note; without one it is dropped.
func Note(ctx context.Context, note string) {
	if rec, ok := ctx.Value(noteKey{}).(func(string)); ok && rec != nil {
		rec(note)
	}
}
