package sqlite_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/storetest"
)

// TestApplyRowsThroughTheHandle: the rows are re-read and UPDATEd on the write connection's
// own handle with values bound in C (rows.go): rows found by a REAL, an integer and a text key
// of a WITHOUT ROWID table, a BLOB value and an empty-text-adjacent TEXT value keep their
// storage class, a row found by rowid is rewritten, and undo restores every byte.
func TestApplyRowsThroughTheHandle(t *testing.T) {
	ctx := context.Background()
	prof, err := sqlite.ParseProfile([]byte(`{"name":"kv","agent":"kv","tables":[
		{"table":"kv","column":"doc","sites":[{"path":"$.tool"}]},
		{"table":"plain","column":"doc","sites":[{"path":"$.tool"}]}]}`))
	require.NoError(t, err)
	p := buildDB(t, "kv.db", `sql:CREATE TABLE kv (k PRIMARY KEY, doc) WITHOUT ROWID;
INSERT INTO kv VALUES (2.5, '{"tool":"lit.real"}');
INSERT INTO kv VALUES (7, CAST('{"tool":"lit.blob"}' AS BLOB));
INSERT INTO kv VALUES ('t', '{"tool":"lit.text","x":""}');
CREATE TABLE plain (doc TEXT);
INSERT INTO plain VALUES ('{"tool":"lit.rowid"}');
`)
	st := sqlite.OpenWith(p, prof, sqlite.Options{})
	snap := scanStore(t, st)
	before := dumpText(t, p)
	edits := storetest.Edits(snap, storetest.ProviderSafe)
	require.Len(t, edits, 4)
	ch, err := st.Apply(ctx, snap, edits, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.NoError(t, err)
	assert.Equal(t, `text {"tool":"lit_real_`+mcpHash(t, "lit.real")+`"}`, queryString(t, p, "SELECT typeof(doc) || ' ' || doc FROM kv WHERE k = 2.5"))
	assert.Equal(t, `blob {"tool":"lit_blob_`+mcpHash(t, "lit.blob")+`"}`, queryString(t, p, "SELECT typeof(doc) || ' ' || CAST(doc AS TEXT) FROM kv WHERE k = 7"))
	assert.Equal(t, `text {"tool":"lit_text_`+mcpHash(t, "lit.text")+`","x":""}`, queryString(t, p, "SELECT typeof(doc) || ' ' || doc FROM kv WHERE k = 't'"))
	assert.Equal(t, `{"tool":"lit_rowid_`+mcpHash(t, "lit.rowid")+`"}`, queryString(t, p, "SELECT doc FROM plain"))
	require.NoError(t, sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, false))
	assert.Equal(t, before, dumpText(t, p))
}

// TestBackupBesideALargeWALTransaction: in WAL mode the backup copy runs while the rows are
// rewritten (apply.go); a transaction far larger than the page cache (SQLite spills dirty
// pages — to the log in WAL mode, never to the main file) leaves the backup byte for byte the
// main file as it was before the change (bar the header's two journal-mode bytes), with the
// recorded hash, and undo goes back to it.
func TestBackupBesideALargeWALTransaction(t *testing.T) {
	ctx := context.Background()
	prof, err := sqlite.ParseProfile([]byte(`{"name":"kv","agent":"kv","tables":[
		{"table":"plain","column":"doc","sites":[{"path":"$.tool"}]}]}`))
	require.NoError(t, err)
	p := buildDB(t, "big.db", `sql:CREATE TABLE plain (doc TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1500)
INSERT INTO plain SELECT '{"pad":"' || printf('%.8000c', 'x') || '","tool":"lit.n' || i || '"}' FROM c;
`)
	require.Equal(t, "wal", queryString(t, p, "PRAGMA journal_mode"))
	orig, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Greater(t, len(orig), 8<<20, "the change must not fit the page cache (2 MiB by default)")
	st := sqlite.OpenWith(p, prof, sqlite.Options{})
	snap := scanStore(t, st)
	edits := storetest.Edits(snap, storetest.ProviderSafe)
	require.Len(t, edits, 1500)
	bk := filepath.Join(t.TempDir(), "bk")
	ch, err := st.Apply(ctx, snap, edits, store.ApplyOptions{BackupPath: bk})
	require.NoError(t, err)
	assert.Equal(t, `{"pad":"`+strings.Repeat("x", 8000)+`","tool":"lit_n7_`+mcpHash(t, "lit.n7")+`"}`,
		queryString(t, p, "SELECT doc FROM plain WHERE rowid = 7"))
	got, err := os.ReadFile(bk)
	require.NoError(t, err)
	want := bytes.Clone(orig)
	want[18], want[19] = 1, 1
	assert.True(t, bytes.Equal(want, got), "the backup is the main file before the change (%d bytes, want %d)", len(got), len(want))
	sum := sha256.Sum256(got)
	assert.Equal(t, hex.EncodeToString(sum[:]), ch.Before.SHA256)
	require.NoError(t, sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, false))
	assert.Equal(t, "lit.n7", queryString(t, p, "SELECT json_extract(doc, '$.tool') FROM plain WHERE rowid = 7"))
}
