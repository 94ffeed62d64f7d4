package postgres

import (
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/storetest"
)

// TestConformance runs the store conformance suite (store/storetest) on the PostgreSQL engine,
// each subtest on a fresh database of Open WebUI's tables and rows, with the suite's database
// mode (the backup is rows in sessionfix_backup, not a file).
func TestConformance(t *testing.T) {
	storetest.Run(t, func(tb testing.TB) storetest.Fixture {
		u, srv := openwebuiDB(tb)
		digest := func(tb testing.TB) string {
			h := md5.New()
			for _, tc := range [][2]string{{"chat", "chat"}, {"chat_message", "output"}} {
				v := values(tb, u, tc[0], tc[1])
				keys := make([]string, 0, len(v))
				for k := range v {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					fmt.Fprintf(h, "%s|%s|%q\n", tc[0], k, v[k])
				}
			}
			return hex.EncodeToString(h.Sum(nil))
		}
		exec := func(tb testing.TB, q string) {
			db, err := sql.Open("pgx", u)
			require.NoError(tb, err)
			defer db.Close()
			_, err = db.Exec(q)
			require.NoError(tb, err)
		}
		prof := testProfile(tb)
		return storetest.Fixture{
			Store: Open(u, Options{Profiles: []*Profile{prof}}),
			Reopen: func(ref store.Ref) (store.Store, error) {
				return Open(srv.WithPassword(ref.Path), Options{Profiles: []*Profile{prof}}), nil
			},
			Digest:   digest,
			MinEdits: 9,
			Database: true,
			Tamper: func(tb testing.TB, _ *store.Change) {
				// Open WebUI writes the chat again (both places), after the run.
				exec(tb, `UPDATE chat SET chat = replace(chat::text, '"status": "completed"', '"status": "done"')::json`)
				exec(tb, `UPDATE chat_message SET output = replace(output::text, '"status": "completed"', '"status": "done"')::json WHERE output::text LIKE '%completed%'`)
			},
			Touch: func(tb testing.TB) {
				exec(tb, `UPDATE chat SET chat = (chat::text || ' ')::json`)
			},
			Value: func(tb testing.TB, s store.Site) (string, []byte) {
				for _, tc := range [][3]string{{"chat", "id", "chat"}, {"chat_message", "id", "output"}} {
					if k, ok := parseLabel(s.Loc.Row, tc[0], tc[1]); ok {
						return s.Loc.Row, []byte(values(tb, u, tc[0], tc[2])[k])
					}
				}
				tb.Fatalf("no row for %s", s.Loc.Row)
				return "", nil
			},
		}
	})
}
