package rewrite

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
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
	// more counts edits whose site has more than a store.SpliceWriter reads (Loc.Offset,
	// Loc.Line, Raw, Field).
	more int
}

func (b *batchCounter) ApplyBatches(ctx context.Context, snap *store.Snapshot, next func() ([]store.Edit, error), opt store.ApplyOptions) (*store.Change, error) {
	return b.Store.ApplyBatches(ctx, snap, func() ([]store.Edit, error) {
		edits, err := next()
		if err == nil {
			b.batches++
			b.largest = max(b.largest, len(edits))
			for _, e := range edits {
				b.got = append(b.got, fmt.Sprintf("%d:%s", e.Site.Loc.Offset, e.New))
				lean := store.Site{Loc: store.Loc{Line: e.Site.Loc.Line, Offset: e.Site.Loc.Offset}, Raw: e.Site.Raw, Field: e.Site.Field}
				if !reflect.DeepEqual(lean, e.Site) {
					b.more++
				}
			}
		}
		return edits, err
	}, opt)
}

// TestSpliceWriterGetsEditsInSmallBatches: a store planned whole whose writer splices edits as
// it copies (store.SpliceWriter: engine/jsonl) is handed its edits editBatch at a time from the
// plan's decisions, not as one copy of every site (at 275eabf: Apply with all 700 edits, and
// ApplyBatches never called), each with only what the writer reads of its site (before: a copy
// of the whole site); the edits are the plan's, in order, and the run records the same
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
	assert.Zero(t, st.more, "edits carry only what a store.SpliceWriter reads (red before: whole sites)")

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

// denseSpoolBatch is a batch of n edits as a dense session's are (a JSONL store's rewrite:
// lines, offsets, tokens, a group's field); every 7th has its own Loc.Row so rows go on across
// edits and chunks.
func denseSpoolBatch(n int, from int64) []store.Edit {
	b := make([]store.Edit, n)
	for i := range b {
		name := fmt.Sprintf("mcp__srv.%d__tool_%d", i%13, i%5)
		st := store.Site{Loc: store.Loc{Line: from + int64(i), Offset: (from + int64(i)) * 300}, Kind: store.SiteCall, Path: "message.parts[0].functionCall.name",
			Name: name, Raw: []byte(`"` + name + `"`), Field: "name"}
		if i%7 == 0 {
			st.Loc.Row = fmt.Sprintf("row %d", i)
		}
		b[i] = store.Edit{Site: st, New: fmt.Sprintf("mcp__srv_%d__tool_%d", i%13, i%5)}
	}
	return b
}

// TestSpliceSpoolReadsInChunks: a store.SpliceWriter's spool reads a batch back spoolChunk
// edits at a time (a 10,000-edit batch needed 2.6 MB of store.Edit at once): the chunks, in
// order, are the batch's lean edits, rows carried across chunks, then the next batch; a spool
// cut anywhere inside a batch read in chunks is an error, never the end.
func TestSpliceSpoolReadsInChunks(t *testing.T) {
	batches := [][]store.Edit{denseSpoolBatch(1000, 0), denseSpoolBatch(300, 5000)}
	lean := func(b []store.Edit) []store.Edit {
		var out []store.Edit
		for _, e := range b {
			out = append(out, store.Edit{Site: store.Site{Loc: store.Loc{Line: e.Site.Loc.Line, Offset: e.Site.Loc.Offset}, Raw: e.Site.Raw, Field: e.Site.Field}, New: e.New})
		}
		return out
	}
	sp, err := newSpool(true)
	require.NoError(t, err)
	t.Cleanup(sp.remove)
	for _, b := range batches {
		require.NoError(t, sp.add(b))
	}
	next, err := sp.reader()
	require.NoError(t, err)
	var got []store.Edit
	chunks := 0
	for {
		c, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.LessOrEqual(t, len(c), spoolChunk)
		require.NotEmpty(t, c)
		for _, e := range c {
			e.Site.Raw = slices.Clone(e.Site.Raw) // the next chunk is read into the same bytes
			got = append(got, e)
		}
		chunks++
	}
	want := append(lean(batches[0]), lean(batches[1])...)
	require.Len(t, got, len(want))
	for i := range want {
		if !assert.Equal(t, want[i], got[i], "edit %d", i) {
			break
		}
	}
	assert.Equal(t, 4+2, chunks, "1,000 edits in 4 chunks, 300 in 2")

	// Rows (a table store's spool reads whole batches): carried across chunks too.
	whole := appendEdits(nil, batches[0])
	d := &editDecoder{r: bufio.NewReader(bytes.NewReader(whole)), reuse: true}
	var rows []string
	for {
		c, err := d.batch()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		for _, e := range c {
			rows = append(rows, e.Site.Loc.Row)
		}
	}
	require.Len(t, rows, 1000)
	for i, r := range rows {
		assert.Equal(t, batches[0][i].Site.Loc.Row, r, "edit %d", i)
	}
	for _, n := range []int{1, len(whole) / 3, len(whole) - 1} {
		d := &editDecoder{r: bufio.NewReader(bytes.NewReader(whole[:n])), reuse: true}
		var err error
		for err == nil {
			_, err = d.batch()
		}
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "cut at %d of %d", n, len(whole))
	}
}

// TestSpliceSpoolAllocatesLittle: spools made one after the other reuse their buffers
// (spoolWriters, spoolReaders, the decoder's chunk): filling and reading back a spool of two
// batches of 5,000 edits allocates under 256 KB on average, collections or not (the buffers
// are kept in free lists, not sync.Pools). Before, each allocated its 256 KB
// write and read buffers, its batch's encoding (~0.4 MB with growth) and 1.3 MB of store.Edit
// to read a batch back: ~2.3 MB, ~40 % of what fix --apply allocated on make bench's dense
// corpus.
func TestSpliceSpoolAllocatesLittle(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items at random")
	}
	batches := [][]store.Edit{denseSpoolBatch(5000, 0), denseSpoolBatch(5000, 5000)}
	round := func() {
		sp, err := newSpool(true)
		require.NoError(t, err)
		defer sp.remove()
		for _, b := range batches {
			require.NoError(t, sp.add(b))
		}
		next, err := sp.reader()
		require.NoError(t, err)
		n := 0
		for {
			c, err := next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			n += len(c)
		}
		require.Equal(t, 10000, n)
	}
	round() // the pools filled
	const rounds = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range rounds {
		// Two collections empty a sync.Pool (red before: ~0.6 MB a spool, its two buffers
		// again): fix --apply, held to cmd/sessionfix's memory limit, collects every few MB.
		runtime.GC()
		runtime.GC()
		round()
	}
	runtime.ReadMemStats(&after)
	perSpool := (after.TotalAlloc - before.TotalAlloc) / rounds
	assert.Less(t, perSpool, uint64(256<<10), "bytes allocated per spool")
	t.Logf("%d bytes allocated per spool", perSpool)
}
