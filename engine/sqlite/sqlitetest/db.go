// Package sqlitetest builds, dumps and locks SQLite databases for tests, the demo and the
// benchmarks (CI has no sqlite3 shell): BuildFromSQL and InsertRows create databases from SQL
// text and generated rows, Dump and DumpSHA256 give a deterministic text of a database's logical
// content, HoldWriteLock and HoldExclusiveLock hold a lock as a running agent does. None of it
// is used by the product.
//
// It opens databases itself through the driver with the same URI filename as engine/sqlite (mode,
// _busy_timeout, _synchronous=FULL for writers), so it can check the product's writes without
// sharing its code.
package sqlitetest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/sessionfix/sessionfix/store"
)

type openMode string

const (
	modeRO     openMode = "ro"  // read-only; the file must exist
	modeRW     openMode = "rw"  // read-write; the file must exist
	modeCreate openMode = "rwc" // read-write, created when missing
)

// openDB opens a database handle with one connection: "file:<path>?mode=…&_busy_timeout=…";
// writers begin transactions with BEGIN IMMEDIATE (_txlock=immediate).
func openDB(path string, mode openMode, busy time.Duration) (*sqlx.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	q := fmt.Sprintf("file:%s?mode=%s&_busy_timeout=%d", r.Replace(filepath.ToSlash(abs)), mode, busy.Milliseconds())
	if mode != modeRO {
		q += "&_synchronous=FULL&_txlock=immediate"
	}
	db, err := sqlx.Open("sqlite3", q)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// beginWrite starts a write transaction on conn (opened modeRW or modeCreate: the driver sends
// BEGIN IMMEDIATE), waiting up to the busy timeout for the write lock; a lock held longer by
// another connection is an *store.InUseError.
func beginWrite(ctx context.Context, conn *sqlx.Conn, path string, busy time.Duration) (*sqlx.Tx, error) {
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		var se sqlite3.Error
		if errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked) {
			return nil, &store.InUseError{Path: path, Reason: fmt.Sprintf("its write lock is held by another connection; gave up after %s", busy)}
		}
		return nil, fmt.Errorf("begin write transaction on %s: %w", path, err)
	}
	return tx, nil
}

// rollback ends a transaction that was not committed (errors are moot then).
func rollback(conn *sqlx.Conn) {
	_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// tableInfo is what sqlite_schema, pragma_table_list and pragma_table_info say about a table.
type tableInfo struct {
	Name         string
	Columns      []columnInfo
	WithoutRowid bool
	Virtual      bool
}

type columnInfo struct {
	Name string `db:"name"`
	PK   int    `db:"pk"`
}

// primaryKey returns the primary-key columns in key order (nil when there is none).
func (t *tableInfo) primaryKey() []string {
	n := 0
	for _, c := range t.Columns {
		n = max(n, c.PK)
	}
	out := make([]string, n)
	for _, c := range t.Columns {
		if c.PK > 0 {
			out[c.PK-1] = c.Name
		}
	}
	return out
}

// readTables reads every table of the main database with its columns, by lower-case name.
func readTables(ctx context.Context, conn *sqlx.Conn) (map[string]*tableInfo, error) {
	var list []struct {
		Name string `db:"name"`
		SQL  string `db:"sql"`
	}
	if err := conn.SelectContext(ctx, &list,
		`SELECT name, coalesce(sql, '') AS sql FROM sqlite_schema WHERE type = 'table' ORDER BY rowid`); err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	var kinds []struct {
		Name string `db:"name"`
		WR   int    `db:"wr"`
	}
	if err := conn.SelectContext(ctx, &kinds, `SELECT name, wr FROM pragma_table_list WHERE schema = 'main'`); err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	wr := map[string]bool{}
	for _, k := range kinds {
		wr[k.Name] = k.WR != 0
	}
	out := map[string]*tableInfo{}
	for _, l := range list {
		t := &tableInfo{Name: l.Name, WithoutRowid: wr[l.Name],
			Virtual: strings.HasPrefix(strings.ToUpper(strings.TrimSpace(l.SQL)), "CREATE VIRTUAL")}
		if err := conn.SelectContext(ctx, &t.Columns, `SELECT name, pk FROM pragma_table_info(?) ORDER BY cid`, l.Name); err != nil {
			return nil, fmt.Errorf("read columns of %s: %w", l.Name, err)
		}
		out[strings.ToLower(l.Name)] = t
	}
	return out, nil
}
