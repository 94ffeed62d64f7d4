package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/store"
)

// DefaultBusyTimeout is how long a write waits for another process's write lock before the store
// is refused as in use (--busy-timeout).
const DefaultBusyTimeout = 5 * time.Second

// Header is the first 16 bytes of every SQLite database file.
var Header = []byte("SQLite format 3\x00")

type openMode string

const (
	modeRO     openMode = "ro"  // read-only; the file must exist
	modeRW     openMode = "rw"  // read-write; the file must exist
	modeCreate openMode = "rwc" // read-write, created when missing
	// modeReadWAL reads through a read-write connection that writes nothing (query_only): see
	// readMode. The URI's mode is rw.
	modeReadWAL openMode = "read-wal"
	// modeReadImmutable reads a WAL database on a read-only file system (mode=ro&immutable=1):
	// see readMode.
	modeReadImmutable openMode = "read-immutable"
)

// readMode picks how a read-only use of the database at path opens it: modeRO, or modeReadWAL
// for a WAL database (header bytes 18-19 are 2) that has none of -wal, -shm, -journal beside
// it (beside the file a symbolic link names: SQLite keeps them there). SQLite creates the -wal and -shm on the first read of a WAL
// database, and only the last connection to close removes them, after a checkpoint, which a
// read-only connection may not run: a mode=ro scan left two files in the user's directory.
// Through modeReadWAL SQLite's own close does it, under its EXCLUSIVE lock of the database (so
// never while another process has it open, whose -wal and -shm stay) and only after every
// committed frame is in the main file. A -wal, -shm or journal that exists before is never
// touched: modeRO, as before (the user's or a running agent's). A file or directory this
// process may not write leaves the files as mode=ro does (SQLite opens the file read-only). On
// a file system mounted read-only, where SQLite can create neither file and would not open the
// database at all, such a database is read immutable (modeReadImmutable).
//
// readMode opens the file (to read its header) and closes it again: closing any descriptor of a
// file drops every POSIX lock this process holds on it, SQLite's own included
// (https://sqlite.org/howtocorrupt.html, 2.2.1). So the -wal, -shm and -journal are looked at
// first (a database this process has open in WAL mode has its -wal and -shm), and a database
// this process may hold locks on is opened with openHeldDB, which does not probe.
func readMode(path string, f *os.File) openMode {
	for _, ext := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Lstat(path + ext); !errors.Is(err, fs.ErrNotExist) {
			return modeRO
		}
	}
	var hdr [20]byte
	_, err := f.ReadAt(hdr[:], 0)
	if err != nil || !bytes.Equal(hdr[:16], Header) || hdr[18] != 2 || hdr[19] != 2 {
		return modeRO
	}
	if onReadOnlyFS(filepath.Dir(path)) {
		// SQLite can create no -wal or -shm there, and without them it cannot open a WAL
		// database at all ("unable to open database file"). With no -wal there are no
		// committed frames outside the main file, and nothing writes through a read-only
		// mount: the main file is the whole database, read as immutable (no locks).
		return modeReadImmutable
	}
	return modeReadWAL
}

// dsn builds a go-sqlite3 URI filename: "file:<path>?mode=…&_busy_timeout=…". Writers sync fully
// (a change reported as done is on disk, also in WAL mode) and begin every transaction with
// BEGIN IMMEDIATE (_txlock=immediate): BeginTxx takes the write lock at once.
func dsn(path string, mode openMode, busy time.Duration) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	uri := mode
	switch mode {
	case modeReadWAL:
		uri = modeRW
	case modeReadImmutable:
		uri = modeRO + "&immutable=1"
	}
	q := fmt.Sprintf("file:%s?mode=%s&_busy_timeout=%d", r.Replace(filepath.ToSlash(abs)), uri, busy.Milliseconds())
	switch mode {
	case modeRO, modeReadWAL, modeReadImmutable:
		// A read-only handle is used by one goroutine at a time (one connection, taken with
		// Connx): no per-call connection mutex (SQLITE_OPEN_NOMUTEX; sqlite3_interrupt, which the
		// driver calls from another goroutine on cancel, takes none either).
		q += "&_mutex=no"
		if mode == modeReadWAL {
			q += "&_query_only=1"
		}
	default:
		q += "&_synchronous=FULL&_txlock=immediate"
	}
	return q, nil
}

// handle is a database handle with one connection (every use takes it with Connx), pinned to
// one file: its connection opens that file or fails (pinnedOpen).
type handle struct {
	*sqlx.DB
	path string
	pin  store.FileID
}

// openDB opens a database handle for the file at path (the file pin names, when known: the one
// discovery found there). The file is first opened as every store is (fileio.OpenStore: no
// symbolic link followed, no FIFO waited on, a regular file, pin's device and inode), which pins
// the handle to what was opened: the connection SQLite opens later must be that file (issue 30
// finding 5). A modeRO open reads the header there (readMode). The descriptor is closed before
// SQLite opens the file (closing one later would drop SQLite's locks, see readMode).
func openDB(path string, mode openMode, busy time.Duration, pin store.FileID) (*handle, error) {
	if guardErr != nil {
		return nil, fmt.Errorf("open %s: %w", path, guardErr)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// The path SQLite gets has no link in it: SQLite resolves links itself, by path, after
	// the check; the file the links led to was checked (as root: their owners) and is pinned.
	real, err := owner.Resolve(abs)
	if err != nil {
		real = abs
	}
	f, fi, err := fileio.OpenStore(abs, pin)
	if err != nil {
		if errors.Is(err, fileio.ErrNotTheFile) {
			return nil, err
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if mode == modeRO {
		mode = readMode(real, f)
	}
	f.Close()
	return openHeldDB(real, mode, busy, fileio.IDOf(fi))
}

// openHeldDB is openDB without opening the file first: for a database this process holds
// SQLite locks on (the online backup's source, opened inside the write transaction), where a
// descriptor opened and closed beside SQLite's would give those locks away. pin must be known
// (the file the transaction's own connection was pinned to).
func openHeldDB(path string, mode openMode, busy time.Duration, pin store.FileID) (*handle, error) {
	if guardErr != nil {
		return nil, fmt.Errorf("open %s: %w", path, guardErr)
	}
	d, err := dsn(path, mode, busy)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db, err := sqlx.Open("sqlite3", d)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return &handle{DB: db, path: path, pin: pin}, nil
}

// Connx is the handle's connection, opened pinned (pinnedOpen): a database file SQLite finds
// at the path that is not the pinned file (swapped since it was checked), or a FIFO, device or
// shared journal it would open, fails the connection with a *fileio.NotTheFileError.
func (h *handle) Connx(ctx context.Context) (*sqlx.Conn, error) {
	var conn *sqlx.Conn
	refused, got, mode, err := pinnedOpen(h.pin, func() error {
		var err error
		conn, err = h.DB.Connx(ctx)
		return err
	})
	if refused == notRefused {
		return conn, err
	}
	if conn != nil {
		conn.Close()
	}
	var reason string
	switch refused {
	case refusedNotRegular:
		reason = "SQLite found a file that is not a regular one (" + mode.Type().String() + ") where it opened the database or its journal"
	case refusedSharedJournal:
		reason = "its journal, WAL or shared-memory file has other hard links (another file's content)"
	default:
		reason = fmt.Sprintf("SQLite found another file than the one checked (device %d inode %d, checked as device %d inode %d): replaced since, or reached through a directory swapped for a link", got.Dev, got.Ino, h.pin.Dev, h.pin.Ino)
	}
	return nil, &fileio.NotTheFileError{Path: h.path, Reason: reason}
}

// refusal is why SQLite's open guard refused a file (pinnedOpen).
type refusal int

const (
	notRefused           refusal = iota
	refusedNotRegular            // a FIFO, device or socket
	refusedNotPinned             // another file than the one checked
	refusedSharedJournal         // a -journal, -wal or -shm with other hard links
)

// isBusy reports whether err is SQLITE_BUSY or SQLITE_LOCKED (another connection holds a lock).
func isBusy(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked
	}
	return false
}

// inUse wraps a busy error as the store's in-use refusal.
func inUse(path string, busy time.Duration) error {
	return &store.InUseError{Path: path, Reason: fmt.Sprintf("its write lock is held by another connection; gave up after %s", busy)}
}

// beginWrite starts the write transaction on conn (opened modeRW: the driver sends BEGIN
// IMMEDIATE), taking the write lock and waiting up to the busy timeout for it; a lock held longer
// by another connection is the store's in-use refusal (an *store.InUseError). The caller defers
// tx.Rollback (a no-op once committed) and runs every statement through tx.
func beginWrite(ctx context.Context, conn *sqlx.Conn, path string, busy time.Duration) (*sqlx.Tx, error) {
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		if isBusy(err) {
			return nil, inUse(path, busy)
		}
		return nil, fmt.Errorf("begin write transaction on %s: %w", path, err)
	}
	return tx, nil
}

// commit commits tx; a COMMIT that stays busy (a rollback-journal reader keeps its lock past the
// busy timeout) is the in-use refusal, and the driver has then rolled the transaction back.
func commit(tx *sqlx.Tx, path string, busy time.Duration) error {
	if err := tx.Commit(); err != nil {
		if isBusy(err) {
			return inUse(path, busy)
		}
		return fmt.Errorf("commit %s: %w", path, err)
	}
	return nil
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// targetGuard keeps a write to a set of table.column targets from changing anything else
// through the schema's UPDATE triggers: an authorizer answers SQLITE_IGNORE to every UPDATE of
// another column (the trigger's assignment is dropped, the statement goes on), and records what
// it kept unchanged. INSERT and DELETE in triggers (full-text index upkeep) still run.
type targetGuard struct {
	mu      sync.Mutex
	targets map[string]bool
	kept    map[string]bool
}

func newTargetGuard(targets []string) *targetGuard {
	g := &targetGuard{targets: map[string]bool{}, kept: map[string]bool{}}
	for _, t := range targets {
		g.targets[strings.ToLower(t)] = true
	}
	return g
}

// add makes table.column a target (before a statement writing it is prepared: the authorizer
// runs when a statement is compiled); it reports whether it was new.
func (g *targetGuard) add(target string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := strings.ToLower(target)
	if g.targets[k] {
		return false
	}
	g.targets[k] = true
	return true
}

func (g *targetGuard) install(ctx context.Context, conn *sqlx.Conn) error {
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("unexpected SQLite driver connection %T", dc)
		}
		c.RegisterAuthorizer(func(op int, table, column, _ string) int {
			if op != sqlite3.SQLITE_UPDATE {
				return sqlite3.SQLITE_OK
			}
			key := strings.ToLower(table + "." + column)
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.targets[key] {
				return sqlite3.SQLITE_OK
			}
			g.kept[table+"."+column] = true
			return sqlite3.SQLITE_IGNORE
		})
		return nil
	})
}

// warnings says which columns triggers would have changed.
func (g *targetGuard) warnings() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for k := range g.kept {
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil
	}
	sort.Strings(out)
	return []string{fmt.Sprintf("kept %s unchanged: an UPDATE trigger of the store's schema would have changed it along with the names", strings.Join(out, ", "))}
}

// integrityCheck runs PRAGMA integrity_check on conn (a connection, or the write transaction
// whose changes it checks) and returns its first line ("ok" when sound).
func integrityCheck(ctx context.Context, conn interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}) (string, error) {
	return runCheck(ctx, conn, "integrity_check")
}

// runCheck runs PRAGMA check (integrity_check or quick_check) and returns its first lines.
func runCheck(ctx context.Context, conn interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, check string) (string, error) {
	rows, err := conn.QueryContext(ctx, "PRAGMA "+check)
	if err != nil {
		return "", fmt.Errorf("%s: %w", check, err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", fmt.Errorf("%s: %w", check, err)
		}
		if len(lines) < 5 {
			lines = append(lines, s)
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("%s: %w", check, err)
	}
	return strings.Join(lines, "; "), nil
}

// IntegrityCheck opens the database at path read-only and returns what PRAGMA integrity_check
// says ("ok" for a sound database; otherwise its first messages joined by "; ").
func IntegrityCheck(ctx context.Context, path string) (string, error) {
	db, err := openDB(path, modeRO, DefaultBusyTimeout, store.FileID{})
	if err != nil {
		return "", err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", path, err)
	}
	defer conn.Close()
	return integrityCheck(ctx, conn)
}

// journalMode returns the database's journal mode ("wal", "delete", …).
func journalMode(ctx context.Context, conn *sqlx.Conn) (string, error) {
	var m string
	if err := conn.GetContext(ctx, &m, "PRAGMA journal_mode"); err != nil {
		return "", fmt.Errorf("read journal mode: %w", err)
	}
	return strings.ToLower(m), nil
}

// rollback ends a transaction that was not committed (errors are moot then).
func rollback(conn *sqlx.Conn) {
	_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
}

// preparer is a connection or a transaction (*sqlx.Conn, *sqlx.Tx).
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// stmtCache prepares each distinct statement once on a connection or transaction (a rewrite of
// a hundred thousand rows runs two statements a hundred thousand times).
type stmtCache struct {
	conn preparer
	m    map[string]*sql.Stmt
}

func newStmtCache(conn preparer) *stmtCache {
	return &stmtCache{conn: conn, m: map[string]*sql.Stmt{}}
}

func (c *stmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.m[query]; ok {
		return st, nil
	}
	st, err := c.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.m[query] = st
	return st, nil
}

// QueryContext runs a cached query.
func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// ExecContext runs a cached statement.
func (c *stmtCache) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (c *stmtCache) close() {
	for _, st := range c.m {
		st.Close()
	}
}

// DiskFullError is a rewrite that failed because SQLite could not write: the disk holding the
// database, its rollback journal or WAL (the same directory), or SQLite's temp directory is full
// (SQLITE_FULL, "database or disk is full"). SQLite reports it from whichever statement had to
// write a page, a SELECT too (a read that spills the write transaction's dirty pages to the
// journal): review of issue 30 saw "failed: read part id=… of …: database or disk is full" on a
// full disk, which read as a damaged row. The transaction was rolled back: nothing was changed.
type DiskFullError struct {
	Path string
	Err  error // the statement's error, wrapping the sqlite3.Error
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("no space left to write %s: the disk holding it (or its -journal / -wal, or SQLite's temp directory) is full; the write transaction was rolled back, nothing was changed (SQLite: %v)",
		e.Path, e.Err)
}

// Unwrap returns Err.
func (e *DiskFullError) Unwrap() error { return e.Err }

// diskFull reports whether err is SQLite's SQLITE_FULL (a write of the database, its journal
// or a temp file found the disk full). A full state directory (the backup, the change record)
// is not: those errors name their own file.
func diskFull(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrFull
}
