package rewrite

import (
	"errors"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// spoolEdits are batches with every field of store.Edit set somewhere: rows that go on across
// edits, lines, rowids, negative and large offsets, UTF-16 units (nil, empty, surrogates),
// Raw nil, empty and set, object keys, groups, read-only sites, non-ASCII names.
func spoolEdits() [][]store.Edit {
	site := func(row string, off int64, name string) store.Site {
		return store.Site{Loc: store.Loc{Row: row, Offset: off, RowID: 7}, Kind: store.SiteCall, Path: "data.tool",
			Name: name, Raw: []byte(`"` + name + `"`)}
	}
	a := site("part id=prt_1", 12, "mcp__a.b__c")
	b := site("part id=prt_1", 90, "mcp__a.b__d")
	b.Group, b.Field, b.CallID, b.Server = "g1", "name", "call_9", "a.b"
	c := site("part id=prt_2", 1<<40, "mcp__ünï__x")
	c.Loc.RowID = -3
	c.Units = []uint16{0xd800, 'x'}
	c.Key, c.Scope = true, "tools.byName"
	b.Loc.RowVersion, b.Loc.RowSum = 4711, -1<<62 // a database row's state when read
	d := store.Site{Loc: store.Loc{Line: 4, Offset: 3}, Kind: "namespace", Path: "payload.namespace", Raw: []byte{}, Units: []uint16{}}
	e := site("", 0, "x")
	e.Raw, e.ReadOnly = nil, true
	return [][]store.Edit{
		{{Site: a, New: "mcp__a_b__c_1abcdef"}, {Site: b, New: "mcp__a_b__d"}, {Site: c, New: ""}},
		{{Site: c, New: "mcp__n__x_0000000"}},
		{{Site: d, New: "mcp__ns"}, {Site: e, New: "y"}, {Site: a, New: "z"}},
	}
}

// TestSpoolRoundTrip: what the spool reads back is what was added, batch by batch and field
// for field (nil and empty slices apart), then io.EOF; the counts the run records.
func TestSpoolRoundTrip(t *testing.T) {
	sp, batches := filledSpool(t)
	require.NoError(t, sp.add(nil), "an empty batch is not written")
	next, err := sp.reader()
	require.NoError(t, err)
	readBatches(t, next, batches)
	_, err = next()
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, 7, sp.edits)
	assert.Equal(t, 7, sp.rc.names)
}

// TestSpoolCutShort: a spool that ends inside a batch is an error, not the end.
func TestSpoolCutShort(t *testing.T) {
	whole := appendEdits(nil, spoolEdits()[0])
	for n := 1; n < len(whole); n++ {
		sp, err := newSpool(false)
		require.NoError(t, err)
		_, err = sp.w.Write(whole[:n])
		require.NoError(t, err)
		next, err := sp.reader()
		require.NoError(t, err)
		_, err = next()
		sp.remove()
		require.Error(t, err, "cut at %d of %d", n, len(whole))
		assert.False(t, errors.Is(err, io.EOF), "cut at %d: %v", n, err)
	}
}

// TestSpoolLeavesNoFile: the spool has no name in the temp directory from the moment it is
// created (a run killed at any instant leaves none behind: a 10M-part database's is ~330 MB),
// it still reads back whole, and it is closed once read to its end (its pages freed before the
// store's check and commit); reading on after that is io.EOF again, and remove is harmless.
func TestSpoolLeavesNoFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows keeps the name of an open file: the spool is removed at the end there")
	}
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	sp, batches := filledSpool(t)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, ents, "the spool is unlinked when created")
	next, err := sp.reader()
	require.NoError(t, err)
	readBatches(t, next, batches)
	assert.NotEqual(t, ^uintptr(0), sp.f.Fd(), "still open before the end was read")
	_, err = next()
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, ^uintptr(0), sp.f.Fd(), "closed once read to its end")
	_, err = next()
	assert.ErrorIs(t, err, io.EOF)
	sp.remove()
	ents, err = os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, ents)
}

// filledSpool is a new spool (removed when the test ends) holding the batches of spoolEdits.
func filledSpool(t *testing.T) (*spool, [][]store.Edit) {
	t.Helper()
	sp, err := newSpool(false)
	require.NoError(t, err)
	t.Cleanup(sp.remove)
	batches := spoolEdits()
	for _, b := range batches {
		require.NoError(t, sp.add(b))
	}
	return sp, batches
}

// readBatches reads len(want) batches with next and compares each with want's.
func readBatches(t *testing.T, next func() ([]store.Edit, error), want [][]store.Edit) {
	t.Helper()
	for i, w := range want {
		got, err := next()
		require.NoError(t, err, "batch %d", i)
		assert.Equal(t, w, got, "batch %d", i)
	}
}

// TestSpoolReaderAfterEnd: once read to its end the spool is closed, so a second reader (an
// apply that would read the plan again) is an error, never a silent empty plan; before the end,
// a second reader starts again from the first batch.
func TestSpoolReaderAfterEnd(t *testing.T) {
	sp, batches := filledSpool(t)
	next, err := sp.reader()
	require.NoError(t, err)
	readBatches(t, next, batches[:1])
	next, err = sp.reader()
	require.NoError(t, err, "not at the end yet: read again from the start")
	readBatches(t, next, batches)
	_, err = next()
	require.ErrorIs(t, err, io.EOF)
	_, err = sp.reader()
	assert.Error(t, err, "the spool is closed after its end: reading it again fails")
}

// TestSpoolFlushErrorSaysWhat: a spool whose last write fails only when reader flushes it (a temp
// directory filled just then) says what it was doing, as a failed add does; review16 saw a bare
// "write …: no space left on device" from fix --apply.
func TestSpoolFlushErrorSaysWhat(t *testing.T) {
	sp, _ := filledSpool(t) // a few hundred bytes: still in the writer's buffer
	require.NoError(t, sp.f.Close())
	_, err := sp.reader()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "keep the plan on disk: ")
	assert.ErrorIs(t, err, os.ErrClosed)
}
