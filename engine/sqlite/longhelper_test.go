package sqlite_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
)

// TestFastPathLongHelperValues: a call id, server or condition value longer than the lexer's
// capture limit (1 MiB) is not a value the lexer keeps: the SQL-assisted path leaves the row to
// the lexer, so both give the same sites (no call id / server where the lexer has none).
func TestFastPathLongHelperValues(t *testing.T) {
	ctx := context.Background()
	db := buildDB(t, "long.db", "sql:CREATE TABLE part (id TEXT PRIMARY KEY, data TEXT); CREATE TABLE one (id TEXT PRIMARY KEY, data TEXT); CREATE TABLE deep (id TEXT PRIMARY KEY, data TEXT);")
	long := strings.Repeat("x", 1<<20)
	rows := []string{
		`{"type":"tool","callID":"` + long + `","tool":"a.b"}`,
		`{"type":"` + long + `","tool":"a.b"}`,
		`{"part":{"tool":"a.b","server":"` + long + `","callID":"c"}}`,
		`{"part":{"tool":"a.b","server":"s","callID":"` + long + `"}}`,
	}
	x, err := sqlx.Open("sqlite3", "file:"+db)
	require.NoError(t, err)
	for i, r := range rows {
		for _, tb := range []string{"part", "one", "deep"} {
			_, err := x.Exec("INSERT INTO "+tb+" VALUES (?, ?)", i, r)
			require.NoError(t, err)
		}
	}
	require.NoError(t, x.Close())
	scan := func(fast bool) *store.Snapshot {
		defer sqlite.SetFastPath(fast)()
		snap, err := sqlite.OpenWith(db, fuzzProfile, sqlite.Options{}).Scan(ctx, store.ScanOptions{})
		require.NoError(t, err)
		return snap
	}
	fast, full := scan(true), scan(false)
	require.Equal(t, len(full.Sites), len(fast.Sites))
	for i := range full.Sites {
		assert.Equal(t, len(full.Sites[i].CallID), len(fast.Sites[i].CallID), "site %d %s", i, full.Sites[i].Loc.Row)
		assert.Equal(t, len(full.Sites[i].Server), len(fast.Sites[i].Server), "site %d %s", i, full.Sites[i].Loc.Row)
	}
	assert.True(t, reflect.DeepEqual(full.Sites, fast.Sites), "same sites")
	assert.Equal(t, full.Problems, fast.Problems)
	require.Len(t, full.Sites, 5)
	assert.Empty(t, full.Sites[0].CallID, "the lexer keeps no call id longer than its capture limit")
}
