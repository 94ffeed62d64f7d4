package rewrite

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/store"
)

// batchCounter is a JSONL store (a store.SpliceWriter) that records the batches its
// ApplyBatches is handed: how many, the largest, and every edit's offset and new name.
type batchCounter struct {
	*jsonl.Store
	batches, largest int
	got              []string
}

func (b *batchCounter) ApplyBatches(ctx context.Context, snap *store.Snapshot, next func() ([]store.Edit, error), opt store.ApplyOptions) (*store.Change, error) {
	return b.Store.ApplyBatches(ctx, snap, func() ([]store.Edit, error) {
		edits, err := next()
		if err == nil {
			b.batches++
			b.largest = max(b.largest, len(edits))
			for _, e := range edits {
				b.got = append(b.got, fmt.Sprintf("%d:%s", e.Site.Loc.Offset, e.New))
			}
		}
		return edits, err
	}, opt)
}

// TestSpliceWriterGetsEditsInSmallBatches: a store planned whole whose writer splices edits as
// it copies (store.SpliceWriter: engine/jsonl) is handed its edits editBatch at a time from the
// plan's decisions, not as one copy of every site (at 275eabf: Apply with all 700 edits, and
// ApplyBatches never called); the edits are the plan's, in order, and the run records the same
// renames and names, the file the same bytes, and undo restores it.
func TestSpliceWriterGetsEditsInSmallBatches(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 700 {
		name := "mcp__a.b__c"
		if i%3 == 0 {
			name = "mcp__x.y__z"
		}
		lines = append(lines, call(fmt.Sprint(i), name), `{"message":{"parts":[{"text":"mcp__a.b__c"}]}}`)
	}
	p := writeSession(t, dir, "s.jsonl", lines...)
	before, err := os.ReadFile(p)
	require.NoError(t, err)
	st := &batchCounter{Store: jsonl.Open(p, qwen.Session)}
	var want []string
	res, err := Process(context.Background(), []store.Store{st}, naming.Policy{}, ProcessOptions{Apply: true, ApplyOptions: ApplyOptions{StateDir: filepath.Join(t.TempDir(), "state")}},
		func(r *StoreResult) error {
			require.NoError(t, r.ScanErr)
			require.NotNil(t, r.Outcome)
			require.NoError(t, r.Outcome.Err)
			for _, e := range r.Plan.Edits() {
				want = append(want, fmt.Sprintf("%d:%s", e.Site.Loc.Offset, e.New))
			}
			return nil
		})
	require.NoError(t, err)
	require.Len(t, want, 700)
	assert.Equal(t, want, st.got, "the plan's edits, in order")
	assert.Equal(t, 3, st.batches, "700 edits, %d at a time", editBatch)
	assert.Equal(t, editBatch, st.largest)

	after, err := os.ReadFile(p)
	require.NoError(t, err)
	expect := string(before)
	for _, n := range []string{"mcp__a.b__c", "mcp__x.y__z"} {
		expect = replaceCalls(expect, n, mcpname.Normalize(n))
	}
	assert.Equal(t, expect, string(after))
	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	require.Len(t, m.Files, 1)
	assert.Equal(t, 700, m.Files[0].Edits)
	assert.Equal(t, []runlog.Rename{
		{Old: "mcp__a.b__c", New: mcpname.Normalize("mcp__a.b__c"), Count: 466},
		{Old: "mcp__x.y__z", New: mcpname.Normalize("mcp__x.y__z"), Count: 234},
	}, m.Files[0].Renames)
	outs, _, err := runlog.UndoRun(context.Background(), res.Dir, m, all.Open, false, time.Now)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	require.NoError(t, outs[0].Err)
	restored, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(restored))
}

// replaceCalls replaces old by new where it is a call's name (`"name":"old"`).
func replaceCalls(s, old, new string) string {
	out := ""
	key := `"name":"` + old + `"`
	for {
		i := indexOf(s, key)
		if i < 0 {
			return out + s
		}
		out += s[:i] + `"name":"` + new + `"`
		s = s[i+len(key):]
	}
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// TestSpliceSpoolKeepsWhatTheWriterReads: a spool for a store.SpliceWriter keeps of each edit
// only Loc.Offset, Loc.Line, Raw, Field and New (what it reads back is that, field for field,
// Raw nil and empty apart), counts renames and names from the whole edits, and reads every
// batch back into the slices of the one before.
func TestSpliceSpoolKeepsWhatTheWriterReads(t *testing.T) {
	sp, err := newSpool(true)
	require.NoError(t, err)
	t.Cleanup(sp.remove)
	batches := spoolEdits()
	var want [][]store.Edit
	for _, b := range batches {
		var w []store.Edit
		for _, e := range b {
			w = append(w, store.Edit{Site: store.Site{Loc: store.Loc{Line: e.Site.Loc.Line, Offset: e.Site.Loc.Offset}, Raw: e.Site.Raw, Field: e.Site.Field}, New: e.New})
		}
		want = append(want, w)
		require.NoError(t, sp.add(b))
	}
	assert.Equal(t, 7, sp.edits)
	assert.Equal(t, 7, sp.rc.names)
	assert.Len(t, sp.renames(), 7)
	next, err := sp.reader()
	require.NoError(t, err)
	var first *store.Edit
	for i, w := range want {
		got, err := next()
		require.NoError(t, err, "batch %d", i)
		assert.Equal(t, w, got, "batch %d", i)
		if first == nil {
			first = &got[0]
		} else {
			assert.Same(t, first, &got[0], "batch %d is read into the slice of the one before", i)
		}
	}
	_, err = next()
	assert.ErrorIs(t, err, io.EOF)
}
