package sqlitetest

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Query runs the SQL statements of script on the database at path through one read-write
// connection (ATTACH of other files, relative to the working directory, works as in the sqlite3
// shell) and returns the rows of the last statement that returns rows: its column names and
// each row's values as text (NULL as "NULL"). A statement not starting with SELECT, WITH or
// VALUES is executed, not queried. Statements are split at ";" ending a line; "--"
// comment lines are dropped.
func Query(ctx context.Context, path, script string) (columns []string, rows [][]string, err error) {
	db, err := openDB(path, modeRW, 5*time.Second)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer conn.Close()
	for _, stmt := range Statements(script) {
		verb := strings.ToUpper(strings.Fields(stmt)[0])
		if verb != "SELECT" && verb != "WITH" && verb != "VALUES" {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return nil, nil, fmt.Errorf("%s: %q: %w", path, stmt, err)
			}
			continue
		}
		r, err := conn.QueryContext(ctx, stmt)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %q: %w", path, stmt, err)
		}
		cols, err := r.Columns()
		if err != nil {
			r.Close()
			return nil, nil, err
		}
		if len(cols) == 0 {
			r.Close()
			continue
		}
		columns, rows = cols, nil
		for r.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := r.Scan(ptrs...); err != nil {
				r.Close()
				return nil, nil, err
			}
			row := make([]string, len(cols))
			for i, v := range vals {
				row[i] = "NULL"
				if v.Valid {
					row[i] = v.String
				}
			}
			rows = append(rows, row)
		}
		if err := r.Err(); err != nil {
			r.Close()
			return nil, nil, err
		}
		r.Close()
	}
	return columns, rows, nil
}

// Statements splits an SQL script into its statements: a ";" at the end of a line ends one;
// lines starting with "--" are dropped.
func Statements(script string) []string {
	var out []string
	var cur []string
	for _, line := range strings.Split(script, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		cur = append(cur, line)
		if strings.HasSuffix(t, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(strings.Join(cur, "\n")), ";"))
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, strings.TrimSpace(strings.Join(cur, "\n")))
	}
	return out
}
