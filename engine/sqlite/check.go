package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/sessionfix/sessionfix/store"
)

// CheckFunc is a profile's consistency check (Profile.Check): it runs after the profile's tables
// are read, in the same read-only connection (and read transaction), and adds what it finds
// to snap (Records, Problems through DB.Problem). An error fails the scan.
type CheckFunc func(ctx context.Context, db *DB, snap *store.Snapshot) error

// DB is the read-only view of a database a CheckFunc or Read gets: its path, its schema and
// plain queries. It is valid only during the call.
type DB struct {
	path string
	conn interface {
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	}
	sch *schema
	r   *reader // nil outside a Scan: Problem then only appends
}

// Path is the database file.
func (d *DB) Path() string { return d.path }

// Has reports whether the table has the column (names compared as SQLite does, ignoring case).
func (d *DB) Has(table, column string) bool { return d.sch.has(table, column) }

// Query runs a read-only query. The caller closes the rows.
func (d *DB) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return d.conn.QueryContext(ctx, query, args...)
}

// Problem reports a problem of the scan; problems of one kind (a short phrase such as "missing
// rollout files") beyond the first 20 are counted in one summary warning instead.
func (d *DB) Problem(snap *store.Snapshot, kind string, sev store.Severity, loc store.Loc, reason string) {
	if d.r != nil {
		d.r.problem(kind, sev, loc, reason)
		return
	}
	snap.Problems = append(snap.Problems, store.Problem{Loc: loc, Severity: sev, Reason: reason})
}

// RowLabel renders a row the way reports name it (`threads id=019…`): table, then each key
// column with its value.
func RowLabel(table string, cols []string, keys []any) string { return rowLabel(table, cols, keys) }

// Read opens the database at path read-only (waiting opt.BusyTimeout for a lock) and calls fn
// with it; for reads outside a Scan (an agent's own tables).
func Read(ctx context.Context, path string, opt Options, fn func(*DB) error) error {
	db, err := openDB(path, modeRO, opt.busy(), opt.Pin)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer conn.Close()
	sch, err := readSchema(ctx, conn)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return fn(&DB{path: path, conn: conn, sch: sch})
}
