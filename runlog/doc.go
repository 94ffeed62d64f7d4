// Package runlog is a run's durable record and its undo: the run directory
// <state>/runs/<run-id>/ of each fix --apply (backups/, journal.jsonl, manifest.json), how it is
// written while stores are rewritten, how it is read back, checked and undone, listed and
// cleaned up. docs/apply-and-undo.md describes the files; this package keeps these guarantees:
//
//   - crash: at any instant a store holds its old bytes or its new ones, never a mix (the store
//     engines' temp-fsync-rename, internal/fileio), and the run records every store whose new
//     bytes may be in place: the journal's "commit" line (the change, the backup, the checksums)
//     is fsynced before the rename (Run.Rewrite), so a run killed at any point is undone from its
//     journal (ReadRun recovers it; a torn last line is left out). manifest.json is replaced
//     whole (temp, fsync, rename, directory fsync: old or new, never neither), its new
//     directories made durable in their parents;
//   - seal: manifest.json and every journal line carry the SHA-256 of their own bytes as their
//     first member (trust.go); a run whose seal fails, or that asks undo for something no run
//     records (CheckRun: stores outside its roots, paths through symlinks, backups outside its
//     backups/ directory, a run directory another user could write), is refused whole, before
//     anything is restored. The seal catches edits and damage; it is no secret;
//   - undo restores byte for byte: each store through its engine's store.Restorer, from its
//     backup checked against the recorded checksum of the original, with the original's mode and
//     mtime, moves first (newest first), a store changed since the run refused unless forced;
//     the manifest then records what was restored;
//   - memory stays flat: neither a run nor its undo holds the byte edits of every store (they
//     are streamed from the journal into the manifest and read back one entry at a time);
//   - leftovers: a temp file is removed (CleanLeftovers) only when the run's journal announced it
//     and no live process holds the run's or the store's lock.
//
// What a run rewrites, and how, is the caller's (rewrite: plan and apply); runlog records it.
package runlog
