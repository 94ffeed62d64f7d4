package kilo

import (
	"context"
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/engine/sqlite"
)

// RefuseOldSchema is the profiles' sqlite.Profile.Refuse: a Kilo database whose schema is older
// than the release that reads it today is not rewritten, and says why. Kilo 7.0 kept drizzle's
// __drizzle_migrations table and had no event log; Kilo 7.7 opening such a database in place
// finds 3 drizzle rows, creates an empty "migration" table, applies nothing, and then fails on
// every command with "SQLiteError: no such column: name" (fixtures/kilo-real/README.md, step 2).
// Rewriting names there would not make it usable. A database of the current schema has the
// event table and a non-empty migration table; anything else with __drizzle_migrations, or
// without the event table, is refused. The reason names the release that wrote the sessions
// (session.version) and the way out: kilo export with that release, kilo import with the new.
func RefuseOldSchema(ctx context.Context, db *sqlite.DB) (string, error) {
	drizzle := db.Has("__drizzle_migrations", "hash")
	event := db.Has("event", "data")
	migrated := false
	if db.Has("migration", "id") {
		n, err := count(ctx, db, `SELECT count(*) FROM migration`)
		if err != nil {
			return "", err
		}
		migrated = n > 0
	}
	if event && (migrated || !drizzle) {
		return "", nil
	}
	var why []string
	if drizzle && !migrated {
		why = append(why, "drizzle's __drizzle_migrations and no applied migration table")
	}
	if !event {
		why = append(why, "no event table")
	}
	wrote := ""
	if db.Has("session", "version") {
		vs, err := versions(ctx, db)
		if err != nil {
			return "", err
		}
		if len(vs) > 0 {
			wrote = " written by Kilo " + strings.Join(vs, ", ")
		}
	}
	return fmt.Sprintf("a Kilo database of the 7.0 schema%s (%s): Kilo 7.7 cannot open it in place (every command fails with \"SQLiteError: no such column: name\"), so rewriting its names would not make it usable; export its sessions with the release that wrote it (kilo export), import them with the current one (kilo import), then fix the new database",
		wrote, strings.Join(why, "; ")), nil
}

func count(ctx context.Context, db *sqlite.DB, q string) (int64, error) {
	rows, err := db.Query(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", db.Path(), err)
	}
	defer rows.Close()
	var n int64
	if rows.Next() {
		if err := rows.Scan(&n); err != nil {
			return 0, fmt.Errorf("%s: %w", db.Path(), err)
		}
	}
	return n, rows.Err()
}

// versions are the distinct session.version values, sorted (at most 5 listed).
func versions(ctx context.Context, db *sqlite.DB) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT DISTINCT CAST(version AS TEXT) FROM session WHERE version IS NOT NULL ORDER BY 1 LIMIT 5`)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", db.Path(), err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("%s: %w", db.Path(), err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
