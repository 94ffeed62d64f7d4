package sqlitetest

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/engine/sqlite"
)

// BuildFromSQL creates the database at path (it must not exist) by running SQL scripts, such as
// the sqlite3 shell's .dump output, in order; with wal the database is then switched to WAL mode,
// as the agents run it. Tests, the demo and the benchmark build their databases this way from
// text fixtures.
func BuildFromSQL(ctx context.Context, path string, wal bool, scripts ...io.Reader) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("build %s: it already exists", path)
	}
	db, err := openDB(path, modeCreate, sqlite.DefaultBusyTimeout)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return fmt.Errorf("build %s: %w", path, err)
	}
	defer conn.Close()
	texts := make([]string, len(scripts))
	for i, r := range scripts {
		b, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("build %s: read script %d: %w", path, i+1, err)
		}
		texts[i] = string(b)
	}
	if strings.Contains(strings.Join(texts, ""), "sqlite_sequence") {
		// A .dump of a database that has sqlite_sequence (an AUTOINCREMENT table, even a dropped
		// one) clears it; SQLite creates it only with such a table.
		if _, err := conn.ExecContext(ctx, "CREATE TABLE sessionfix_seq(id INTEGER PRIMARY KEY AUTOINCREMENT); DROP TABLE sessionfix_seq;"); err != nil {
			return fmt.Errorf("build %s: %w", path, err)
		}
	}
	for i, b := range texts {
		// go-sqlite3 runs every statement of a multi-statement string in turn.
		if _, err := conn.ExecContext(ctx, string(b)); err != nil {
			return fmt.Errorf("build %s: script %d: %w", path, i+1, err)
		}
	}
	if wal {
		var mode string
		if err := conn.GetContext(ctx, &mode, "PRAGMA journal_mode=WAL"); err != nil || !strings.EqualFold(mode, "wal") {
			return fmt.Errorf("build %s: switch to WAL: %v (mode %q)", path, err, mode)
		}
	}
	return nil
}

// RowSource produces rows for InsertRows: it calls emit once per row, with one value per column
// (int64, float64, string, []byte or nil).
type RowSource func(emit func(values ...any) error) error

// InsertRows inserts every row src produces into table (with the given columns) of the database
// at path, in one transaction through one prepared statement. The benchmark generator builds
// its million-row databases with it.
func InsertRows(ctx context.Context, path, table string, columns []string, src RowSource) error {
	db, err := openDB(path, modeRW, sqlite.DefaultBusyTimeout)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return fmt.Errorf("insert into %s: %w", path, err)
	}
	defer conn.Close()
	tx, err := beginWrite(ctx, conn, path, sqlite.DefaultBusyTimeout)
	if err != nil {
		return err
	}
	defer tx.Rollback() // nothing to undo once committed
	cols := make([]string, len(columns))
	for i, c := range columns {
		cols[i] = quoteIdent(c)
	}
	stmt, err := tx.PrepareContext(ctx, fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", quoteIdent(table),
		strings.Join(cols, ", "), strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",")))
	if err != nil {
		return fmt.Errorf("insert into %s.%s: %w", path, table, err)
	}
	defer stmt.Close()
	if err := src(func(values ...any) error {
		_, err := stmt.ExecContext(ctx, values...)
		return err
	}); err != nil {
		return fmt.Errorf("insert into %s.%s: %w", path, table, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("insert into %s.%s: %w", path, table, err)
	}
	return nil
}

// WriteLock is a held write lock on a database (see HoldWriteLock).
type WriteLock struct {
	release func() error
}

// Release rolls the transaction back and closes the connection.
func (l *WriteLock) Release() error { return l.release() }

// HoldWriteLock takes the write lock of the database at path (BEGIN IMMEDIATE), as a running
// agent's write transaction does, and holds it until Release. Tests and the demo use it to show
// the in-use refusal; it returns an *store.InUseError when another connection holds the lock
// longer than busy.
func HoldWriteLock(ctx context.Context, path string, busy time.Duration) (*WriteLock, error) {
	db, err := openDB(path, modeRW, busy)
	if err != nil {
		return nil, err
	}
	conn, err := db.Connx(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	tx, err := beginWrite(ctx, conn, path, busy)
	if err != nil {
		conn.Close()
		db.Close()
		return nil, err
	}
	return &WriteLock{release: func() error {
		tx.Rollback()
		conn.Close()
		return db.Close()
	}}, nil
}

// HoldExclusiveLock takes an EXCLUSIVE lock on the database at path, as an agent that opens its
// store with PRAGMA locking_mode=EXCLUSIVE and writes does: no other connection can read it
// (in WAL mode too) until Release. Tests use it for the in-use refusal of readers.
func HoldExclusiveLock(ctx context.Context, path string, busy time.Duration) (*WriteLock, error) {
	db, err := openDB(path, modeRW, busy)
	if err != nil {
		return nil, err
	}
	conn, err := db.Connx(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	for _, q := range []string{"PRAGMA locking_mode=EXCLUSIVE", "BEGIN EXCLUSIVE", "SELECT count(*) FROM sqlite_schema"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			conn.Close()
			db.Close()
			return nil, fmt.Errorf("lock %s: %s: %w", path, q, err)
		}
	}
	return &WriteLock{release: func() error {
		rollback(conn)
		conn.Close()
		return db.Close()
	}}, nil
}
