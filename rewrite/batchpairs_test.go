package rewrite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// crushPairsDB writes a crush database (the columns its profile reads) of one session: a user
// row, then rows rowid 2, 3, … alternating an assistant row of perRow tool calls and the tool
// row of their results. The first result of the tool row after each assistant row whose rowid
// is in mismatch spells its name differently from its call (they end differently: a pair
// warning).
func crushPairsDB(t *testing.T, path string, rows, perRow int, mismatch map[int]bool) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT NOT NULL);
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, parts TEXT NOT NULL DEFAULT '[]');
INSERT INTO sessions VALUES ('s1', 't');
INSERT INTO messages VALUES ('m0', 's1', 'user', '[]');`)
	require.NoError(t, err)
	tx, err := db.Begin()
	require.NoError(t, err)
	k := 0
	for rowid := 2; rowid < rows; rowid += 2 {
		var calls, results []any
		for i := range perRow {
			k++
			id := fmt.Sprintf("call_%d", k)
			res := "mcp_lit_literature.search_pubmed"
			if i == 0 && mismatch[rowid] {
				res = "mcp_lit_literature.search+pubmed"
			}
			calls = append(calls, map[string]any{"type": "tool_call", "data": map[string]any{"id": id, "name": "mcp_lit_literature.search_pubmed", "input": "{}"}})
			results = append(results, map[string]any{"type": "tool_result", "data": map[string]any{"tool_call_id": id, "name": res, "content": "ok"}})
		}
		c, _ := json.Marshal(calls)
		r, _ := json.Marshal(results)
		_, err = tx.Exec(`INSERT INTO messages VALUES (?, 's1', 'assistant', ?), (?, 's1', 'tool', ?)`,
			fmt.Sprintf("m%d", rowid), string(c), fmt.Sprintf("m%d", rowid+1), string(r))
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit())
}

// TestBatchedStoreWarnsPairsAcrossBatches: a call and its response that end as different names
// are reported (checkPairs) wherever the store's batches split them. A crush database of 4000
// rows, 10 sites each (40,000 sites), mismatched pairs in rows 200/201 and in rows that straddle
// batch boundaries (1000/1001, 1500/1501, 2000/2001): at 3ef76f7 (BatchSites 50,000, 2000-row
// batches) all four warnings; since ec2393b (BatchSites 10,000, 500-row batches) the store is
// planned batch by batch, and checkPairsAcross compares a response with the calls of the batch
// before its own.
func TestBatchedStoreWarnsPairsAcrossBatches(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "crush.db")
	mismatch := map[int]bool{200: true, 1000: true, 1500: true, 2000: true}
	crushPairsDB(t, db, 4000, 10, mismatch)
	var warned []string
	_, err := Process(ctx, []store.Store{sqlite.Open(db, all.SQLiteOptions(sqlite.Options{}))}, naming.Policy{},
		ProcessOptions{}, func(r *StoreResult) error {
			require.NoError(t, r.ScanErr)
			for _, w := range r.Plan.Warnings {
				if strings.Contains(w.Reason, "but its call") {
					warned = append(warned, w.Loc.Row)
				}
			}
			return nil
		})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"messages id=m201", "messages id=m1001", "messages id=m1501", "messages id=m2001"}, warned)
}
