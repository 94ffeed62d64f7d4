package rewrite

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/agent/opencode/opencodebench"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/store"
)

// planRows renders the decisions of a store's results (all parts) and the sum of its counts.
func planRows(t *testing.T, results []*StoreResult) (rows []string, rewrite int) {
	t.Helper()
	for _, r := range results {
		require.NoError(t, r.ScanErr)
		for _, d := range r.Plan.Decisions {
			rows = append(rows, fmt.Sprintf("%s @%d %s %s %s -> %s", d.Site.Loc.Row, d.Site.Loc.Offset, d.Site.Path, d.Class, d.Site.Name, d.New))
		}
		rewrite += r.Plan.Count(naming.ActRewrite)
	}
	sort.Strings(rows)
	return rows, rewrite
}

// TestBatchedStoreSameAsWhole: a SQLite store planned batch by batch (more sites than
// BatchSites) gives the decisions, the rewrite and the undo of the same store planned whole;
// its results come in order, the last one closing it with the snapshot and the outcome.
func TestBatchedStoreSameAsWhole(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var dbs [2]string
	var st opencodebench.Stats
	for i := range dbs {
		dbs[i] = filepath.Join(dir, fmt.Sprintf("oc%d.db", i))
		var err error
		st, err = opencodebench.Generate(ctx, dbs[i], 6000)
		require.NoError(t, err)
	}
	run := func(db string, batch int) ([]*StoreResult, *Result) {
		old := BatchSites
		BatchSites = batch
		defer func() { BatchSites = old }()
		var out []*StoreResult
		res, err := Process(ctx, []store.Store{sqlite.Open(db, all.SQLiteOptions(sqlite.Options{}))}, naming.Policy{},
			ProcessOptions{Apply: true, ApplyOptions: ApplyOptions{StateDir: filepath.Join(dir, "state")}},
			func(r *StoreResult) error { out = append(out, r); return nil })
		require.NoError(t, err)
		return out, res
	}
	whole, wres := run(dbs[0], 1<<30)
	parts, pres := run(dbs[1], 100)
	require.Len(t, whole, 1)
	assert.Nil(t, whole[0].Batch)
	require.Greater(t, len(parts), 3, "a store of 9006 sites in batches of 2000 rows")
	for i, r := range parts {
		require.NotNil(t, r.Batch)
		assert.Equal(t, i, r.Batch.Index)
		assert.Equal(t, i == len(parts)-1, r.Batch.Last)
		if !r.Batch.Last {
			assert.Nil(t, r.Outcome)
			assert.Zero(t, r.Plan.Snap.Records, "records are counted by the closing result")
		}
	}
	last := parts[len(parts)-1]
	assert.Equal(t, whole[0].Plan.Snap.Records, last.Plan.Snap.Records)
	assert.Empty(t, last.Plan.Decisions)

	wrows, wn := planRows(t, whole)
	prows, pn := planRows(t, parts)
	assert.Len(t, wrows, st.Parts/2+st.Events+2*st.Sessions, "tool parts, their events, two rules per session")
	assert.Equal(t, wrows, prows, "the same decisions")
	assert.Equal(t, st.Legacy, wn)
	assert.Equal(t, wn, pn)

	require.NotNil(t, last.Outcome)
	require.NoError(t, last.Outcome.Err)
	require.NoError(t, whole[0].Outcome.Err)
	assert.Equal(t, whole[0].Outcome.Edits, last.Outcome.Edits)
	wm, err := runlog.ReadRun(wres.Dir)
	require.NoError(t, err)
	pm, err := runlog.ReadRun(pres.Dir)
	require.NoError(t, err)
	fw, pw := wm.Files[0], pm.Files[0]
	assert.Equal(t, fw.Renames, pw.Renames)
	assert.Equal(t, fw.Edits, pw.Edits)

	// Both databases now hold the same rows, and nothing is left to rewrite.
	dump := func(db string) []string {
		snap, err := sqlite.Open(db, all.SQLiteOptions(sqlite.Options{})).Scan(ctx, store.ScanOptions{})
		require.NoError(t, err)
		var out []string
		for _, s := range snap.Sites {
			out = append(out, fmt.Sprintf("%s @%d %s", s.Loc.Row, s.Loc.Offset, s.Raw))
		}
		return out
	}
	assert.Equal(t, dump(dbs[0]), dump(dbs[1]))
	again, _ := run(dbs[1], 100)
	_, n := planRows(t, again)
	assert.Zero(t, n)
}
