package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/postgres/pgtest"
	"github.com/sessionfix/sessionfix/store"
)

// TestClientEncodingOtherThanTheDatabases: a LATIN1 database whose connections get
// client_encoding UTF8 (set for the database, as an administrator may, or in the URL): the
// server converts every text between LATIN1 and UTF-8, so the bytes sessionfix plans from are
// not the bytes the server stores; and a SQL_ASCII database (no conversion: UTF-8 bytes stored
// as they come, a non-ASCII title before the name). The apply must still write each name and nothing else,
// journal the old text and both MD5s of the texts as stored (what the verify pass and undo
// compare with: md5(col::text) on the server), report no row as changed by another writer,
// and undo must give every byte back. Red before d87f743 (the MD5s computed by the client over
// the UTF-8 bytes it had): the non-ASCII row's new_hash was not md5 of its stored LATIN1 text,
// and undo refused the row the run had written ("changed since the run … an application wrote
// them"; the apply's own check, by xmin on PostgreSQL 14+, did not see it).
func TestClientEncodingOtherThanTheDatabases(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := context.Background()
	admin, err := sql.Open("pgx", srv.WithPassword(srv.URL))
	require.NoError(t, err)
	defer admin.Close()
	for _, c := range []struct{ how, enc, cenc string }{{"database", "LATIN1", "UTF8"}, {"url", "LATIN1", "UTF8"}, {"sql-ascii", "SQL_ASCII", "SQL_ASCII"}} {
		how := c.how
		t.Run(how, func(t *testing.T) {
			name := fmt.Sprintf("sf_cenc_%s_%d", strings.ReplaceAll(how, "-", "_"), time.Now().UnixNano())
			_, err := admin.Exec("CREATE DATABASE " + name + " ENCODING '" + c.enc + "' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
			require.NoError(t, err)
			t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
			pu, err := url.Parse(srv.WithPassword(srv.URL))
			require.NoError(t, err)
			pu.Path = "/" + name
			switch how {
			case "database":
				_, err = admin.Exec("ALTER DATABASE " + name + " SET client_encoding TO 'UTF8'")
				require.NoError(t, err)
			case "url":
				q := pu.Query()
				q.Set("client_encoding", "UTF8")
				pu.RawQuery = q.Encode()
			}
			u := pu.String()
			execSQL(t, u, `CREATE TABLE chat (id text PRIMARY KEY, chat json);
INSERT INTO chat VALUES ('c1', '{"title": "Café ü ½", "messages": [{"output": [{"type": "function_call", "name": "a.b", "call_id": "x"}]}]}'),
 ('c2', '{"title": "plain", "messages": [{"output": [{"type": "function_call", "name": "c.d", "call_id": "y"}]}]}');`)
			db, err := sql.Open("pgx", u)
			require.NoError(t, err)
			defer db.Close()
			var cenc string
			require.NoError(t, db.QueryRow(`SHOW client_encoding`).Scan(&cenc))
			require.Equal(t, c.cenc, cenc)
			before := values(t, u, "chat", "chat")
			require.Contains(t, before["c1"], "Café ü ½")

			st := Open(u, Options{Profiles: []*Profile{testProfile(t)}})
			snap, err := st.Scan(ctx, store.ScanOptions{})
			require.NoError(t, err)
			edits := planEdits(snap)
			require.Len(t, edits, 2)
			ch, err := st.Apply(ctx, snap, edits, applyOpts(t, "run-ce"))
			require.NoError(t, err, "no row written is reported as changed by another writer")
			require.NotNil(t, ch)
			after := values(t, u, "chat", "chat")
			assert.Equal(t, strings.Replace(before["c1"], `"a.b"`, `"a_b"`, 1), after["c1"])
			assert.Equal(t, strings.Replace(before["c2"], `"c.d"`, `"c_d"`, 1), after["c2"])

			// The backup's texts and hashes are the server's, in the database's encoding.
			var rows, bad int
			require.NoError(t, db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE b.new_hash <> md5(c.chat::text) OR b.old_hash <> md5(b.old_text))
 FROM sessionfix_backup b JOIN chat c ON c.id = b.key_value WHERE b.run_id = 'run-ce/0001-db'`).Scan(&rows, &bad))
			assert.Equal(t, 2, rows)
			assert.Zero(t, bad, "hashes of the stored texts")
			var oldC1 string
			require.NoError(t, db.QueryRow(`SELECT old_text FROM sessionfix_backup WHERE run_id = 'run-ce/0001-db' AND key_value = 'c1'`).Scan(&oldC1))
			assert.Equal(t, before["c1"], oldC1)

			require.NoError(t, Open(u, Options{}).Restore(ctx, ch, false))
			assert.Equal(t, before, values(t, u, "chat", "chat"), "undo gives every byte back")
			var enc string
			require.NoError(t, admin.QueryRow(`SELECT pg_encoding_to_char(encoding) FROM pg_database WHERE datname = $1`, name).Scan(&enc))
			assert.Equal(t, c.enc, enc)
		})
	}
}
