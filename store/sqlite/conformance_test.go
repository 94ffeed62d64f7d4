package sqlite_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/all"
	"github.com/sessionfix/sessionfix/store/storetest"
)

// sqliteFixture makes a conformance fixture from a database builder; tamper is the SQL an agent
// runs afterwards on a row the rewrite changed.
func sqliteFixture(build func(testing.TB) string, tamper string, minEdits int) storetest.Factory {
	return func(tb testing.TB) storetest.Fixture {
		p := build(tb)
		return storetest.Fixture{
			Store:    detect(tb, p),
			Reopen:   all.Open,
			Digest:   func(tb testing.TB) string { return dumpSum(tb, p) },
			Tamper:   func(tb testing.TB, _ *store.Change) { execSQL(tb, p, tamper) },
			MinEdits: minEdits,
		}
	}
}

func TestConformance(t *testing.T) {
	tests := []struct {
		name     string
		build    func(testing.TB) string
		tamper   string
		minEdits int
	}{
		{"opencode real dump plus legacy rows", opencodeDB,
			`UPDATE part SET data = replace(data, '"status":"completed"', '"status":"archived"') WHERE id = 'prt_legacy00000000000000000001'`, 11},
		{"crush", func(tb testing.TB) string { return buildDB(tb, "crush.db", crushSQL) },
			`UPDATE messages SET parts = replace(parts, '"finished":true', '"finished":false') WHERE id = 'm-0002'`, 6},
		{"crush in rollback-journal mode", func(tb testing.TB) string { return buildJournalDB(tb, "crush.db", crushSQL) },
			`UPDATE messages SET parts = replace(parts, '"finished":true', '"finished":false') WHERE id = 'm-0006'`, 6},
		{"goose", func(tb testing.TB) string { return buildDB(tb, "sessions.db", gooseSQL) },
			`UPDATE messages SET content_json = replace(content_json, '"status":"success"', '"status":"error"') WHERE id = 2`, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			storetest.Run(t, sqliteFixture(tt.build, tt.tamper, tt.minEdits))
		})
	}
}

// TestConformanceFixturesAreRealistic guards the fixtures the suite runs on: each holds names a
// provider rejects in more than one table or row shape.
func TestConformanceFixturesAreRealistic(t *testing.T) {
	snap := scanStore(t, detect(t, opencodeDB(t)))
	tables := map[string]int{}
	for _, e := range storetest.Edits(snap, storetest.ProviderSafe) {
		tbl, _, _ := strings.Cut(e.Site.Loc.Row, " ")
		tables[tbl]++
	}
	require.Equal(t, map[string]int{"part": 5, "event": 6}, tables, "legacy names in part and event")
}
