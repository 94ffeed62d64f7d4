package sqlite_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store/storetest"
)

// The conformance suite runs over every SQLite profile (and a rollback-journal database) in
// store/storetest's TestConformance, with every other profile of every engine.

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
