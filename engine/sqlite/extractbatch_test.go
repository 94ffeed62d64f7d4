package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	sqlite3 "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/require"
)

// setNum sets a C integer field of a row reader column (test files cannot name C's types).
func setNum[T ~int64 | ~int32](p *T, v int) { *p = T(v) }

// specOf is a fastSpec for the extractor with these paths.
func specOf(paths []string) *fastSpec {
	f := &fastSpec{npaths: len(paths)}
	for _, p := range paths {
		f.ptext = append(f.ptext, p...)
		f.plen = append(f.plen, 0)
		setNum(&f.plen[len(f.plen)-1], len(p))
	}
	return f
}

// extractOne runs the batch extractor (extractRows) on v as the TEXT value of a one-row batch.
func extractOne(t testing.TB, v []byte, paths []string) []int64 {
	b := newRowBatch(2, 1)
	if len(v) > len(b.buf) {
		b.buf = make([]byte, len(v))
	}
	copy(b.buf, v)
	b.n = 1
	c := &b.cols[1]
	c.kind = kindText
	setNum(&c.n, len(v))
	require.NoError(t, extractRows(b, specOf(paths)))
	require.Len(t, b.ext, 1+2*len(paths))
	return b.ext
}

// TestExtractRowsMatchesSQLFunction reads a table through the row reader (rowid, the value,
// two more columns, as the scan does) and runs the batch extractor on its batches: each row's
// result is what the SQL function sessionfix_extract (the same parser, row by row inside
// SQLite) returns for the same value — accepted or not (NULL), and every offset and length —
// for every storage class (TEXT JSON, BLOB JSON, integers, floats, NULL, empty text, invalid
// JSON and invalid UTF-8 text) and across the 256-row chunks of a call and the batch ends.
func TestExtractRowsMatchesSQLFunction(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "x.db"))
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`CREATE TABLE t (v, k, s)`)
	require.NoError(t, err)
	paths := []string{"$.part.tool", "$.type", "$.callID", "$.part.state.server"}
	docs := []string{
		`{"type":"tool","callID":"c1","part":{"tool":"mcp__a__b","state":{"server":"a"}}}`,
		`{"part":{"tool":"x"},"type":"text"}`,
		`{"part":{"tool":"x","tool":"y"}}`,  // a path key twice: NULL
		`{"p\u0061rt":{"tool":"x"}}`,        // an escaped key: NULL
		`{"part":{"tool":1},"callID":"z"}`,  // no string at the site
		`  {"callID":"\"q\"","type":"t"}  `, // blanks around, an escaped value
		`{"part":{"tool":"x"}} trailing`,
		`[{"part":{"tool":"x"}}]`,
		`{"part":{"tool":"x"}`,
		`{}`,
	}
	var n int
	add := func(v any) {
		_, err := db.Exec(`INSERT INTO t VALUES (?, ?, ?)`, v, int64(n), fmt.Sprint("s", n))
		require.NoError(t, err)
		n++
	}
	_, err = db.Exec(`BEGIN`)
	require.NoError(t, err)
	for i := range 900 {
		d := docs[i%len(docs)]
		if i%7 == 3 {
			// a value whose offsets differ from row to row (a chunk or stride slip shows)
			d = `{"pad":"` + strings.Repeat("p", i) + `",` + d[1:]
		}
		switch i % 13 {
		case 5:
			add([]byte(d)) // BLOB: not TEXT, NULL
		case 6:
			add(int64(i))
		case 7:
			add(float64(i) / 2)
		case 8:
			add(nil)
		case 9:
			add("")
		default:
			add(d)
		}
	}
	_, err = db.Exec(`COMMIT`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO t VALUES (CAST(X'7b2274797065223a22ff227d' AS TEXT), 0, 0)`) // {"type":"\xff"}
	require.NoError(t, err)
	n++

	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.Raw(func(dc any) error { return registerExtract(dc.(*sqlite3.SQLiteConn)) }))
	args := "'" + strings.Join(paths, "', '") + "'"
	rows, err := conn.QueryContext(ctx, `SELECT sessionfix_extract(+v, `+args+`) FROM t ORDER BY rowid`)
	require.NoError(t, err)
	var want [][]byte
	accepted := 0
	for rows.Next() {
		var b []byte
		require.NoError(t, rows.Scan(&b))
		want = append(want, b)
		if b != nil {
			accepted++
		}
	}
	require.NoError(t, rows.Err())
	require.Len(t, want, n)
	require.Greater(t, accepted, 200) // both outcomes, many times over
	require.Less(t, accepted, n-200)

	f := specOf(paths)
	stride := 1 + 2*len(paths)
	row := 0
	require.NoError(t, conn.Raw(func(dc any) error {
		st, err := prepareRows(dc.(*sqlite3.SQLiteConn), `SELECT rowid, +v, +k, +s FROM t ORDER BY rowid`)
		if err != nil {
			return err
		}
		defer st.close()
		require.NoError(t, st.start(nil))
		b := newRowBatch(4, 300)
		for {
			end, err := st.read(ctx, b, 300)
			if err != nil {
				return err
			}
			require.NoError(t, extractRows(b, f))
			require.Len(t, b.ext, b.n*stride)
			for i := range b.n {
				got, w := b.ext[i*stride:(i+1)*stride], want[row]
				if w == nil {
					require.Zero(t, got[0], "row %d: the SQL function gives NULL", row+1)
				} else {
					require.Equal(t, int64(1), got[0], "row %d: the SQL function accepts it", row+1)
					for j := range 2 * len(paths) {
						require.Equal(t, int64(binary.NativeEndian.Uint64(w[8*j:])), got[1+j], "row %d, element %d", row+1, j)
					}
				}
				row++
			}
			b.n, b.used = 0, 0
			if end {
				return nil
			}
		}
	}))
	require.Equal(t, n, row)
}
