package sqlitetest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/sessionfix/sessionfix/engine/sqlite"
)

// Dump writes a deterministic SQL text of the whole main database to w, in the shape of the
// sqlite3 shell's .dump: the CREATE statement of every table followed by one INSERT per row in
// rowid (or primary key) order, then sqlite_sequence, then indexes, triggers and views in schema
// order. Values are written exactly: integers and reals in their shortest round-trip form, text
// quoted, blobs as X'…'. Two databases with the same content (whatever their pages, journal mode
// or WAL) dump the same bytes, so a dump's SHA-256 compares logical content. Virtual tables are
// written as their CREATE statement (their rows live in shadow tables, which are dumped).
func Dump(ctx context.Context, path string, w io.Writer) error {
	db, err := openDB(path, modeRO, sqlite.DefaultBusyTimeout)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("dump %s: %w", path, err)
	}
	defer rollback(conn)
	tables, err := readTables(ctx, conn)
	if err != nil {
		return fmt.Errorf("dump %s: %w", path, err)
	}
	var objs []struct {
		Type string `db:"type"`
		Name string `db:"name"`
		SQL  string `db:"sql"`
	}
	if err := conn.SelectContext(ctx, &objs, `SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY rowid`); err != nil {
		return fmt.Errorf("dump %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	fmt.Fprintln(bw, "PRAGMA foreign_keys=OFF;")
	fmt.Fprintln(bw, "BEGIN TRANSACTION;")
	seq := false
	for _, o := range objs {
		if o.Type != "table" {
			continue
		}
		if o.Name == "sqlite_sequence" {
			seq = true
			continue
		}
		if strings.HasPrefix(o.Name, "sqlite_") {
			continue
		}
		fmt.Fprintf(bw, "%s;\n", o.SQL)
		t := tables[strings.ToLower(o.Name)]
		if t == nil || t.Virtual {
			continue
		}
		if err := dumpRows(ctx, conn, bw, t); err != nil {
			return fmt.Errorf("dump %s: %w", path, err)
		}
	}
	if seq {
		fmt.Fprintln(bw, "DELETE FROM sqlite_sequence;")
		if t := tables["sqlite_sequence"]; t != nil {
			if err := dumpRows(ctx, conn, bw, t); err != nil {
				return fmt.Errorf("dump %s: %w", path, err)
			}
		}
	}
	for _, o := range objs {
		if o.Type != "table" {
			fmt.Fprintf(bw, "%s;\n", o.SQL)
		}
	}
	fmt.Fprintln(bw, "COMMIT;")
	return bw.Flush()
}

func dumpRows(ctx context.Context, conn *sqlx.Conn, w *bufio.Writer, t *tableInfo) error {
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = "+" + quoteIdent(c.Name)
	}
	order := "rowid"
	if t.WithoutRowid {
		pk := t.primaryKey()
		for i := range pk {
			pk[i] = quoteIdent(pk[i])
		}
		order = strings.Join(pk, ", ")
	}
	rows, err := conn.QueryContext(ctx, fmt.Sprintf("SELECT %s FROM %s ORDER BY %s", strings.Join(cols, ", "), quoteIdent(t.Name), order))
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	name := t.Name
	if !isPlainIdent(name) {
		name = quoteIdent(name)
	}
	var buf []byte
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		buf = append(buf[:0], "INSERT INTO "...)
		buf = append(buf, name...)
		buf = append(buf, " VALUES("...)
		for i, v := range vals {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendLiteral(buf, v)
		}
		buf = append(buf, ");\n"...)
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return rows.Err()
}

// appendLiteral writes v as an SQL literal.
func appendLiteral(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "NULL"...)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEIN") {
			s += ".0"
		}
		return append(b, s...)
	case string:
		// Line breaks and NULs are written as char(n) so that every row is one line.
		b = append(b, '\'')
		for i := 0; i < len(x); i++ {
			switch c := x[i]; c {
			case '\'':
				b = append(b, "''"...)
			case '\n', '\r', 0:
				b = fmt.Appendf(b, "'||char(%d)||'", c)
			default:
				b = append(b, c)
			}
		}
		return append(b, '\'')
	case []byte:
		b = append(b, "X'"...)
		b = append(b, strings.ToUpper(hex.EncodeToString(x))...)
		return append(b, '\'')
	}
	return fmt.Appendf(b, "'%v'", v)
}

func isPlainIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// DumpSHA256 returns the hex SHA-256 of Dump's output: a digest of the database's logical
// content.
func DumpSHA256(ctx context.Context, path string) (string, error) {
	h := sha256.New()
	if err := Dump(ctx, path, h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
