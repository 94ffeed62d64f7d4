package sqlite

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/jmoiron/sqlx"
)

// tableInfo is what PRAGMA table_info and pragma_table_list say about one table.
type tableInfo struct {
	Name         string
	Columns      []columnInfo
	WithoutRowid bool
	Virtual      bool
}

type columnInfo struct {
	Name string `db:"name"`
	Type string `db:"type"`
	PK   int    `db:"pk"`
}

// column returns the column named name (case-insensitive, as SQLite resolves names).
func (t *tableInfo) column(name string) (columnInfo, bool) {
	for _, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return c, true
		}
	}
	return columnInfo{}, false
}

// primaryKey returns the primary-key columns in key order (nil when there is none).
func (t *tableInfo) primaryKey() []string {
	var pk []columnInfo
	for _, c := range t.Columns {
		if c.PK > 0 {
			pk = append(pk, c)
		}
	}
	sort.Slice(pk, func(i, j int) bool { return pk[i].PK < pk[j].PK })
	out := make([]string, len(pk))
	for i, c := range pk {
		out[i] = c.Name
	}
	return out
}

// schema is the set of tables of the main database.
type schema struct {
	tables map[string]*tableInfo // by lower-case name
	names  []string              // in sqlite_schema order
}

func (s *schema) table(name string) *tableInfo { return s.tables[strings.ToLower(name)] }

// has reports whether table.column exists.
func (s *schema) has(table, column string) bool {
	t := s.table(table)
	if t == nil {
		return false
	}
	_, ok := t.column(column)
	return ok
}

// readSchema reads every table of the main database and its columns.
func readSchema(ctx context.Context, conn *sqlx.Conn) (*schema, error) {
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
	s := &schema{tables: map[string]*tableInfo{}}
	for _, l := range list {
		t := &tableInfo{Name: l.Name, WithoutRowid: wr[l.Name],
			Virtual: strings.HasPrefix(strings.ToUpper(strings.TrimSpace(l.SQL)), "CREATE VIRTUAL")}
		if err := conn.SelectContext(ctx, &t.Columns, `SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid`, l.Name); err != nil {
			if !t.Virtual || !strings.Contains(err.Error(), "no such module") {
				return nil, fmt.Errorf("read columns of %s: %w", l.Name, err)
			}
			// A virtual table of a module this build lacks (an agent's FTS5 search index):
			// listed without columns, so no profile takes it for one of its tables and the
			// database is still told apart by the others (or is no store).
			t.Columns = nil
		}
		s.tables[strings.ToLower(l.Name)] = t
		s.names = append(s.names, l.Name)
	}
	return s, nil
}

// detectProfile returns the first candidate whose detect pairs all exist in s and that takes
// the file's name (Profile.Files), or nil.
func detectProfile(file string, s *schema, candidates ...*Profile) *Profile {
	for _, p := range candidates {
		if p == nil || !p.takesFile(file) {
			continue
		}
		ok := true
		for _, d := range p.detectPairs() {
			if !s.has(d[0], d[1]) {
				ok = false
				break
			}
		}
		if ok {
			return p
		}
	}
	return nil
}
