package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	sqlite3 "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
)

var fuzzPats = jsonscan.MustCompile("tool", "type", "part.tool", "part.part.tool")

// FuzzExtractAgreesWithSQLite: whenever sessionfix_extract accepts a value, SQLite's json_valid
// does too and it is an object, the full lexer (internal/jsonscan) finds no error in it and
// captures at each path exactly the token the extractor points at, and that token is the
// string json_extract finds there (none where json_extract finds no string).
func FuzzExtractAgreesWithSQLite(f *testing.F) {
	for _, s := range []string{`{"type":"tool","tool":"a.b","callID":"c"}`, `{"part":{"tool":"a\u0041b"}}`,
		`{"a":[1,2,{"tool":"x"}],"tool":null}`, `{"tool":"x","part":{"type":"tool","tool":"y"}}`, "{\"tool\":\"\xff\"}",
		`{"tool":"\ud800"}`, `{ "part" : { "tool" : "z" } } `, `{"part":{"part":{"tool":"q"}}}`} {
		f.Add(s)
	}
	db, err := sql.Open("sqlite3", ":memory:")
	require.NoError(f, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(context.Background())
	require.NoError(f, err)
	defer conn.Close()
	require.NoError(f, conn.Raw(func(dc any) error { return registerExtract(dc.(*sqlite3.SQLiteConn)) }))
	paths := []string{"$.tool", "$.type", "$.part.tool", "$.part.part.tool"}
	f.Fuzz(func(t *testing.T, v string) {
		var blob []byte
		var valid int
		var typ sql.NullString
		err := conn.QueryRowContext(context.Background(), `SELECT sessionfix_extract(CAST(?1 AS TEXT), '$.tool', '$.type', '$.part.tool', '$.part.part.tool'),
			json_valid(CAST(?1 AS TEXT)), json_type(CAST(?1 AS TEXT))`, []byte(v)).Scan(&blob, &valid, &typ)
		if err != nil {
			// json_type raises an error on malformed JSON
			err = conn.QueryRowContext(context.Background(), `SELECT sessionfix_extract(CAST(?1 AS TEXT), '$.tool', '$.type', '$.part.tool', '$.part.part.tool'),
				json_valid(CAST(?1 AS TEXT))`, []byte(v)).Scan(&blob, &valid)
			require.NoError(t, err)
		}
		// the scan's batch entry point (sfx_batch) agrees with the SQL function byte for byte
		got := extractOne(t, []byte(v), paths)
		if blob == nil {
			require.Zero(t, got[0], "%q: sessionfix_extract gives NULL, the batch extractor accepts it", v)
			return
		}
		require.Equal(t, int64(1), got[0], "%q: sessionfix_extract accepts it, the batch extractor does not", v)
		for i := range 2 * len(paths) {
			require.Equal(t, int64(binary.NativeEndian.Uint64(blob[8*i:])), got[1+i], "%q: batch vs SQL function, element %d", v, i)
		}
		lexed := map[string][2]int64{} // path → offset, length of the lexer's capture
		var lexErr *jsonscan.SyntaxError
		sc := jsonscan.New(fuzzPats, jsonscan.Document, func(r *jsonscan.Record) error {
			lexErr = r.Err
			for _, c := range r.Captures {
				p := "$." + c.Path.String()
				if _, dup := lexed[p]; dup {
					lexed[p] = [2]int64{-1, -1}
					continue
				}
				lexed[p] = [2]int64{c.Offset - r.Start, int64(c.Len)}
			}
			return nil
		})
		_, _ = sc.Write([]byte(v))
		_ = sc.Close()
		require.Nil(t, lexErr, "extract accepted what the lexer rejects: %q", v)
		require.Equal(t, 1, valid, "extract accepted what json_valid rejects: %q", v)
		require.Equal(t, "object", typ.String, "%q", v)
		require.Len(t, blob, 16*len(paths))
		for i, p := range paths {
			off := int64(binary.NativeEndian.Uint64(blob[16*i:]))
			n := int64(binary.NativeEndian.Uint64(blob[16*i+8:]))
			var ptype, pval sql.NullString
			require.NoError(t, conn.QueryRowContext(context.Background(), `SELECT json_type(CAST(?1 AS TEXT), ?2), json_extract(CAST(?1 AS TEXT), ?2)`, []byte(v), p).Scan(&ptype, &pval))
			lx, ok := lexed[p]
			if utf8.ValidString(v) {
				if n == 0 {
					require.False(t, ok, "path %s of %q: the lexer captures %v, extract nothing", p, v, lx)
				} else {
					require.Equal(t, [2]int64{off, n}, lx, "path %s of %q: extract vs lexer", p, v)
				}
			}
			if n == 0 {
				require.NotEqual(t, "text", ptype.String, "path %s of %q: SQLite finds a string, extract none", p, v)
				continue
			}
			require.True(t, off >= 0 && off+n <= int64(len(v)), "path %s of %q: token %d+%d outside", p, v, off, n)
			tok := v[off : off+n]
			require.Equal(t, "text", ptype.String, "path %s of %q: extract gives %q, SQLite type %q", p, v, tok, ptype.String)
			var want string
			// (encoding/json replaces invalid UTF-8 and lone surrogates with U+FFFD; SQLite keeps them)
			if json.Unmarshal([]byte(tok), &want) == nil && json.Valid([]byte(v)) && !strings.ContainsRune(want, utf8.RuneError) {
				require.Equal(t, want, pval.String, "path %s of %q", p, v)
			}
		}
	})
}
