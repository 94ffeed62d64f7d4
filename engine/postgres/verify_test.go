package postgres

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/postgres/pgtest"
	"github.com/sessionfix/sessionfix/store"
)

// TestVerifyHalvesNewestFirst: verify counts the pages of the batches written last first, in
// both halves at once (the batches dealt to the halves in turn from the last back), each
// batch's runs in one half and in page order, each run with its batch's index and xid.
func TestVerifyHalvesNewestFirst(t *testing.T) {
	var marks []*batchMark
	for i := range 5 {
		marks = append(marks, &batchMark{seq: i, xid: int64(100 + i), pages: [][2]int64{{int64(10 * i), int64(10*i + 1)}, {int64(10*i + 5), int64(10*i + 5)}}})
	}
	h := verifyHalves(marks)
	assert.Equal(t, []int32{4, 4, 2, 2, 0, 0}, h[0].idx)
	assert.Equal(t, []int32{3, 3, 1, 1}, h[1].idx)
	var lo, hi []uint32
	for i := range h[0].lo {
		lo, hi = append(lo, h[0].lo[i].BlockNumber), append(hi, h[0].hi[i].BlockNumber)
	}
	assert.Equal(t, []uint32{40, 45, 20, 25, 0, 5}, lo)
	assert.Equal(t, []uint32{42, 46, 22, 26, 2, 6}, hi, "the page after each run's last")
	assert.Equal(t, []string{"103", "103", "101", "101"}, h[1].xids)

	one := verifyHalves(marks[:1])
	assert.Equal(t, []int32{0, 0}, one[0].idx)
	assert.Empty(t, one[1].idx)
}

// TestWriterReusesItsBuffers: a writer copies each locked row's text, its new text and the
// write statement's text[] parameter into buffers it keeps from one batch to the next, so what
// an apply allocates per row is about the one copy of its new text the round trip's message
// holds (pgconn.Batch), not four: 400 chats of ~8 KB, 20 batches on each of the two writers.
func TestWriterReusesItsBuffers(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates for its own bookkeeping (21.8 KB a row here): not what the writer allocates")
	}
	srv := pgtest.Shared(t)
	u := srv.WithPassword(srv.DB(t))
	const n, pad = 400, 8 << 10
	execSQL(t, u, fmt.Sprintf(`CREATE TABLE chat (id text PRIMARY KEY, chat json);
INSERT INTO chat SELECT 'c' || lpad(g::text, 6, '0'), ('{"messages": [{"output": [{"type": "function_call", "id": "fc", "call_id": "k' || g || '", "name": "srv_tool.' || g || '", "status": "completed"}]}], "pad": "' || repeat('x', %d) || '"}')::json FROM generate_series(1, %d) g;`, pad, n))
	ctx := context.Background()
	st := Open(u, Options{Profiles: []*Profile{testProfile(t)}, BatchRows: 10})
	snap, err := st.Scan(ctx, store.ScanOptions{})
	require.NoError(t, err)
	edits := planEdits(snap)
	require.Len(t, edits, n)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	_, err = st.Apply(ctx, snap, edits, applyOpts(t, "run-alloc"))
	runtime.ReadMemStats(&m1)
	require.NoError(t, err)
	perRow := float64(m1.TotalAlloc-m0.TotalAlloc) / n
	t.Logf("%.0f bytes allocated per row of %d bytes", perRow, pad)
	assert.Less(t, perRow, 2.5*pad, "bytes allocated per row")
	assert.Contains(t, values(t, u, "chat", "chat")["c000007"], `"srv_tool_7"`)
}

// TestApplyOpensWritersAndOnePool: an apply opens its two writers' connections and one of its
// pool (the schema, the backup table); the verify pass counts its halves on the writers'
// connections, idle by then, rather than opening another (each connection is a server
// process started and an authentication). The verify pass still counts every batch.
func TestApplyOpensWritersAndOnePool(t *testing.T) {
	u, st, snap, edits, _ := scannedChats(t, 30)
	ctx := context.Background()
	before := st.sessions.Load()
	ch, err := st.Apply(ctx, snap, edits, applyOpts(t, "run-conns"))
	require.NoError(t, err)
	assert.Equal(t, int64(Writers+1), st.sessions.Load()-before, "connections an apply opened")
	require.NotNil(t, ch)
	assert.Contains(t, values(t, u, "chat", "chat")["c000021"], `"srv_tool_21"`)
}

// TestLockReadsJSONAsItIs: the lock statement returns a json column as it is (its binary form is
// its text: the bytes the plan read with ::text, without the server converting each row's text
// out and back in) and xmin as an xid, not through text; a text column stays text. What it
// returns is what the plan read, byte for byte (escapes, spacing, non-ASCII).
func TestLockReadsJSONAsItIs(t *testing.T) {
	srv := pgtest.Shared(t)
	u := srv.WithPassword(srv.DB(t))
	stored := `{"messages" : [{"output": [{"type": "function_call", "call_id": "k", "name": "srv_tool.\u00e9 ü"}]}],  "t":"\n"}`
	execSQL(t, u, `CREATE TABLE chat (id text PRIMARY KEY, chat json); CREATE TABLE chat_message (id text PRIMARY KEY, chat_id text, output text);
INSERT INTO chat VALUES ('c1', '`+stored+`'::json);`)
	ctx := context.Background()
	st := Open(u, Options{Profiles: []*Profile{testProfile(t)}})
	st.prof = testProfile(t)
	conn, err := st.connectPipe(ctx)
	require.NoError(t, err)
	defer conn.Close(ctx)
	a := &applier{s: st, reads: mustReads(t, st)}
	w := &writer{a: a, conn: conn}
	types := map[string][]uint32{}
	for _, tr := range a.reads {
		b := &pgconn.Batch{}
		require.NoError(t, a.queueLock(ctx, w, b, tr, []*rowEdits{{tr: tr, key: "c1"}}))
		for q, sd := range w.stmts {
			if !strings.Contains(q, "FROM "+ident(tr.tb.name)+" ") {
				continue
			}
			var oids []uint32
			for _, f := range sd.Fields {
				oids = append(oids, f.DataTypeOID)
			}
			types[tr.spec.Table] = oids
		}
		if tr.spec.Table != "chat" {
			continue
		}
		_, err := conn.Exec(ctx, "BEGIN")
		require.NoError(t, err)
		br := conn.PgConn().ExecBatch(ctx, b)
		got, err := a.readLock(br, tr, &w.vals)
		require.NoError(t, err)
		require.NoError(t, br.Close())
		_, err = conn.Exec(ctx, "ROLLBACK")
		require.NoError(t, err)
		require.NotNil(t, got["c1"])
		assert.Equal(t, stored, string(got["c1"].val), "the text as stored")
		var x int64
		require.NoError(t, conn.QueryRow(ctx, "SELECT xmin::text::bigint FROM chat").Scan(&x))
		assert.Equal(t, x, got["c1"].xmin)
	}
	// oid, tid, text, json (114) or text (25), xid (28), text
	assert.Equal(t, []uint32{26, 27, 25, 114, 28, 25}, types["chat"])
	assert.Equal(t, []uint32{26, 27, 25, 25, 28, 25}, types["chat_message"])
}
