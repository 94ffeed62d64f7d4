// Package fileio is the crash-safe file-replacement engine behind every file store and every
// output file sessionfix writes:
//
//   - RewriteFile streams a file through a Transform into a temp file in the same directory
//     (announced first to the run's TempRecorder, see WithTempRecorder; on Linux written without
//     a name and given it, once announced, right before the rename: temp.go), keeps a backup, fsyncs,
//     checks the file is not in use (changed, locked, held open for writing), renames over it
//     and fsyncs the directory (under a run, DirSyncs: once for the renames of many stores,
//     before each is reported); it returns the store.Change a run manifest records.
//   - RestoreFile undoes such a Change from its backup (or reverseSplice's in-place reversal when
//     the file was appended to after the run).
//   - WriteOutputContext writes a user-named output path: a regular file by temp and
//     rename, devices, FIFOs and links written through.
//   - SetFaultHook / Fault is the seam fault tests use to fail any write, fsync or rename.
//   - Yield is called by the long CPU phases that read a file (a rewrite's copy pass, a JSONL
//     scan) after each read: goroutines back from a wait for the disk (a rewrite's fsyncs) get
//     a processor within a read, not when the scan ends (yield.go).
//
// Errors: an *store.InUseError (errors.Is store.ErrInUse) when another process uses the file, a
// *CommittedError when the new content is in place but a later step failed. The store contract
// types (store.FileState, store.Change, store.ApplyOptions …) stay in package store.
package fileio
