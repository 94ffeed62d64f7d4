package sqlite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

// A run's database is put back byte for byte when nothing touched it since the run, and row
// by row otherwise.
//
// Undo row by row (Restore's UPDATEs through SQLite) is safe beside a live agent and keeps
// whatever the agent wrote since the run, but SQLite's own bookkeeping then differs from
// before the run: the header's file change counter (bytes 24–27), version-valid-for number
// (92–95) and SQLITE_VERSION_NUMBER (96–99, the library that wrote last) change with every
// commit, and pages may be laid out otherwise. When the database file is still exactly the
// file the run left, the file's own bytes go back instead: the backup (copyBackup: the main
// file copied under the write lock) with the two header bytes the copy changed put back. So
// a run records, beside the rows file (fileRecord, verifyInfo.File):
//
//   - when the backup is a byte copy of the main file (mainFileIsDatabase: a rollback-journal
//     database, or a WAL database whose log was checkpointed empty before the write lock was
//     taken; the online backup API's copy is not), the main file's size, mode, mtime and
//     bytes 18 and 19 (file format write and read versions: 2 in WAL mode, which the backup
//     holds as 1) as they were under the lock;
//   - after its COMMIT (afterCommit), the file as the run left it: its WAL folded into it
//     (PRAGMA wal_checkpoint(TRUNCATE), never waiting), the write lock taken again (BEGIN
//     IMMEDIATE, never waiting) and PRAGMA data_version compared with the value read inside
//     the run's own transaction (it differs when any other connection committed in between,
//     https://sqlite.org/pragma.html#pragma_data_version): only when no one else wrote and the
//     log is empty, the file's size, mtime and XXH3-128 (fileio.Fingerprint), read through
//     the descriptor held since the backup (closing another would drop SQLite's locks); else
//     why not (NoAfter).
//
// Undo (restoreFile) puts the bytes back only when the database has no hot rollback journal,
// no write-ahead log holding frames, and its main file still hashes to what the run left; the
// replacement is fileio.RestoreWith's guarded rename (a process holding the file open for
// writing — an agent that is running — refuses it; a writer opening it during the rename
// rolls the rename back), the current file kept at "<backup>.before-undo". Any of those
// failing, the undo goes on row by row and says why the file's bytes differ (fileio.Note).
// A database put back byte for byte is the main file as the run took its write lock: a WAL
// that held frames before the run was folded into it then (the content is the same).

// fileRecord is verifyInfo.File: what undo needs to put the database file's bytes back.
type fileRecord struct {
	// Size, Mode and ModTime are the main file's under the run's write lock (the backup's size).
	Size    int64       `json:"size"`
	Mode    fs.FileMode `json:"mode"`
	ModTime time.Time   `json:"mtime"`
	// Versions are bytes 18 and 19 of the original header, hex ("0202" in WAL mode); the
	// backup holds 1 where they were 2 (copyBackup).
	Versions string `json:"versions"`
	// After is the main file as the run left it (Size, ModTime, Fingerprint "xxh3-128:…"),
	// nil when it could not be told (NoAfter says why).
	After   *store.FileState `json:"after,omitempty"`
	NoAfter string           `json:"no_after,omitempty"`
}

// recordFile reads what fileRecord keeps of the main file f (open, held beside the write
// transaction that keeps it from changing).
func recordFile(f *os.File) (*fileRecord, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	v := make([]byte, 2)
	if _, err := f.ReadAt(v, 18); err != nil {
		return nil, err
	}
	return &fileRecord{Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime(), Versions: hex.EncodeToString(v)}, nil
}

// versions returns the original bytes 18 and 19 and what the backup holds there.
func (r *fileRecord) versions() (orig, backup [2]byte, ok bool) {
	b, err := hex.DecodeString(r.Versions)
	if err != nil || len(b) != 2 {
		return orig, backup, false
	}
	copy(orig[:], b)
	backup = orig
	for i := range backup {
		if backup[i] == 2 {
			backup[i] = 1 // copyBackup
		}
	}
	return orig, backup, true
}

// dataVersion reads PRAGMA data_version on q (the run's transaction or connection).
func dataVersion(ctx context.Context, q interface {
	GetContext(ctx context.Context, dest any, query string, args ...any) error
}) (int64, error) {
	var v int64
	err := q.GetContext(ctx, &v, "PRAGMA data_version")
	return v, err
}

// afterCommit returns the main file f as the run's commit on conn left it (see the comment at
// the top of this file), or why it cannot be told: version is PRAGMA data_version as read
// inside the run's transaction. It never waits for a lock.
func afterCommit(ctx context.Context, conn *sqlx.Conn, f *os.File, version int64, busy time.Duration) (*store.FileState, string) {
	checkpointBeforeWrite(ctx, conn, busy)
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		return nil, "its state after the run could not be read (" + err.Error() + ")"
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA busy_timeout = %d", busy.Milliseconds()))
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return nil, "another connection took its write lock as the run ended, so the file the run left was not recorded"
	}
	defer tx.Rollback()
	if v, err := dataVersion(ctx, tx); err != nil || v != version {
		return nil, "another connection wrote to it as the run ended, so the file the run left was not recorded"
	}
	if _, whole, _ := mainFileIsDatabase(ctx, tx); !whole {
		return nil, "the run's change was still in its write-ahead log when the run ended (another connection was reading), so the file the run left was not recorded"
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, "its state after the run could not be read (" + err.Error() + ")"
	}
	sum, err := fileio.Fingerprint(io.NewSectionReader(f, 0, fi.Size()))
	if err != nil {
		return nil, "its state after the run could not be read (" + err.Error() + ")"
	}
	return &store.FileState{Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime(), Fingerprint: sum}, ""
}

// rowLevelNote is what undo says of a database restored row by row: why its file's bytes
// differ from before the run.
func rowLevelNote(why string) string {
	return "restored row by row, not byte for byte: " + why +
		"; every value the run changed holds its original again, but SQLite rewrote the file's header (change counter, version numbers) and may have laid pages out otherwise, so the file's bytes differ from before the run"
}

// restoreFile puts the database's file bytes back when the database is still exactly the file
// the run left (see the top of this file). done reports that nothing more is to be done (the
// bytes are back, or already were; err says what failed once they were being put back);
// otherwise why says why the undo must go row by row.
func (s *Store) restoreFile(ctx context.Context, ch *store.Change, rec *fileRecord) (done bool, why string, err error) {
	if rec == nil {
		return false, "the run recorded no byte copy of the database file (its backup came through SQLite's online backup API, or an older sessionfix made it)", nil
	}
	orig, bver, ok := rec.versions()
	if !ok {
		return false, "the run's record of the file header is unreadable", nil
	}
	if j, hot := HotJournal(s.path); hot {
		return false, "a crashed writer left a journal (" + j + ") that SQLite must roll back first", nil
	}
	if fi, err := os.Stat(s.path + "-wal"); err == nil && fi.Size() > 0 {
		return false, "its write-ahead log holds changes made since the run", nil
	}
	f, fi, err := fileio.OpenStore(s.path, store.FileID{})
	if err != nil {
		return false, "", fmt.Errorf("open %s: %w", s.path, err)
	}
	// What the file holds now: the run's "after" (XXH3-128) or already the original (its
	// SHA-256 with the two header bytes as the backup holds them is the backup's).
	after, err := fileio.Fingerprint(io.NewSectionReader(f, 0, fi.Size()))
	var now [2]byte
	if err == nil {
		_, err = f.ReadAt(now[:], 18)
	}
	var cur string
	if err == nil && fi.Size() == rec.Size && now == orig {
		h := sha256.New()
		_, err = io.Copy(h, io.MultiReader(io.NewSectionReader(f, 0, 18), bytes.NewReader(bver[:]), io.NewSectionReader(f, 20, fi.Size()-20)))
		cur = hex.EncodeToString(h.Sum(nil))
	}
	f.Close() // no SQLite connection of ours is open on the file yet: no lock of ours to drop
	switch {
	case err != nil:
		return false, "", fmt.Errorf("read %s: %w", s.path, err)
	case cur == ch.Before.SHA256:
		return true, "", nil // already the original, byte for byte
	case rec.After == nil:
		why := rec.NoAfter
		if why == "" {
			why = "the run did not record the file it left (it was stopped between its commit and its record)"
		}
		return false, why, nil
	case fi.Size() != rec.After.Size || after != rec.After.Fingerprint:
		return false, "the database changed since the run (an agent wrote to it), so its file is not the one the run left", nil
	}
	want := store.FileState{Size: fi.Size(), ModTime: fi.ModTime(), Fingerprint: after}
	err = fileio.RestoreWith(ctx, s.path, want, backupBytes(ch.Backup, rec.Size, ch.Before.SHA256, bver, orig), ch.Backup,
		store.FileState{Mode: rec.Mode, ModTime: rec.ModTime})
	var iu *store.InUseError
	var ce *fileio.CommittedError
	switch {
	case err == nil || errors.As(err, &ce):
		return true, "", err // the original bytes are in place (ce: something failed after)
	case ctx.Err() != nil:
		return true, "", err
	case errors.As(err, &iu):
		// Replacing the file under a running agent would send its next writes to the old,
		// unlinked inode; the rows can be put back beside it.
		return false, "its file could not be replaced (" + strings.TrimSuffix(iu.Reason, "; stop the agent first") + ")", nil
	}
	// Nothing was put in place (a temp file that could not be written, say): the rows can
	// still be put back through SQLite.
	return false, "its file could not be replaced (" + err.Error() + ")", nil
}

// backupBytes is the Transform that puts the original database file back: the backup (size
// bytes, whose SHA-256 must be sum, checked as they are copied) with bytes 18 and 19 given
// back their original values (bver → orig). The current content is read, not kept.
func backupBytes(backup string, size int64, sum string, bver, orig [2]byte) fileio.Transform {
	return func(dst io.Writer, src io.Reader) error {
		if _, err := io.Copy(io.Discard, src); err != nil {
			return err
		}
		f, _, err := fileio.OpenRegular(backup)
		if err != nil {
			return fmt.Errorf("open backup %s: %w", backup, err)
		}
		defer f.Close()
		h := sha256.New()
		head := make([]byte, 100)
		if _, err := io.ReadFull(f, head); err != nil {
			return fmt.Errorf("read backup %s: %w", backup, err)
		}
		h.Write(head)
		if head[18] != bver[0] || head[19] != bver[1] {
			return fmt.Errorf("backup %s does not hold the header the run recorded: not restored", backup)
		}
		head[18], head[19] = orig[0], orig[1]
		if _, err := dst.Write(head); err != nil {
			return err
		}
		n, err := io.Copy(io.MultiWriter(dst, h), f)
		if err != nil {
			return fmt.Errorf("restore from %s: %w", backup, err)
		}
		if n+int64(len(head)) != size || hex.EncodeToString(h.Sum(nil)) != sum {
			return fmt.Errorf("backup %s changed after undo checked it (%d bytes, or not the original's sha256): not restored", backup, n+int64(len(head)))
		}
		return nil
	}
}
