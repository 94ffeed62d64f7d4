// Package storetest is the conformance suite every store profile passes (conventions.md §6):
// scanning and planning change nothing, a rewrite changes exactly the planned name tokens (every
// other byte stays) and survives a rescan, a second pass finds nothing, a stale token or a store
// changed since the scan is refused without a change, a failed journal aborts cleanly, undo
// restores the original content, and undo refuses a store changed since the run unless forced.
// RunReadOnly is the part that applies to a profile with no rewritable site (SQLite databases
// holding raw identities only).
//
// This package's own tests run the suite over every profile of every engine, on the real
// fixtures of fixtures/ (TestConformance, guarded by TestConformanceCoversEveryProfile).
//
// The suite drives the store contract itself (store.Store, store.Writer, store.Restorer) with
// the provider-safe rule of naming.md §2.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
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
	// Reopen opens a store again from its Ref, as undo does (agent/all.Open).
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
	// Plan, when set, plans the edits of a scan instead of Rename (a rule that changes sites
	// together, such as a call's name and its inserted namespace member).
	Plan func(*store.Snapshot) []store.Edit
	// MinEdits is the least number of names the fixture must give to rewrite (a fixture with
	// nothing to rewrite tests nothing).
	MinEdits int
	// Bytes returns the store's whole content when the store is one file (JSONL, JSON); the
	// suite then checks byte for byte that a rewrite changed only the tokens its Change.Sites
	// name. nil for a store that is not one byte stream (SQLite): the suite rewrites the new
	// names back instead and wants the original Digest.
	Bytes func(tb testing.TB) []byte
	// Touch changes, after a scan, what the rewrite planned on it would edit, as an agent
	// writing meanwhile would (a line appended to a file, a planned row updated): an Apply of
	// that older scan must be refused (store.ErrInUse) and change nothing.
	Touch func(tb testing.TB)
	// Value returns the value that holds a site (a SQLite column value) and a key naming it
	// ("part id=prt_1 data"), for stores that are not one file (Bytes nil): the suite checks
	// that a rewrite changed only the name tokens in it.
	Value func(tb testing.TB, s store.Site) (key string, val []byte)
	// Inserts is the least number of planned edits that insert an absent member (Site.Raw
	// empty: a call without a "namespace" member); 0 for profiles that never insert.
	Inserts int
	// File returns the bytes of a store kept in one file that Bytes does not describe (a SQLite
	// database): undo of a run nothing touched since must give that file back byte for byte
	// (engine/sqlite filerestore.go: the header's change counter and version fields too, not
	// only the rows). nil for stores without one file.
	File func(tb testing.TB) []byte
	// Database marks a database server's store (store.go, "Database-backed stores"): its
	// backup is rows in the database, not a file at ApplyOptions.BackupPath (Change.Backup
	// names where), and its Change records no file state (Before, After zero).
	Database bool
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
	t.Run("only the name tokens change", func(t *testing.T) { testOnlyTokens(t, newFixture(t)) })
	t.Run("stale token refused", func(t *testing.T) { testTokenMismatch(t, newFixture(t)) })
	t.Run("store changed since the scan refused", func(t *testing.T) { testTouched(t, newFixture(t)) })
	t.Run("journal failure aborts", func(t *testing.T) { testJournalFailure(t, newFixture(t)) })
	if _, ok := newFixture(t).Store.(store.BatchScanner); ok {
		t.Run("batches agree with Scan and Apply", func(t *testing.T) { testBatches(t, newFixture(t), newFixture(t)) })
	}
	t.Run("undo restores the original", func(t *testing.T) { testUndo(t, newFixture(t)) })
	t.Run("undo refuses a changed store", func(t *testing.T) { testUndoRefuses(t, newFixture(t)) })
}

func (f Fixture) rename() func(store.Site) (string, bool) {
	if f.Rename != nil {
		return f.Rename
	}
	return ProviderSafe
}

// plan returns the fixture's edits for snap: Plan, else Rename (ProviderSafe) site by site.
func (f Fixture) plan(snap *store.Snapshot) []store.Edit {
	if f.Plan != nil {
		return f.Plan(snap)
	}
	return Edits(snap, f.rename())
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

// siteKeys returns, for each site, what stays of it across a rewrite: where and what it is
// (offsets may shift; an object key's path holds the key itself, so a key site is placed by its
// scope and its rank there), numbered when several sites share it.
func siteKeys(sites []store.Site) []string {
	out := make([]string, len(sites))
	seen := map[string]int{}
	for i, s := range sites {
		where := s.Path
		if s.Key {
			where = "key of " + s.Scope
		}
		k := fmt.Sprintf("%s|%d|%s|%s|%s", s.Loc.Row, s.Loc.Line, s.Kind, where, s.Field)
		seen[k]++
		out[i] = fmt.Sprintf("%s#%d", k, seen[k])
	}
	return out
}

// checkRewritten checks that after holds the sites of before, each planned one with its
// planned name and every other one byte for byte as it was, plus the inserted members the
// edits planned at absent sites, and no other site.
func checkRewritten(t *testing.T, before, after *store.Snapshot, edits []store.Edit) {
	t.Helper()
	planned := map[string]string{}
	keyOf := map[string]string{}
	bk := siteKeys(before.Sites)
	for i, s := range before.Sites {
		keyOf[fmt.Sprintf("%s|%d|%s", s.Loc.Row, s.Loc.Offset, s.Field)] = bk[i]
	}
	var inserted []string
	for _, e := range edits {
		k, ok := keyOf[fmt.Sprintf("%s|%d|%s", e.Site.Loc.Row, e.Site.Loc.Offset, e.Site.Field)]
		if !ok && len(e.Site.Raw) == 0 {
			k = siteKeys([]store.Site{e.Site})[0]
			inserted = append(inserted, k)
		}
		require.NotEmpty(t, k, "edit at %d (%s) is a site of the scan or an absent member", e.Site.Loc.Offset, e.Site.Path)
		planned[k] = e.New
	}
	ak := siteKeys(after.Sites)
	got := map[string]store.Site{}
	for i, s := range after.Sites {
		got[ak[i]] = s
	}
	require.Equal(t, len(before.Sites)+len(inserted), len(after.Sites), "a rewrite keeps every site and adds only the inserted members")
	changed := 0
	for i, s := range before.Sites {
		a, ok := got[bk[i]]
		require.True(t, ok, "%s: still there after the rewrite", bk[i])
		if n, ok := planned[bk[i]]; ok {
			assert.Equal(t, n, a.Name, "%s: rewritten to the planned name", bk[i])
			changed++
		} else {
			assert.Equal(t, s.Name, a.Name, "%s: not planned, not changed", bk[i])
			assert.Equal(t, string(s.Raw), string(a.Raw), "%s: not planned, not a byte changed", bk[i])
		}
	}
	for _, k := range inserted {
		a, ok := got[k]
		if assert.True(t, ok, "%s: the inserted member is found", k) {
			assert.Equal(t, planned[k], a.Name, "%s: inserted with the planned name", k)
			changed++
		}
	}
	assert.Equal(t, len(edits), changed, "every planned site changed")
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
	if f.Database {
		require.NotEmpty(tb, ch.Backup, "the change names where its backup rows are")
		require.NoFileExists(tb, bk, "a database keeps its backup in the database")
		return ch
	}
	require.Equal(tb, bk, ch.Backup)
	return ch
}

func testDryRun(t *testing.T, f Fixture) {
	before := f.Digest(t)
	a := scan(t, f.Store)
	b := scan(t, f.Store)
	require.GreaterOrEqual(t, len(f.plan(a)), max(f.MinEdits, 1), "the fixture has names to rewrite")
	assert.Equal(t, before, f.Digest(t), "scanning and planning change nothing")
	require.Equal(t, len(a.Sites), len(b.Sites), "a scan is deterministic")
	for i := range a.Sites {
		assert.Equal(t, a.Sites[i].Loc, b.Sites[i].Loc)
		assert.Equal(t, a.Sites[i].Name, b.Sites[i].Name)
		assert.Equal(t, a.Sites[i].Raw, b.Sites[i].Raw)
	}
}

func testRoundTrip(t *testing.T, f Fixture) {
	orig := f.Digest(t)
	snap := scan(t, f.Store)
	edits := f.plan(snap)
	require.GreaterOrEqual(t, len(edits), max(f.MinEdits, 1))
	ch := apply(t, f, snap, edits)
	assert.Equal(t, f.Store.Ref(), ch.Ref)
	assert.NotEqual(t, orig, f.Digest(t), "the store changed")
	if f.Database {
		assert.Zero(t, ch.Before, "a database's change records no file state")
	} else {
		assert.True(t, (ch.Before.SHA256 == "") != (ch.Before.Fingerprint == ""),
			"the change records one checksum of its backup (sha256, or an xxh3-128 fingerprint since manifest version 4): %+v", ch.Before)
	}
	checkRewritten(t, snap, scan(t, f.Store), edits)
	reopened, err := f.Reopen(f.Store.Ref())
	require.NoError(t, err)
	checkRewritten(t, snap, scan(t, reopened), edits)
}

func testIdempotent(t *testing.T, f Fixture) {
	snap := scan(t, f.Store)
	apply(t, f, snap, f.plan(snap))
	after := f.Digest(t)
	again := scan(t, f.Store)
	assert.Empty(t, f.plan(again), "a second pass finds nothing to rewrite")
	assert.Equal(t, after, f.Digest(t))
}

func testJournalFailure(t *testing.T, f Fixture) {
	orig := f.Digest(t)
	snap := scan(t, f.Store)
	w := f.Store.(store.Writer)
	errJournal := errors.New("journal disk full")
	bk := filepath.Join(t.TempDir(), "backup-0001")
	called := false
	_, err := w.Apply(context.Background(), snap, f.plan(snap), store.ApplyOptions{BackupPath: bk,
		BeforeCommit: func(ch *store.Change) error {
			called = true
			assert.Equal(t, orig, f.Digest(t), "nothing is visible before the change is journaled")
			if !f.Database {
				assert.FileExists(t, ch.Backup, "the backup exists before the change is journaled")
			}
			return errJournal
		}})
	require.ErrorIs(t, err, errJournal)
	assert.True(t, called)
	assert.Equal(t, orig, f.Digest(t), "a journal failure changes nothing")
	assert.NoFileExists(t, bk, "and leaves no backup behind")
}

func testUndo(t *testing.T, f Fixture) {
	orig := f.Digest(t)
	var origFile []byte
	if f.File != nil {
		origFile = f.File(t)
	}
	snap := scan(t, f.Store)
	ch := apply(t, f, snap, f.plan(snap))
	st, err := f.Reopen(ch.Ref)
	require.NoError(t, err)
	r, ok := st.(store.Restorer)
	require.True(t, ok, "the store is a store.Restorer")
	require.NoError(t, r.Restore(context.Background(), ch, false))
	assert.Equal(t, orig, f.Digest(t), "undo restores the original content")
	if f.File != nil {
		// Not assert.Equal: a diff of two databases is no help; the first differing offset is.
		got := f.File(t)
		at := firstDiff(origFile, got)
		assert.True(t, at < 0, "undo of a run nothing touched since gives the file back byte for byte (%d bytes, was %d; first difference at offset %d)", len(got), len(origFile), at)
	}
	back := scan(t, st)
	require.Equal(t, len(snap.Sites), len(back.Sites))
	for i := range snap.Sites {
		assert.Equal(t, snap.Sites[i].Raw, back.Sites[i].Raw)
	}
	require.NoError(t, r.Restore(context.Background(), ch, false), "undoing again is harmless")
	assert.Equal(t, orig, f.Digest(t))
}

// firstDiff returns the first offset where a and b differ (the shorter one's length when one
// is a prefix of the other), -1 when they are equal.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func testUndoRefuses(t *testing.T, f Fixture) {
	snap := scan(t, f.Store)
	ch := apply(t, f, snap, f.plan(snap))
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

// RunReadOnly runs the part of the suite that applies to a store with no rewritable site (a
// profile whose names are raw identities, reported and never rewritten): scanning is
// deterministic and changes nothing, the store yields sites or identities (it reads something),
// no site is planned for a rewrite, and an Apply given its read-only sites is refused without a
// change and without a backup left behind.
func RunReadOnly(t *testing.T, newFixture Factory) {
	f := newFixture(t)
	before := f.Digest(t)
	a := scan(t, f.Store)
	b := scan(t, f.Store)
	assert.Equal(t, before, f.Digest(t), "scanning changes nothing")
	require.NotZero(t, int64(len(a.Sites)+len(a.Identities))+a.Records, "the fixture yields sites, identities or records")
	assert.Equal(t, a.Sites, b.Sites, "a scan is deterministic")
	assert.Equal(t, a.Identities, b.Identities, "a scan is deterministic")
	assert.Empty(t, f.plan(a), "nothing is planned on a read-only store")
	var ro []store.Edit
	for _, s := range a.Sites {
		require.True(t, s.ReadOnly, "%s %s: every site of a read-only profile is read-only", s.Loc, s.Path)
		ro = append(ro, store.Edit{Site: s, New: mcpname.Normalize(s.Name + ".x")})
	}
	if w, ok := f.Store.(store.Writer); ok && len(ro) > 0 {
		bk := filepath.Join(t.TempDir(), "backup-0001")
		_, err := w.Apply(context.Background(), a, ro, store.ApplyOptions{BackupPath: bk})
		require.Error(t, err, "an edit of a read-only site is refused")
		assert.Equal(t, before, f.Digest(t), "a refused edit changes nothing")
		assert.NoFileExists(t, bk, "and leaves no backup behind")
	}
}

// testOnlyTokens: a rewrite changes the planned name tokens and no other byte. For a file, the
// Change's byte edits undone on the new content give the original bytes exactly, and each new
// token is the planned name (an inserted member `,"<field>":<name>` for an absent site); for
// a table store, each value holding a planned site is its old bytes with the tokens spliced.
func testOnlyTokens(t *testing.T, f Fixture) {
	var origBytes []byte
	if f.Bytes != nil {
		origBytes = f.Bytes(t)
	}
	snap := scan(t, f.Store)
	edits := f.plan(snap)
	inserts := 0
	for _, e := range edits {
		if len(e.Site.Raw) == 0 {
			inserts++
		}
	}
	require.GreaterOrEqual(t, inserts, f.Inserts, "the fixture has absent members to insert")
	if f.Bytes == nil {
		testOnlyTokensInValues(t, f, snap, edits)
		return
	}
	ch := apply(t, f, snap, edits)
	{
		after := f.Bytes(t)
		sites, err := ch.AllSites()
		require.NoError(t, err)
		require.Len(t, sites, len(edits), "the change records every byte edit")
		assert.Equal(t, int64(len(after)), ch.After.Size)
		planned := map[string]int{}
		for _, e := range edits {
			planned[e.New]++
		}
		back := append([]byte(nil), after...)
		for i := len(sites) - 1; i >= 0; i-- {
			be := sites[i]
			end := be.At + int64(len(be.New))
			require.LessOrEqual(t, end, int64(len(back)), "byte edit %d lies inside the file", i)
			require.Equal(t, be.New, string(back[be.At:end]), "byte edit %d: the new token is at its offset", i)
			assert.Equal(t, string(origBytes[offsetIn(sites, i):offsetIn(sites, i)+int64(len(be.Old))]), be.Old, "byte edit %d: the old token is the original's", i)
			name := tokenName(t, be.New, be.Old == "")
			planned[name]--
			back = append(back[:be.At], append([]byte(be.Old), back[end:]...)...)
		}
		for n, c := range planned {
			assert.Zero(t, c, "%s: written as many times as planned", n)
		}
		require.Equal(t, len(origBytes), len(back))
		assert.True(t, bytes.Equal(origBytes, back), "outside the edited tokens every byte is the original's")
	}
}

// testOnlyTokensInValues is testOnlyTokens for a table store: each value holding a planned site
// is, after the rewrite, its old bytes with the planned names spliced in at the sites.
func testOnlyTokensInValues(t *testing.T, f Fixture, snap *store.Snapshot, edits []store.Edit) {
	inserts := slices.IndexFunc(edits, func(e store.Edit) bool { return len(e.Site.Raw) == 0 }) + 1
	require.NotNil(t, f.Value, "a store that is not one file gives its values (Fixture.Value)")
	require.Zero(t, inserts, "values of a table store get no inserted members")
	type val struct {
		before []byte
		edits  []store.Edit
	}
	vals := map[string]*val{}
	var order []string
	for _, e := range edits {
		k, _ := f.Value(t, e.Site)
		if vals[k] == nil {
			_, b := f.Value(t, e.Site)
			vals[k] = &val{before: b}
			order = append(order, k)
		}
		vals[k].edits = append(vals[k].edits, e)
	}
	apply(t, f, snap, edits)
	for _, k := range order {
		v := vals[k]
		_, after := f.Value(t, v.edits[0].Site)
		want := spliceNames(t, v.before, v.edits)
		assert.Equal(t, string(want), string(after), "%s: only the name tokens changed, each to its planned name", k)
	}
}

// spliceNames replaces, in a value, each edit's old token (checked at its offset) by the new
// name as a plain JSON string (UTF-8 as is, no HTML escaping).
func spliceNames(t *testing.T, val []byte, edits []store.Edit) []byte {
	t.Helper()
	sorted := slices.Clone(edits)
	slices.SortFunc(sorted, func(a, b store.Edit) int { return int(a.Site.Loc.Offset - b.Site.Loc.Offset) })
	var out []byte
	pos := int64(0)
	for _, e := range sorted {
		end := e.Site.Loc.Offset + int64(len(e.Site.Raw))
		require.LessOrEqual(t, end, int64(len(val)))
		require.Equal(t, string(e.Site.Raw), string(val[e.Site.Loc.Offset:end]), "the scanned token is at its offset")
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(e.New))
		out = append(append(out, val[pos:e.Site.Loc.Offset]...), bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
		pos = end
	}
	return append(out, val[pos:]...)
}

// offsetIn returns the offset in the original content of byte edit i (edits in offset order,
// At being offsets of the new content).
func offsetIn(sites []store.ByteEdit, i int) int64 {
	at := sites[i].At
	for _, b := range sites[:i] {
		at -= int64(len(b.New) - len(b.Old))
	}
	return at
}

// tokenName decodes a written token: a JSON string, or `,"<field>":<string>` when inserted.
func tokenName(t *testing.T, tok string, inserted bool) string {
	t.Helper()
	if inserted {
		require.True(t, strings.HasPrefix(tok, `,"`), "an inserted member starts with a comma: %s", tok)
		var m map[string]string
		require.NoError(t, json.Unmarshal([]byte("{"+tok[1:]+"}"), &m), "inserted member %s", tok)
		require.Len(t, m, 1)
		for _, v := range m {
			return v
		}
	}
	var s string
	require.NoError(t, json.Unmarshal([]byte(tok), &s), "token %s is a JSON string", tok)
	return s
}

// testTokenMismatch: an edit whose token is not the one at its offset (a stale scan) makes the
// whole Apply fail, with nothing changed and no backup left.
func testTokenMismatch(t *testing.T, f Fixture) {
	orig := f.Digest(t)
	snap := scan(t, f.Store)
	edits := f.plan(snap)
	i := slices.IndexFunc(edits, func(e store.Edit) bool { return len(e.Site.Raw) > 2 })
	require.GreaterOrEqual(t, i, 0, "an edit of a present token")
	stale := append([]byte(nil), edits[i].Site.Raw...)
	stale[1] ^= 0x20 // flips the case of a letter (or makes another byte)
	edits[i].Site.Raw = stale
	bk := filepath.Join(t.TempDir(), "backup-0001")
	_, err := f.Store.(store.Writer).Apply(context.Background(), snap, edits, store.ApplyOptions{BackupPath: bk})
	require.Error(t, err, "a stale token is refused")
	assert.ErrorIs(t, err, store.ErrInUse, "reported as a store changed since the scan")
	assert.ErrorIs(t, err, store.ErrTokenMismatch, "and says it is the token that is not there")
	assert.Equal(t, orig, f.Digest(t), "a refused rewrite changes nothing")
	assert.NoFileExists(t, bk, "and leaves no backup behind")
}

// testTouched: a store an agent changed after the scan (where the rewrite would write) is
// refused with ErrInUse; what the agent wrote stays.
func testTouched(t *testing.T, f Fixture) {
	require.NotNil(t, f.Touch, "the fixture says how an agent changes the store")
	snap := scan(t, f.Store)
	edits := f.plan(snap)
	f.Touch(t)
	touched := f.Digest(t)
	bk := filepath.Join(t.TempDir(), "backup-0001")
	_, err := f.Store.(store.Writer).Apply(context.Background(), snap, edits, store.ApplyOptions{BackupPath: bk})
	require.ErrorIs(t, err, store.ErrInUse, "a store changed since the scan is refused")
	assert.Equal(t, touched, f.Digest(t), "what the agent wrote stays, nothing else changes")
	assert.NoFileExists(t, bk, "and no backup is left behind")
}

// testBatches: for a store.BatchScanner (and BatchWriter), ScanBatches hands out the sites Scan
// returns, in the same order, and ApplyBatches of the same edits, given a few at a time, leaves
// the same names and values as Apply (on a second fixture built alike).
func testBatches(t *testing.T, f, g Fixture) {
	bs := f.Store.(store.BatchScanner)
	// fn owns each batch (store.BatchScanner): kept as handed out, not copied, and read only
	// after the scan, so a store that reused a batch's slice (or its Raw bytes) fails here.
	var batches [][]store.Site
	head, err := bs.ScanBatches(context.Background(), store.ScanOptions{Hash: true}, func(_ *store.Snapshot, batch []store.Site) error {
		batches = append(batches, batch)
		return nil
	})
	require.NoError(t, err)
	var sites []store.Site
	for _, b := range batches {
		sites = append(sites, b...)
	}
	whole := scan(t, f.Store)
	require.Equal(t, len(whole.Sites), len(sites), "the batches hold every site")
	for i := range sites {
		assert.Equal(t, whole.Sites[i].Loc.Row, sites[i].Loc.Row, "site %d", i)
		assert.Equal(t, whole.Sites[i].Loc.Offset, sites[i].Loc.Offset, "site %d", i)
		assert.Equal(t, whole.Sites[i].Path, sites[i].Path, "site %d", i)
		assert.Equal(t, whole.Sites[i].Name, sites[i].Name, "site %d", i)
		assert.Equal(t, string(whole.Sites[i].Raw), string(sites[i].Raw), "site %d", i)
	}
	bw, ok := f.Store.(store.BatchWriter)
	require.True(t, ok, "a BatchScanner is a BatchWriter")
	planned := *head
	planned.Sites = sites
	edits := f.plan(&planned)
	require.GreaterOrEqual(t, len(edits), max(f.MinEdits, 1))
	rest := edits
	_, err = bw.ApplyBatches(context.Background(), head, func() ([]store.Edit, error) {
		if len(rest) == 0 {
			return nil, io.EOF
		}
		n := min(3, len(rest))
		b := rest[:n]
		rest = rest[n:]
		return b, nil
	}, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "backup-0001")})
	require.NoError(t, err)
	gs := scan(t, g.Store)
	apply(t, g, gs, g.plan(gs))
	// Compared by what a rewrite writes (sites and the values holding them), not by digest:
	// two fixtures built a second apart may differ in columns an insert trigger stamps.
	fa, ga := scan(t, f.Store), scan(t, g.Store)
	require.Equal(t, len(ga.Sites), len(fa.Sites))
	for i := range fa.Sites {
		assert.Equal(t, ga.Sites[i].Name, fa.Sites[i].Name, "site %d: ApplyBatches writes what Apply writes", i)
		assert.Equal(t, string(ga.Sites[i].Raw), string(fa.Sites[i].Raw), "site %d", i)
		if f.Value != nil {
			kf, vf := f.Value(t, fa.Sites[i])
			_, vg := g.Value(t, ga.Sites[i])
			assert.Equal(t, string(vg), string(vf), "%s: ApplyBatches leaves the value Apply leaves", kf)
		}
	}
}
