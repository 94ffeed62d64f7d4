package rewrite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/runlog"
)

// ReadRun keeps every entry light (no Sites); undo reads each back when it restores that store
// and refuses an entry whose bytes changed after ReadRun checked them (the seal was checked on
// the old bytes), restoring the others; the manifest undo writes then records what it did and
// is read back whole.
func TestUndoRefusesAnEntryChangedAfterItWasChecked(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("1", "mcp__a.b__c"), resp("1", "mcp__a.b__c"))
	b := writeSession(t, dir, "b.jsonl", call("1", "mcp__x.y__z"))
	origB, _ := os.ReadFile(b)
	state := filepath.Join(t.TempDir(), "state")
	now := func() time.Time { return time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC) }
	res, err := Apply(context.Background(), Build(scanned(t, a, b), naming.Policy{}), ApplyOptions{StateDir: state, Now: now})
	require.NoError(t, err)
	newA, _ := os.ReadFile(a)
	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	require.NoError(t, runlog.CheckRun(res.Dir, m))
	require.Len(t, m.Files, 2)
	require.Equal(t, a, m.Files[0].Ref.Path)
	for i := range m.Files {
		assert.Nil(t, m.Files[i].Sites, "entry %d is light", i)
	}

	// a's entry edited in place after the check: one byte of its first site's offset.
	mp := filepath.Join(res.Dir, manifestName)
	raw, err := os.ReadFile(mp)
	require.NoError(t, err)
	i := indexAfter(raw, []byte(`"site_data": "`)) // in the first entry: a's (entries in path order)
	require.Positive(t, i)
	require.Less(t, i, indexAfter(raw, []byte(`"path": "`+b+`"`)), "a's entry comes first")
	raw[i] ^= 1
	require.NoError(t, os.WriteFile(mp, raw, 0o600))

	outs, m2, err := runlog.UndoRun(context.Background(), res.Dir, m, all.Open, false, now)
	require.NoError(t, err)
	require.Len(t, outs, 2)
	for _, o := range outs {
		if o.Ref.Path == a {
			require.True(t, errors.Is(o.Err, runlog.ErrUntrustedRun), "%v", o.Err)
			assert.Contains(t, o.Err.Error(), "changed after undo checked it")
		} else {
			assert.NoError(t, o.Err)
		}
	}
	got, _ := os.ReadFile(a)
	assert.Equal(t, newA, got, "a keeps the run's bytes")
	got, _ = os.ReadFile(b)
	assert.Equal(t, origB, got, "b restored")
	assert.Equal(t, runlog.StatePartiallyUndone, m2.State)

	// The manifest undo wrote: sealed, b restored with its entry whole (its Sites read back),
	// a recorded as ReadRun checked it, without the sites it can no longer vouch for.
	m3, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	assert.False(t, m3.Files[0].Restored)
	assert.True(t, m3.Files[1].Restored)
	assert.Equal(t, m.Files[0].After, m3.Files[0].After)
	e, err := m3.Entry(0)
	require.NoError(t, err)
	assert.False(t, e.HasSites())
	e, err = m3.Entry(1)
	require.NoError(t, err)
	sites, err := e.AllSites()
	require.NoError(t, err)
	assert.Len(t, sites, 1)
	// m2's light entries point into the new file too.
	e, err = m2.Entry(1)
	require.NoError(t, err)
	sites, err = e.AllSites()
	require.NoError(t, err)
	assert.Len(t, sites, 1)
}

// A run killed before its manifest was final (the manifest of its start: state "applying", no
// files) is recovered from its journal with light entries, read back from their journal
// lines: undo restores byte for byte.
func TestUndoFromTheJournalReadsEntriesBack(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("1", "mcp__a.b__c"), resp("1", "mcp__a.b__c"), call("2", "mcp__a.b__d"))
	orig, _ := os.ReadFile(a)
	state := filepath.Join(t.TempDir(), "state")
	now := func() time.Time { return time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC) }
	res, err := Apply(context.Background(), Build(scanned(t, a), naming.Policy{}), ApplyOptions{StateDir: state, Now: now})
	require.NoError(t, err)
	writeManifest(t, res.Dir, &runlog.Manifest{Version: runlog.ManifestVersion, RunID: res.RunID, Created: now(), Roots: []string{dir}, State: runlog.StateApplying})
	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	require.Len(t, m.Files, 1)
	assert.Nil(t, m.Files[0].Sites)
	// The manifest records no file: the entry is read back from its journal line.
	e, err := m.Entry(0)
	require.NoError(t, err)
	sites, err := e.AllSites()
	require.NoError(t, err)
	assert.Len(t, sites, 3)
	outs, _, err := undo(context.Background(), res.Dir, all.Open, false, now)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	require.NoError(t, outs[0].Err)
	got, _ := os.ReadFile(a)
	assert.Equal(t, orig, got)
}

func indexAfter(b, sep []byte) int {
	for i := 0; i+len(sep) < len(b); i++ {
		if string(b[i:i+len(sep)]) == string(sep) {
			return i + len(sep)
		}
	}
	return -1
}

// A manifest cut short (a disk that filled, a copy that stopped) leaves the files to the
// journal, but not the roots every check trusts: the refusal says the manifest is unreadable
// and why, not only that the run records no roots.
func TestCheckRunNamesAnUnreadableManifest(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("1", "mcp__a.b__c"))
	state := filepath.Join(t.TempDir(), "state")
	res, err := Apply(context.Background(), Build(scanned(t, a), naming.Policy{}), ApplyOptions{StateDir: state})
	require.NoError(t, err)
	mp := filepath.Join(res.Dir, manifestName)
	raw, err := os.ReadFile(mp)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(mp, raw[:len(raw)/2], 0o600))

	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err, "the files come back from the journal")
	require.Len(t, m.Files, 1)
	err = runlog.CheckRun(res.Dir, m)
	require.True(t, errors.Is(err, runlog.ErrUntrustedRun), "%v", err)
	assert.Contains(t, err.Error(), "manifest.json: unreadable (manifest does not decode: unexpected EOF), and the journal does not record the run's roots")
}
