// Package storetest is the conformance suite every rewritable store backend passes
// (conventions.md §6): scanning and planning change nothing, a rewrite changes exactly the
// planned names and survives a rescan, a second pass finds nothing, a failed journal aborts
// cleanly, undo restores the original content, and undo refuses a store changed since the run
// unless forced. Each backend's tests call Run with a factory of fresh stores holding legacy
// names (store/sqlite: opencode, crush, goose; store/jsonl: a Qwen Code session, in this
// package's own tests).
//
// The suite drives the store contract itself (store.Store, store.Writer, store.Restorer) with
// the provider-safe rule of naming.md §2; storetest imports store, mcpname and testing helpers
// only, never scan, rewrite or cmd.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

// Fixture is one fresh store with legacy names, made for one subtest.
type Fixture struct {
	// Store is the store under test (freshly built, with names to rewrite).
	Store store.Store
	// Reopen opens a store again from its Ref, as undo does (store/all.Open).
	Reopen func(store.Ref) (store.Store, error)
	// Digest returns a digest of the store's whole content: a file's SHA-256, a SQLite dump's.
	// Equal digests mean equal content.
	Digest func(tb testing.TB) string
	// Tamper changes, after a rewrite, content the rewrite wrote (as an agent writing to the
	// store again would), so that undo must refuse without force; with force, undo must put
	// the original names back (whatever else the agent changed may stay).
	Tamper func(tb testing.TB, ch *store.Change)
	// Rename is the rewrite rule; nil means ProviderSafe.
	Rename func(store.Site) (string, bool)
	// MinEdits is the least number of names the fixture must give to rewrite (a fixture with
	// nothing to rewrite tests nothing).
	MinEdits int
}

// Factory builds a fresh fixture; it is called once per subtest.
type Factory func(tb testing.TB) Fixture

// ProviderSafe is the rule for agents that do not use mcp__ names (stores.md §3): a name that
// is not provider-safe becomes normalize(name); read-only sites are never rewritten.
func ProviderSafe(s store.Site) (string, bool) {
	if s.ReadOnly {
		return "", false
	}
	if s.Units != nil {
		if mcpname.IsProviderSafeUnits(s.Units) {
			return "", false
		}
		return mcpname.NormalizeUnits(s.Units), true
	}
	if mcpname.IsProviderSafe(s.Name) {
		return "", false
	}
	return mcpname.Normalize(s.Name), true
}

// Run runs the conformance suite on stores made by newFixture.
func Run(t *testing.T, newFixture Factory) {
	t.Run("dry run changes nothing", func(t *testing.T) { testDryRun(t, newFixture(t)) })
	t.Run("round trip", func(t *testing.T) { testRoundTrip(t, newFixture(t)) })
	t.Run("idempotent re-apply", func(t *testing.T) { testIdempotent(t, newFixture(t)) })
	t.Run("journal failure aborts", func(t *testing.T) { testJournalFailure(t, newFixture(t)) })
	t.Run("undo restores the original", func(t *testing.T) { testUndo(t, newFixture(t)) })
	t.Run("undo refuses a changed store", func(t *testing.T) { testUndoRefuses(t, newFixture(t)) })
}

func (f Fixture) rename() func(store.Site) (string, bool) {
	if f.Rename != nil {
		return f.Rename
	}
	return ProviderSafe
}

// scan scans the fixture's store (with hashing, as before a rewrite).
func scan(tb testing.TB, st store.Store) *store.Snapshot {
	tb.Helper()
	snap, err := st.Scan(context.Background(), store.ScanOptions{Hash: true})
	require.NoError(tb, err)
	return snap
}

// Edits returns the edits rule gives for snap's sites, in site order.
func Edits(snap *store.Snapshot, rule func(store.Site) (string, bool)) []store.Edit {
	var out []store.Edit
	for _, s := range snap.Sites {
		if n, ok := rule(s); ok {
			out = append(out, store.Edit{Site: s, New: n})
		}
	}
	return out
}

// siteKey is what stays of a site across a rewrite: where and what it is (offsets may shift).
func siteKey(s store.Site) string {
	return fmt.Sprintf("%s|%d|%s|%s|%s", s.Loc.Row, s.Loc.Line, s.Kind, s.Path, s.Field)
}

// apply rewrites the fixture's planned names and returns the change.
func apply(tb testing.TB, f Fixture, snap *store.Snapshot, edits []store.Edit) *store.Change {
	tb.Helper()
	w, ok := f.Store.(store.Writer)
	require.True(tb, ok, "the store is a store.Writer")
	bk := filepath.Join(tb.TempDir(), "backup-0001")
	ch, err := w.Apply(context.Background(), snap, edits, store.ApplyOptions{BackupPath: bk})
	require.NoError(tb, err)
	require.NotNil(tb, ch)
	require.Equal(tb, bk, ch.Backup)
	return ch
}

func testDryRun(t *testing.T, f Fixture) {
	before := f.Digest(t)
	a := scan(t, f.Store)
	b := scan(t, f.Store)
	require.GreaterOrEqual(t, len(Edits(a, f.rename())), max(f.MinEdits, 1), "the fixture has names to rewrite")
	assert.Equal(t, before, f.Digest(t), "scanning and planning change nothing")
	require.Equal(t, len(a.Sites), len(b.Sites), "a scan is deterministic")
	for i := range a.Sites {
		assert.Equal(t, a.Sites[i].Loc, b.Sites[i].Loc)
		assert.Equal(t, a.Sites[i].Name, b.Sites[i].Name)
		assert.Equal(t, a.Sites[i].Raw, b.Sites[i].Raw)
	}
}

// checkRewritten checks that after holds the same sites as before, each with its planned name.
func checkRewritten(t *testing.T, before, after *store.Snapshot, edits []store.Edit) {
	t.Helper()
	want := map[string]string{}
	for _, e := range edits {
		want[siteKey(e.Site)+"|"+e.Site.Name] = e.New
	}
	require.Equal(t, len(before.Sites), len(after.Sites), "a rewrite keeps every site")
	changed := 0
	for i, s := range before.Sites {
		a := after.Sites[i]
		require.Equal(t, siteKey(s), siteKey(a), "site %d keeps its place", i)
		if n, ok := want[siteKey(s)+"|"+s.Name]; ok {
			assert.Equal(t, n, a.Name, "%s: rewritten to the planned name", siteKey(s))
			changed++
		} else {
			assert.Equal(t, s.Name, a.Name, "%s: not planned, not changed", siteKey(s))
			assert.Equal(t, s.Raw, a.Raw, "%s: not planned, not a byte changed", siteKey(s))
		}
	}
	assert.Equal(t, len(edits), changed, "every planned site changed")
}

func testRoundTrip(t *testing.T, f Fixture) {
	orig := f.Digest(t)
	snap := scan(t, f.Store)
	edits := Edits(snap, f.rename())
	require.GreaterOrEqual(t, len(edits), max(f.MinEdits, 1))
	ch := apply(t, f, snap, edits)
	assert.Equal(t, f.Store.Ref(), ch.Ref)
	assert.NotEqual(t, orig, f.Digest(t), "the store changed")
	assert.NotEmpty(t, ch.Before.SHA256, "the change records its backup's digest")
	checkRewritten(t, snap, scan(t, f.Store), edits)
	reopened, err := f.Reopen(f.Store.Ref())
	require.NoError(t, err)
	checkRewritten(t, snap, scan(t, reopened), edits)
}

func testIdempotent(t *testing.T, f Fixture) {
	snap := scan(t, f.Store)
	apply(t, f, snap, Edits(snap, f.rename()))
	after := f.Digest(t)
	again := scan(t, f.Store)
	assert.Empty(t, Edits(again, f.rename()), "a second pass finds nothing to rewrite")
	assert.Equal(t, after, f.Digest(t))
}

func testJournalFailure(t *testing.T, f Fixture) {
	orig := f.Digest(t)
	snap := scan(t, f.Store)
	w := f.Store.(store.Writer)
	errJournal := errors.New("journal disk full")
	bk := filepath.Join(t.TempDir(), "backup-0001")
	called := false
	_, err := w.Apply(context.Background(), snap, Edits(snap, f.rename()), store.ApplyOptions{BackupPath: bk,
		BeforeCommit: func(ch *store.Change) error {
			called = true
			assert.Equal(t, orig, f.Digest(t), "nothing is visible before the change is journaled")
			assert.FileExists(t, ch.Backup, "the backup exists before the change is journaled")
			return errJournal
		}})
	require.ErrorIs(t, err, errJournal)
	assert.True(t, called)
	assert.Equal(t, orig, f.Digest(t), "a journal failure changes nothing")
	assert.NoFileExists(t, bk, "and leaves no backup behind")
}

func testUndo(t *testing.T, f Fixture) {
	orig := f.Digest(t)
	snap := scan(t, f.Store)
	ch := apply(t, f, snap, Edits(snap, f.rename()))
	st, err := f.Reopen(ch.Ref)
	require.NoError(t, err)
	r, ok := st.(store.Restorer)
	require.True(t, ok, "the store is a store.Restorer")
	require.NoError(t, r.Restore(context.Background(), ch, false))
	assert.Equal(t, orig, f.Digest(t), "undo restores the original content")
	back := scan(t, st)
	require.Equal(t, len(snap.Sites), len(back.Sites))
	for i := range snap.Sites {
		assert.Equal(t, snap.Sites[i].Raw, back.Sites[i].Raw)
	}
	require.NoError(t, r.Restore(context.Background(), ch, false), "undoing again is harmless")
	assert.Equal(t, orig, f.Digest(t))
}

func testUndoRefuses(t *testing.T, f Fixture) {
	snap := scan(t, f.Store)
	ch := apply(t, f, snap, Edits(snap, f.rename()))
	f.Tamper(t, ch)
	tampered := f.Digest(t)
	st, err := f.Reopen(ch.Ref)
	require.NoError(t, err)
	r := st.(store.Restorer)
	err = r.Restore(context.Background(), ch, false)
	require.ErrorIs(t, err, store.ErrChangedSinceRun, "undo refuses a store changed since the run")
	var ce *store.ChangedError
	require.ErrorAs(t, err, &ce)
	assert.NotEmpty(t, ce.Path)
	assert.Equal(t, tampered, f.Digest(t), "a refused undo changes nothing")
	require.NoError(t, r.Restore(context.Background(), ch, true), "--force restores anyway")
	back := scan(t, st)
	require.Equal(t, len(snap.Sites), len(back.Sites))
	for i := range snap.Sites {
		assert.Equal(t, string(snap.Sites[i].Raw), string(back.Sites[i].Raw), "the original names are back")
	}
}
