package sqlite_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/opencode"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
)

// fuzzProfile reads the same value through opencode's part spec (site, when, call id), a spec
// with only a site path, and one with a site two keys deep and a server path.
var fuzzProfile = &sqlite.Profile{
	Name:  "fuzz",
	Agent: opencode.Profile.Agent,
	Tables: []sqlite.TableSpec{
		{Table: "part", Column: "data", Sites: []sqlite.SiteSpec{
			{Path: "$.tool", When: &sqlite.JSONCond{Path: "$.type", In: []string{"tool"}}, Kind: "call", CallID: "$.callID"}}},
		{Table: "one", Column: "data", Sites: []sqlite.SiteSpec{{Path: "$.tool", Kind: "call"}}},
		{Table: "deep", Column: "data", Sites: []sqlite.SiteSpec{
			{Path: "$.part.tool", Kind: "call", Server: "$.part.server", CallID: "$.part.callID"}}},
	},
}

var fuzzDB struct {
	once sync.Once
	path string
}

// FuzzFastPathAgreesWithLexer: for any value (as TEXT), the SQL-assisted path (fast.go and
// sessionfix_extract) gives the same sites, problems and identities as the full lexer.
func FuzzFastPathAgreesWithLexer(f *testing.F) {
	for _, v := range fastEdgeRows {
		if strings.HasPrefix(v, "'") && strings.HasSuffix(v, "'") {
			f.Add(strings.ReplaceAll(v[1:len(v)-1], "''", "'"))
		}
	}
	f.Add(`{"part":{"tool":"a.b","server":"s","callID":"c"},"tool":"x.y","type":"tool"}`)
	f.Add(`{"part":{"tool":"a.b"},"part":{"tool":"c.d"}}`)
	f.Add(`{"tool":"a.b","tool":"c.d"}`)
	f.Add("{\"tool\":\"a\xff.b\"}")
	f.Add("{\"tool\":\"a.b\",\"x\":\"\xc3\"}")
	f.Add("{\"tool\":\"a.b\"}\x00")
	f.Add("{\"tool\":\"a.b\",\"x\":\"\x00\"}")
	dir := f.TempDir() // one database for every input of this run, removed at its end
	f.Fuzz(func(t *testing.T, v string) {
		fuzzDB.once.Do(func() {
			fuzzDB.path = filepath.Join(dir, "f.db")
			db, err := sqlx.Open("sqlite3", "file:"+fuzzDB.path)
			require.NoError(t, err)
			_, err = db.Exec(`CREATE TABLE part (id TEXT PRIMARY KEY, data TEXT); CREATE TABLE one (id TEXT PRIMARY KEY, data TEXT);
				CREATE TABLE deep (id TEXT PRIMARY KEY, data TEXT);
				INSERT INTO part VALUES ('p1', ''); INSERT INTO one VALUES ('o1', ''); INSERT INTO deep VALUES ('d1', '')`)
			require.NoError(t, err)
			require.NoError(t, db.Close())
		})
		db, err := sqlx.Open("sqlite3", "file:"+fuzzDB.path)
		require.NoError(t, err)
		for _, tb := range []string{"part", "one", "deep"} {
			_, err = db.Exec("UPDATE "+tb+" SET data = CAST(? AS TEXT)", []byte(v))
			require.NoError(t, err)
		}
		require.NoError(t, db.Close())
		ctx := context.Background()
		scan := func(fast bool) *store.Snapshot {
			defer sqlite.SetFastPath(fast)()
			snap, err := sqlite.OpenWith(fuzzDB.path, fuzzProfile, sqlite.Options{}).Scan(ctx, store.ScanOptions{})
			require.NoError(t, err)
			return snap
		}
		fast, full := scan(true), scan(false)
		assert.Equal(t, full.Sites, fast.Sites, "value %q", v)
		assert.Equal(t, full.Problems, fast.Problems, "value %q", v)
		assert.Equal(t, full.Identities, fast.Identities, "value %q", v)
	})
}
