package sqlite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/jmoiron/sqlx"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

// checkpointBeforeWrite folds a WAL database's log into its main file before the write
// transaction begins (PRAGMA wal_checkpoint(TRUNCATE); a no-op for a rollback-journal
// database). It never waits for a lock (busy timeout 0 for the call): a reader or writer in the
// way leaves the log as it is and only costs the faster backup (see mainFileIsDatabase), and a
// locked store is still refused by BEGIN IMMEDIATE after one busy timeout. Errors are moot: the
// backup then takes the online backup API.
func checkpointBeforeWrite(ctx context.Context, conn *sqlx.Conn, busy time.Duration) {
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		return
	}
	_, _ = conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	_, _ = conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", busy.Milliseconds()))
}

// mainFileIsDatabase returns the main file SQLite opened for conn (PRAGMA database_list: the
// target when the store's path is a symbolic link) and reports whether, inside the write
// transaction on conn, that file holds the whole database: a rollback-journal database (no
// other connection can change the file while we hold the write lock, and a hot journal was
// rolled back when the transaction began), or a WAL database whose log, beside that file, is
// empty or absent (checkpointed and truncated; the write lock keeps anyone from appending
// frames until we commit). path+"-wal" would name no file through a link, and a log full of
// committed frames would go unseen. Any doubt answers false (the online backup).
//
// frozen reports the WAL case: there the main file also stays as it is until we commit,
// whatever the transaction writes — in WAL mode SQLite writes changed pages (a spill of the
// page cache included) to the log only, and the main file only in a checkpoint, which copies
// committed frames alone: the log held none when the lock was taken, and only the lock holder
// can add any. So the copy may run while the transaction writes (Apply), and must be complete
// before it commits. A rollback-journal transaction writes changed pages into the main file
// whenever its cache spills (the journal keeps the old ones): frozen is false there.
func mainFileIsDatabase(ctx context.Context, conn interface {
	GetContext(ctx context.Context, dest any, query string, args ...any) error
}) (file string, ok, frozen bool) {
	var m string
	if err := conn.GetContext(ctx, &m, "PRAGMA journal_mode"); err != nil {
		return "", false, false
	}
	if err := conn.GetContext(ctx, &file, "SELECT file FROM pragma_database_list WHERE name = 'main'"); err != nil || file == "" {
		return "", false, false
	}
	switch m {
	case "delete", "truncate", "persist":
		return file, true, false
	case "wal":
		fi, err := os.Stat(file + "-wal")
		ok := os.IsNotExist(err) || err == nil && fi.Size() == 0
		return file, ok, ok
	}
	return "", false, false
}

// backupWriteback is how many bytes of a buffered backup copy are handed to the disk at once.
const backupWriteback = 8 << 20

// backupChunk is how many bytes copyBackup reads, hashes and writes at a time (a variable for
// tests); directAlign is what a direct write's buffer address, length and file offset must be
// a multiple of (the logical block size of every common device divides it); directWriters is
// how many direct writes a copy keeps in flight (the disk takes two at once faster than one
// after the other: 140 MiB in 0.29 s instead of 0.46 s on the 2-core VM).
var backupChunk = 2 << 20

const (
	directAlign   = 4096
	directWriters = 2
)

// copyBackup copies the database file open as in (just opened: read from its offset 0), which must hold the
// whole database and be kept from changing by the caller's write lock (mainFileIsDatabase), to
// the new file dst (created exclusively, mode 0600) in one pass, and returns the SHA-256 of
// what it wrote. in stays open: the caller closes it only once its SQLite connections to the
// file are closed (openMainFile). Bytes 18 and
// 19 of the header (the file format's write and read versions, 2 for WAL) are set to 1, which
// is what PRAGMA journal_mode=DELETE writes: dst is a self-contained rollback-journal
// database. The pages are the ones the online backup API would copy, byte for byte. dst is
// synced, and its directory.
//
// The copy reads and hashes one chunk (backupChunk bytes) while the ones before it are being
// written (writer goroutines, each chunk written at its own offset). With direct (Linux, where
// the file system takes O_DIRECT: setDirect) the chunks go to the disk without the page cache,
// directWriters at a time: a copy that runs beside the transaction's own work (Apply, WAL mode)
// then costs no page-cache pages (their allocation, the copy into them and their writeback were
// most of its CPU time: 0.51 s of CPU for 140 MiB on the 2-core VM, 0.17 s without them), and
// the final fsync has little left but the device's cache. A tail that is not a whole number of
// directAlign blocks, or a direct write the file system refuses (EINVAL), is written through
// the page cache. Without direct one writer writes through the page cache, handing what it
// wrote to the disk every backupWriteback bytes (fileio.StartWriteback) so the fsync waits for
// little.
func copyBackup(ctx context.Context, in *os.File, dst string, direct bool) (string, error) {
	src := in.Name()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", fmt.Errorf("create backup directory: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("create backup of %s: %w", src, err)
	}
	w := &chunkWriter{out: out}
	writers := 1
	if direct && setDirect(out) {
		w.direct.Store(true)
		writers = directWriters
	} else {
		w.writeback = true
	}
	// Each writer writes the chunks it is given and hands their buffers back; after an error
	// nothing more is written (w.err keeps the first).
	type chunk struct {
		b   []byte
		off int64
	}
	todo := make(chan chunk)
	free := make(chan []byte, writers+1)
	for range writers + 1 {
		free <- alignedBuf(backupChunk)
	}
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range todo {
				w.write(c.b, c.off)
				free <- c.b[:cap(c.b)]
			}
		}()
	}
	done := false
	finish := func() error {
		if !done {
			done = true
			close(todo)
			wg.Wait()
		}
		return w.failed()
	}
	fail := func(err error) (string, error) {
		finish()
		out.Close()
		os.Remove(dst)
		return "", fmt.Errorf("back up %s: %w", src, err)
	}
	h := sha256.New()
	var off int64
	var tail []byte // the end of the file that is not a whole number of directAlign blocks
	for first := true; ; first = false {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if err := w.failed(); err != nil {
			return fail(err)
		}
		b := <-free
		n, err := io.ReadFull(in, b) // in was just opened: from offset 0
		last := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !last {
			return fail(err)
		}
		if first {
			if n < 100 || !bytes.HasPrefix(b, Header) {
				return fail(fmt.Errorf("not an SQLite database file (%d bytes)", n))
			}
			if b[18] == 2 {
				b[18] = 1
			}
			if b[19] == 2 {
				b[19] = 1
			}
		}
		h.Write(b[:n])
		if k := n % directAlign; last && k != 0 {
			tail = bytes.Clone(b[n-k : n])
			n -= k
		}
		if n > 0 {
			todo <- chunk{b[:n], off}
			off += int64(n)
		} else {
			free <- b
		}
		if last {
			break
		}
	}
	if err := finish(); err != nil {
		return fail(err)
	}
	if tail != nil {
		if w.direct.Load() && !clearDirect(out) {
			return fail(fmt.Errorf("write %s: cannot turn direct I/O off", dst))
		}
		if _, err := out.WriteAt(tail, off); err != nil {
			return fail(err)
		}
	}
	if err := out.Sync(); err != nil {
		return fail(err)
	}
	if err := out.Close(); err != nil {
		os.Remove(dst)
		return "", fmt.Errorf("back up %s: %w", src, err)
	}
	if err := fileio.SyncDir(filepath.Dir(dst)); err != nil {
		os.Remove(dst)
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// chunkWriter writes the chunks of one copyBackup, from one goroutine or (direct) several.
type chunkWriter struct {
	out    *os.File
	direct atomic.Bool // O_DIRECT is on for out
	mu     sync.Mutex
	err    error // the first write error
	// writeback: without direct from the start (one writer, chunks in order), what was written
	// is handed to the disk as it goes; written and flushed count its bytes.
	writeback        bool
	written, flushed int64
}

func (w *chunkWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// write writes b at off, unless an earlier write failed. A direct write the file system
// refuses (EINVAL) turns direct I/O off for the rest of the copy and is written through the
// page cache.
func (w *chunkWriter) write(b []byte, off int64) {
	if w.failed() != nil {
		return
	}
	direct := w.direct.Load()
	n, err := w.out.WriteAt(b, off)
	if direct && errors.Is(err, syscall.EINVAL) {
		// Under mu: the other writer's fallback waits until the flag is off.
		w.mu.Lock()
		ok := !w.direct.Load() || clearDirect(w.out)
		w.direct.Store(false)
		w.mu.Unlock()
		if ok {
			_, err = w.out.WriteAt(b[n:], off+int64(n))
		} else {
			err = fmt.Errorf("write %s: cannot turn direct I/O off: %w", w.out.Name(), err)
		}
	}
	if err != nil {
		w.mu.Lock()
		if w.err == nil {
			w.err = err
		}
		w.mu.Unlock()
		return
	}
	if w.writeback {
		// The disk writes while the rest is copied: the fsync at the end then waits for little.
		if w.written += int64(len(b)); w.written-w.flushed >= backupWriteback {
			fileio.StartWriteback(w.out, w.flushed, w.written-w.flushed)
			w.flushed = w.written
		}
	}
}

// alignedBuf returns n bytes whose address is a multiple of directAlign.
func alignedBuf(n int) []byte {
	b := make([]byte, n+directAlign)
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) & (directAlign - 1))
	if off != 0 {
		off = directAlign - off
	}
	return b[off : off+n : off+n]
}

// openMainFile opens the database's main file for copyBackup, for the caller to close only after
// every SQLite connection of this process to that file is closed: a POSIX process that closes
// any descriptor of a file loses every fcntl lock it holds on it, SQLite's included
// (https://sqlite.org/howtocorrupt.html, section 2.2.1). Closed inside the write transaction, the
// copy's descriptor gave the database's locks away: another process could then find a
// rollback-journal database's journal hot and roll our transaction back, or write in the middle
// of it, or take a WAL database out of WAL mode and write to it (rows our COMMIT then lost).
//
// The file is opened as every store is and must be the one the connection was pinned to (pin:
// fileio.OpenStore), or the backup would copy another file. A descriptor of another file
// refused there is closed: that drops no lock of ours (locks belong to a file, not a name).
func openMainFile(file string, pin store.FileID) (*os.File, error) {
	f, _, err := fileio.OpenStore(file, pin)
	if err != nil {
		return nil, fmt.Errorf("back up %s: %w", file, err)
	}
	return f, nil
}

// writeCheck picks the check that must pass before a rewrite of the targets ("table.column")
// commits. PRAGMA integrity_check is PRAGMA quick_check (every page, every b-tree, cell
// formats, the freelist, NOT NULL and CHECK constraints) plus two things: each index's entries
// match its table's rows, and UNIQUE indexes hold. A rewrite UPDATEs only the target column of
// existing rows (same rowid, same other columns), and SQLite then leaves every index that
// does not involve that column untouched: when no index of a target table names the column,
// none is an expression or partial index (either may read it), and the table has no trigger
// (a trigger may write other tables and their indexes), the index contents after the change
// are those before it, so the two extra checks can find nothing the change did and
// quick_check says all the full check would about it — in a fraction of the time (it skips
// an index lookup per row per index). Otherwise, and whenever the schema cannot be read, the
// full integrity_check.
func writeCheck(ctx context.Context, conn interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, targets []string) string {
	const full = "integrity_check"
	for _, t := range targets {
		i := strings.LastIndexByte(t, '.')
		if i < 0 {
			return full
		}
		table, col := t[:i], t[i+1:]
		n, err := count(ctx, conn, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE", table)
		if err != nil || n > 0 {
			return full
		}
		// An index involving the column, an expression (cid -2) or a partial index.
		n, err = count(ctx, conn, `SELECT count(*) FROM pragma_index_list(?) AS l, pragma_index_xinfo(l.name) AS x
			WHERE l.partial OR (x.key AND (x.cid = -2 OR x.name = ? COLLATE NOCASE))`, table, col)
		if err != nil || n > 0 {
			return full
		}
	}
	return "quick_check"
}

func count(ctx context.Context, conn interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, query string, args ...any) (int64, error) {
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var n int64
	if rows.Next() {
		if err := rows.Scan(&n); err != nil {
			return 0, err
		}
	}
	return n, rows.Err()
}
