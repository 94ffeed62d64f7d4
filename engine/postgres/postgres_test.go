package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/postgres/pgtest"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		childApply()
		return
	}
	pgtest.Main(m)
}

// testProfile is Open WebUI's tables as a plain profile (the engine knows no agent: the room's
// own profile is tested in agent/openwebui), with chat_message rows read with their chat.
func testProfile(t testing.TB) *Profile {
	t.Helper()
	p, err := sqlite.ParseProfile([]byte(`{"name": "owui-test", "agent": "test",
 "detect": ["chat.chat"],
 "tables": [
  {"table": "chat", "column": "chat", "key": ["id"],
   "sites": [
    {"path": "$.history.messages.*.output[*].name", "when": {"path": "$.history.messages.*.output[*].type", "in": ["function_call"]}, "kind": "call", "call_id": "$.history.messages.*.output[*].call_id"},
    {"path": "$.messages[*].output[*].name", "when": {"path": "$.messages[*].output[*].type", "in": ["function_call"]}, "kind": "call", "call_id": "$.messages[*].output[*].call_id"}]},
  {"table": "chat_message", "column": "output", "key": ["id"], "optional": true, "parent": {"table": "chat", "column": "chat_id"},
   "sites": [{"path": "$[*].name", "when": {"path": "$[*].type", "in": ["function_call"]}, "kind": "call", "call_id": "$[*].call_id"}]}]}`))
	require.NoError(t, err)
	return p
}

func execScript(t testing.TB, u, path string) { pgtest.ExecFile(t, u, path) }

func execSQL(t testing.TB, u, script string) { pgtest.Exec(t, u, script) }

// openwebuiDB is a new database holding Open WebUI's tables and rows (fixtures/openwebui-schema);
// it returns its URL with the password.
func openwebuiDB(t testing.TB) (string, *pgtest.Server) {
	srv := pgtest.Shared(t)
	u := srv.WithPassword(srv.DB(t))
	execScript(t, u, "../../fixtures/openwebui-schema/schema_postgres.psql")
	execScript(t, u, "../../fixtures/openwebui-schema/rows_postgres.psql")
	return u, srv
}

func values(t testing.TB, u, table, column string) map[string]string {
	return pgtest.Values(t, u, table, "id", column)
}

// rename is the test's rewrite rule: every site a provider would reject gets '.'→'_', other
// bytes → "x" (enough to make each edit change bytes).
func rename(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == '.':
			b.WriteByte('_')
		case r > 0x7f:
			b.WriteByte('x')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func planEdits(snap *store.Snapshot) []store.Edit {
	var edits []store.Edit
	for _, s := range snap.Sites {
		if n := rename(s.Name); n != s.Name && !s.ReadOnly {
			edits = append(edits, store.Edit{Site: s, New: n})
		}
	}
	return edits
}

// expected is what a value becomes with its edits: each token replaced, every other byte kept.
func expected(old string, edits []store.Edit) string {
	out := []byte(old)
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		tok, _ := json.Marshal(e.New)
		at := int(e.Site.Loc.Offset)
		out = append(out[:at:at], append(tok, out[at+len(e.Site.Raw):]...)...)
	}
	return string(out)
}

func applyOpts(t testing.TB, run string) store.ApplyOptions {
	return store.ApplyOptions{RunID: run, BackupPath: filepath.Join(t.TempDir(), "0001-db")}
}

// TestScanApplyUndoByteExact: the json columns of Open WebUI's tables are read as the exact
// text the server stores (", " separators, \uXXXX escapes), each name token is replaced and
// nothing else (chat.chat and chat_message.output of one chat in one batch), the old text is in
// sessionfix_backup with the run id, and undo gives every byte back.
func TestScanApplyUndoByteExact(t *testing.T) {
	u, _ := openwebuiDB(t)
	ctx := context.Background()
	before := map[string]map[string]string{"chat.chat": values(t, u, "chat", "chat"), "chat_message.output": values(t, u, "chat_message", "output")}
	st := Open(u, Options{Profiles: []*Profile{testProfile(t)}})
	snap, err := st.Scan(ctx, store.ScanOptions{})
	require.NoError(t, err)
	assert.Equal(t, "owui-test", st.ProfileName())
	assert.Equal(t, store.KindPostgres, snap.Ref.Kind)
	assert.NotContains(t, snap.Ref.Path, "@127.0.0.1"+":x") // sanity: a URL
	names := map[string]int{}
	for _, s := range snap.Sites {
		names[s.Name]++
		assert.NotZero(t, s.Loc.RowSum, s.Loc.Row)
		assert.NotZero(t, s.Loc.RowVersion, s.Loc.Row)
	}
	// 4 calls in chat.chat's history and again in its messages list, 4 in chat_message.output.
	assert.Equal(t, map[string]int{"lit_literature.search_pubmed": 3, "foo.bar_ok_tool": 3, "lit_搜索文献": 3,
		"0b7f3c2e-9a41-4d8e-b6a5-2f1e8c7d9a10_get_data_for_a_specific_location_and_date_range": 3}, names)
	for _, s := range snap.Sites {
		if s.Name == "lit_搜索文献" {
			assert.Equal(t, `"lit_\u641c\u7d22\u6587\u732e"`, string(s.Raw), "the stored escapes, as json keeps them")
		}
	}
	edits := planEdits(snap)
	require.Len(t, edits, 9)
	batches := 0
	ch, err := st.Apply(ctx, snap, edits, store.ApplyOptions{RunID: "run-1", BackupPath: "/x/runs/run-1/backups/0001-db",
		BeforeCommit: func(*store.Change) error { batches++; return nil }})
	require.NoError(t, err)
	assert.Equal(t, 1, batches, "BeforeCommit once, before the first commit")
	var info verifyInfo
	require.NoError(t, json.Unmarshal(ch.Verify, &info))
	assert.Equal(t, verifyInfo{RunID: "run-1/0001-db", Schema: "public", Table: BackupTable, Rows: 2, Batches: 1}, info,
		"one chat and its message row: one batch, one transaction")

	after := map[string]map[string]string{"chat.chat": values(t, u, "chat", "chat"), "chat_message.output": values(t, u, "chat_message", "output")}
	byRow := map[string][]store.Edit{}
	for _, e := range edits {
		byRow[e.Site.Loc.Row] = append(byRow[e.Site.Loc.Row], e)
	}
	for tc, rows := range before {
		table, _, _ := strings.Cut(tc, ".")
		for k, old := range rows {
			want := old
			if es := byRow[label(table, "id", k)]; len(es) > 0 {
				want = expected(old, es)
				assert.NotEqual(t, old, want)
			}
			assert.Equal(t, want, after[tc][k], "%s %s: only the name tokens change", tc, k)
		}
	}
	assert.Contains(t, after["chat.chat"]["7c1f4e2a-5b6d-4e8f-9a0b-1c2d3e4f5a6b"], `"name": "lit_xxxx", "arguments": "{\"q\": \"\u57fa\u56e0\"}"`,
		"separators and escapes outside the token kept byte for byte")

	db, err := sql.Open("pgx", u)
	require.NoError(t, err)
	defer db.Close()
	var n int
	var old string
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM sessionfix_backup WHERE run_id = 'run-1/0001-db'`).Scan(&n))
	assert.Equal(t, 2, n)
	require.NoError(t, db.QueryRow(`SELECT old_text FROM sessionfix_backup WHERE table_name = 'chat'`).Scan(&old))
	assert.Equal(t, before["chat.chat"]["7c1f4e2a-5b6d-4e8f-9a0b-1c2d3e4f5a6b"], old)

	require.NoError(t, Open(u, Options{}).Restore(ctx, ch, false))
	for tc, rows := range before {
		table, col, _ := strings.Cut(tc, ".")
		assert.Equal(t, rows, values(t, u, table, col), "undo gives every byte back")
	}
	require.NoError(t, Open(u, Options{}).Restore(ctx, ch, false), "a second undo has nothing left to do")
}

// TestJSONBRefused: a jsonb column makes the store not writable (Snapshot.NotWritable) with the
// reason (jsonb reorders keys and decodes escapes: no byte-exact rewrite), said once as a
// warning the planner turns into the run's error when a name needs rewriting (exit 3: the CLI's
// TestPostgresCLI); its sites are not read-only (they are kept for that reason, not as records
// never rewritten), and Apply writes nothing.
func TestJSONBRefused(t *testing.T) {
	srv := pgtest.Shared(t)
	u := srv.WithPassword(srv.DB(t))
	execSQL(t, u, `CREATE TABLE chat (id text PRIMARY KEY, chat jsonb);
INSERT INTO chat VALUES ('c1', '{"messages": [{"output": [{"type": "function_call", "name": "a.b", "call_id": "x"}]}], "z": "\u00fc"}');`)
	var stored string
	db, err := sql.Open("pgx", u)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.QueryRow(`SELECT chat::text FROM chat`).Scan(&stored))
	assert.Equal(t, `{"z": "ü", "messages": [{"output": [{"name": "a.b", "type": "function_call", "call_id": "x"}]}]}`, stored,
		"jsonb keeps no text: keys reordered, escapes decoded")
	st := Open(u, Options{Profiles: []*Profile{testProfile(t)}})
	snap, err := st.Scan(context.Background(), store.ScanOptions{})
	require.NoError(t, err)
	require.Len(t, snap.Sites, 1)
	assert.False(t, snap.Sites[0].ReadOnly)
	why := "chat.chat is jsonb (jsonb keeps no text, so a byte-exact rewrite is impossible; sessionfix never changes a column's type)"
	assert.Equal(t, why, snap.NotWritable)
	assert.Contains(t, snap.Problems, store.Problem{Severity: store.SevWarning, Reason: "not rewritten: " + why})
	_, err = st.Apply(context.Background(), snap, []store.Edit{{Site: snap.Sites[0], New: "a_b"}}, applyOpts(t, "r"))
	require.ErrorIs(t, err, store.ErrNotWritable)
	snap.NotWritable = "" // a snapshot that does not say so: the writer refuses the row all the same
	_, err = st.Apply(context.Background(), snap, []store.Edit{{Site: snap.Sites[0], New: "a_b"}}, applyOpts(t, "r"))
	require.Error(t, err)
	var after string
	require.NoError(t, db.QueryRow(`SELECT chat::text FROM chat`).Scan(&after))
	assert.Equal(t, stored, after)
}

// bigChats is a database of n chats, each with one dotted call in chat.chat (json).
func bigChats(t testing.TB, n int) string {
	srv := pgtest.Shared(t)
	u := srv.WithPassword(srv.DB(t))
	execSQL(t, u, fmt.Sprintf(`CREATE TABLE chat (id text PRIMARY KEY, chat json, updated_at bigint);
INSERT INTO chat SELECT 'c' || lpad(g::text, 6, '0'), ('{"messages": [{"output": [{"type": "function_call", "id": "fc", "call_id": "k' || g || '", "name": "srv_tool.' || g || '", "status": "completed"}]}], "title": "t ' || g || '"}')::json, g FROM generate_series(1, %d) g;`, n))
	return u
}

// scannedChats is bigChats(t, n) opened with the test profile in batches of 10 rows and
// scanned: the database's URL, the store, its snapshot, the edits planned on it (one a chat:
// n of them) and each chat's text before any change, by id.
func scannedChats(t *testing.T, n int) (u string, st *Store, snap *store.Snapshot, edits []store.Edit, orig map[string]string) {
	t.Helper()
	u = bigChats(t, n)
	st = Open(u, Options{Profiles: []*Profile{testProfile(t)}, BatchRows: 10})
	snap, err := st.Scan(context.Background(), store.ScanOptions{})
	require.NoError(t, err)
	edits = planEdits(snap)
	require.Len(t, edits, n)
	return u, st, snap, edits, values(t, u, "chat", "chat")
}

// TestApplicationWritesDuringApply: an application that read a row before sessionfix committed
// and writes its copy back afterwards undoes the fix silently; the verify pass after the commit
// reports that row (exit 4), the other rows keep their fix, nothing is lost (the old text is in
// sessionfix_backup), and undo refuses that row by name while restoring the others.
func TestApplicationWritesDuringApply(t *testing.T) {
	u, st, snap, edits, orig := scannedChats(t, 30)
	ctx := context.Background()

	// The application's copy of c000015, read before the fix.
	appCopy := orig["c000015"]
	db, err := sql.Open("pgx", u)
	require.NoError(t, err)
	defer db.Close()
	written := 0
	ch, err := st.Apply(ctx, snap, edits, store.ApplyOptions{RunID: "run-app", BackupPath: "/r/run-app/backups/0001-db",
		BeforeCommit: func(*store.Change) error {
			written++
			return nil
		}})
	// (the application writes right after sessionfix's last commit: simulated by writing
	// before the verify would be too early, so the test writes now and runs the verify again)
	_, werr := db.Exec(`UPDATE chat SET chat = $1::json, updated_at = updated_at + 1 WHERE id = 'c000015'`, appCopy)
	require.NoError(t, werr)
	require.NoError(t, err)
	a := &applier{s: st, db: mustConnect(t, st), reads: mustReads(t, st), info: verifyInfo{RunID: "run-app/0001-db"}}
	over, err := a.verify(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, over.n)
	assert.Equal(t, "chat id=c000015", over.String())

	now := values(t, u, "chat", "chat")
	assert.Equal(t, orig["c000015"], now["c000015"], "the application's write won")
	assert.Contains(t, now["c000016"], `"srv_tool_16"`)

	err = Open(u, Options{}).Restore(ctx, ch, false)
	var ce *store.ChangedError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.Reason, "1 rows hold another value than the run wrote")
	assert.Contains(t, ce.Reason, "chat id=c000015")
	assert.Equal(t, orig, values(t, u, "chat", "chat"), "every other row restored; the refused one is the application's")
}

// TestVerifyReportsOverwrite: the verify pass of Apply itself reports a row an application
// overwrote between sessionfix's commit of its batch and the end of the run: the Change is
// recorded, the error is in use (exit 4) and names the row.
func TestVerifyReportsOverwrite(t *testing.T) {
	u, st, snap, planned, orig := scannedChats(t, 30)
	ctx := context.Background()
	db, err := sql.Open("pgx", u)
	require.NoError(t, err)
	defer db.Close()
	batches := planned
	first := true
	var app chan error
	ch, err := st.ApplyBatches(ctx, snap, func() ([]store.Edit, error) {
		switch {
		case first:
			first = false
			return batches[:10], nil
		case len(batches) == 30:
			// The application writes its old copy of c000003 back, which the first batch
			// rewrites, once that batch's commit is visible (a writer commits a batch in the
			// round trip that locks its next one: with Writers (2) writers, batch k and batch
			// k+2 are the same writer's). It waits for the commit, not for the batch's lock:
			// the writer locks in its own goroutine, so an UPDATE sent now could come before
			// the lock, leave the old text in place, and the run would rightly write over it
			// (seen once in 20 runs at load 24).
			app = make(chan error, 1)
			go func() {
				deadline := time.Now().Add(30 * time.Second)
				for {
					var now string
					if err := db.QueryRow(`SELECT chat::text FROM chat WHERE id = 'c000003'`).Scan(&now); err != nil {
						app <- err
						return
					}
					if now != orig["c000003"] {
						break
					}
					if time.Now().After(deadline) {
						app <- errors.New("c000003: the run's commit never became visible")
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
				_, err := db.Exec(`UPDATE chat SET chat = $1::json WHERE id = 'c000003'`, orig["c000003"])
				app <- err
			}()
			b := batches[10:20]
			batches = batches[20:]
			return b, nil
		case batches != nil:
			b := batches
			batches = nil
			return b, nil
		}
		// The third batch is handed in: the first one commits (the application's write is done
		// before the last commit, the verify pass after it).
		select {
		case err := <-app:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("the application's UPDATE still waits: the first batch did not commit")
		}
		return nil, io.EOF
	}, applyOpts(t, "run-v"))
	require.NotNil(t, ch)
	var cerr *fileio.CommittedError
	require.ErrorAs(t, err, &cerr)
	assert.ErrorIs(t, err, store.ErrInUse)
	assert.Contains(t, err.Error(), "1 rows rewritten by this run were overwritten since")
	assert.Contains(t, err.Error(), "chat id=c000003")
	assert.Contains(t, strings.Join(ch.Warnings, "\n"), "chat id=c000003")
}

// TestVerifyReportsOverwritesInEveryBatch: the verify pass counts the batches' page runs in two
// halves on two connections; an overwrite in an early batch and one in a late batch (one in each
// half) are both reported, in batch order, and no other row.
func TestVerifyReportsOverwritesInEveryBatch(t *testing.T) {
	u, st, snap, planned, orig := scannedChats(t, 60)
	ctx := context.Background()
	db, err := sql.Open("pgx", u)
	require.NoError(t, err)
	defer db.Close()
	edits := planned
	// overwrite is the application: it waits until the run's commit of key is visible (the
	// row no longer holds its old text), then writes its own copy (the old text) back. It
	// waits for the commit rather than for a lock, so the test does not depend on when a
	// writer locks its batch (an UPDATE made before the lock would leave the old text in
	// place, the hash would match, and the run would rightly write over it).
	overwrite := func(key string) chan error {
		c := make(chan error, 1)
		go func() {
			deadline := time.Now().Add(30 * time.Second)
			for {
				var now string
				if err := db.QueryRow(`SELECT chat::text FROM chat WHERE id = $1`, key).Scan(&now); err != nil {
					c <- err
					return
				}
				if now != orig[key] {
					break
				}
				if time.Now().After(deadline) {
					c <- fmt.Errorf("%s: the run's commit never became visible", key)
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
			_, err := db.Exec(`UPDATE chat SET chat = $1::json WHERE id = $2`, orig[key], key)
			c <- err
		}()
		return c
	}
	// Ten edits (one chat each) per call; the writers hold back each call's last chat for the
	// next batch, so batch k (k > 0) is chats 10k to 10k+9 and commits when its writer locks
	// batch k+2: c000003 (batch 0) commits once batch 2 is handed in, c000035 (batch 3) once
	// batch 5 is; the application writes each back after that commit and before the last call
	// returns, so before the verify pass.
	calls := 0
	var apps []chan error
	ch, err := st.ApplyBatches(ctx, snap, func() ([]store.Edit, error) {
		calls++
		switch calls {
		case 3:
			apps = append(apps, overwrite("c000003"))
		case 6:
			apps = append(apps, overwrite("c000035"))
		case 7:
			for _, app := range apps {
				select {
				case err := <-app:
					require.NoError(t, err)
				case <-time.After(30 * time.Second):
					t.Fatal("the application's UPDATE still waits: its batch did not commit")
				}
			}
			return nil, io.EOF
		}
		return edits[(calls-1)*10 : calls*10], nil
	}, applyOpts(t, "run-halves"))
	require.NotNil(t, ch)
	var cerr *fileio.CommittedError
	require.ErrorAs(t, err, &cerr)
	assert.Contains(t, err.Error(), "2 rows rewritten by this run were overwritten since")
	assert.Contains(t, err.Error(), "chat id=c000003, chat id=c000035")
	var v verifyInfo
	require.NoError(t, json.Unmarshal(ch.Verify, &v))
	assert.Equal(t, int64(60), v.Rows)
	after := values(t, u, "chat", "chat")
	for k, old := range orig {
		if k == "c000003" || k == "c000035" {
			assert.Equal(t, old, after[k], k)
		} else {
			assert.NotEqual(t, old, after[k], k)
		}
	}
}

// TestLockedRowSkipped: a row another transaction holds is skipped after no wait (SKIP
// LOCKED), named, the store in use (exit 4); the other rows are written.
func TestLockedRowSkipped(t *testing.T) {
	u := bigChats(t, 5)
	ctx := context.Background()
	st := Open(u, Options{Profiles: []*Profile{testProfile(t)}})
	snap, err := st.Scan(ctx, store.ScanOptions{})
	require.NoError(t, err)
	db, err := sql.Open("pgx", u)
	require.NoError(t, err)
	defer db.Close()
	tx, err := db.Begin()
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.Exec(`SELECT 1 FROM chat WHERE id = 'c000002' FOR UPDATE`)
	require.NoError(t, err)
	ch, err := st.Apply(ctx, snap, planEdits(snap), applyOpts(t, "run-lock"))
	require.NotNil(t, ch)
	assert.ErrorIs(t, err, store.ErrInUse)
	assert.Contains(t, err.Error(), "1 rows locked by another transaction were skipped")
	assert.Contains(t, err.Error(), "chat id=c000002")
	require.NoError(t, tx.Rollback())
	now := values(t, u, "chat", "chat")
	assert.Contains(t, now["c000002"], `"srv_tool.2"`)
	assert.Contains(t, now["c000003"], `"srv_tool_3"`)
}

// TestPasswordNeverInErrors: a password given in the URL never appears in a Ref or an error
// (a wrong password, an unknown database).
func TestPasswordNeverInErrors(t *testing.T) {
	srv := pgtest.Shared(t)
	const secret = "s3cr3t-Pa55-in-url"
	bad := strings.Replace(srv.URL, "postgres@", "postgres:"+secret+"@", 1)
	st := Open(bad, Options{Profiles: []*Profile{testProfile(t)}})
	assert.NotContains(t, st.Ref().Path, secret)
	_, err := st.Scan(context.Background(), store.ScanOptions{})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), secret)
	assert.Contains(t, err.Error(), "127.0.0.1")
	q := srv.URL + "?password=" + secret
	_, err = Detect(context.Background(), q, Options{})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), secret)
	assert.NotContains(t, store.Redact(q), secret)
}

func mustConnect(t testing.TB, st *Store) *sqlx.DB {
	db, err := st.connect(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func mustReads(t testing.TB, st *Store) []*tableRead {
	db := mustConnect(t, st)
	sch, err := readSchema(context.Background(), db)
	require.NoError(t, err)
	return resolve(st.prof, sch, &store.Snapshot{})
}

// The kill test's child: scans and applies with batches of 50 rows, recording its Change in
// the file named by childEnv before its first commit, until the parent kills it.
const childEnv = "SESSIONFIX_PGTEST_CHILD"

func childApply() {
	u, out := os.Getenv("CHILD_URL"), os.Getenv(childEnv)
	prof, _ := sqlite.ParseProfile([]byte(os.Getenv("CHILD_PROFILE")))
	st := Open(u, Options{Profiles: []*Profile{prof}, BatchRows: 50})
	ctx := context.Background()
	snap, err := st.Scan(ctx, store.ScanOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	edits := planEdits(snap)
	_, err = st.Apply(ctx, snap, edits, store.ApplyOptions{RunID: "run-kill", BackupPath: "/r/run-kill/backups/0001-db",
		BeforeCommit: func(ch *store.Change) error {
			b, _ := json.Marshal(ch)
			return os.WriteFile(out, b, 0o644)
		}})
	fmt.Fprintln(os.Stderr, "finished:", err)
	os.Exit(3)
}

// TestKillAfterBatchesThenUndo: a process killed (SIGKILL) after some batches committed leaves
// whole batches only (every row rewritten has its backup row, every backup row's row holds the
// run's text; the rest are untouched), and undo from the backup table restores every byte.
func TestKillAfterBatchesThenUndo(t *testing.T) {
	const n = 20000
	u := bigChats(t, n)
	orig := values(t, u, "chat", "chat")
	profDoc, _ := json.Marshal(testProfile(t))
	out := filepath.Join(t.TempDir(), "change.json")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+out, "CHILD_URL="+u, "CHILD_PROFILE="+string(profDoc))
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	db, err := sql.Open("pgx", u)
	require.NoError(t, err)
	defer db.Close()
	deadline := time.Now().Add(2 * time.Minute)
	backups := 0
	for time.Now().Before(deadline) {
		_ = db.QueryRow(`SELECT count(*) FROM sessionfix_backup`).Scan(&backups)
		if backups >= 150 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	// The server finishes what the child had sent before it died (a batch's write and COMMIT
	// go in one round trip): count once its sessions are gone.
	for gone := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'sessionfix'`).Scan(&n))
		if n == 0 {
			break
		}
		require.True(t, time.Now().Before(gone), "the killed child's sessions are still there after a minute")
	}
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM sessionfix_backup`).Scan(&backups))
	require.GreaterOrEqual(t, backups, 150)
	require.Less(t, backups, n, "killed before the end (make n larger if this machine is fast)")
	assert.Zero(t, backups%50, "whole batches of 50 rows only")
	now := values(t, u, "chat", "chat")
	var inBackup map[string]bool = map[string]bool{}
	rows, err := db.Query(`SELECT key_value FROM sessionfix_backup`)
	require.NoError(t, err)
	for rows.Next() {
		var k string
		require.NoError(t, rows.Scan(&k))
		inBackup[k] = true
	}
	rows.Close()
	changed := 0
	for k, v := range now {
		if v != orig[k] {
			changed++
			assert.True(t, inBackup[k], "%s rewritten without its backup row", k)
		} else {
			assert.False(t, inBackup[k], "%s has a backup row but is not rewritten", k)
		}
	}
	assert.Equal(t, backups, changed)

	b, err := os.ReadFile(out)
	require.NoError(t, err, "the child recorded its change before its first commit")
	var ch store.Change
	require.NoError(t, json.Unmarshal(b, &ch))
	require.NoError(t, Open(u, Options{}).Restore(context.Background(), &ch, false))
	assert.Equal(t, orig, values(t, u, "chat", "chat"))
}

// TestChatWrittenWhole: both places of one call change together or not at all: when a chat's
// chat_message row is locked by another transaction, the chat row is held back with it (named),
// and a later run writes both.
func TestChatWrittenWhole(t *testing.T) {
	u, _ := openwebuiDB(t)
	ctx := context.Background()
	st := Open(u, Options{Profiles: []*Profile{testProfile(t)}})
	snap, err := st.Scan(ctx, store.ScanOptions{})
	require.NoError(t, err)
	orig := values(t, u, "chat", "chat")
	db, err := sql.Open("pgx", u)
	require.NoError(t, err)
	defer db.Close()
	tx, err := db.Begin()
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.Exec(`SELECT 1 FROM chat_message WHERE id = '7c1f4e2a-5b6d-4e8f-9a0b-1c2d3e4f5a6b-msg-asst-1' FOR UPDATE`)
	require.NoError(t, err)
	ch, err := st.Apply(ctx, snap, planEdits(snap), applyOpts(t, "run-whole"))
	assert.Nil(t, ch, "nothing committed")
	assert.ErrorIs(t, err, store.ErrInUse)
	assert.Contains(t, err.Error(), "1 rows locked by another transaction were skipped (lock_timeout; not rewritten): chat_message id=7c1f4e2a-5b6d-4e8f-9a0b-1c2d3e4f5a6b-msg-asst-1")
	assert.Contains(t, err.Error(), "1 rows held back with a row of their chat (parent) that could not be rewritten: chat id=7c1f4e2a-5b6d-4e8f-9a0b-1c2d3e4f5a6b")
	assert.Equal(t, orig, values(t, u, "chat", "chat"))
	require.NoError(t, tx.Rollback())
	ch, err = st.Apply(ctx, snap, planEdits(snap), applyOpts(t, "run-whole-2"))
	require.NoError(t, err)
	require.NotNil(t, ch)
	assert.NotEqual(t, orig, values(t, u, "chat", "chat"))
}

// TestPartitionedTableRowsByPlace: a partitioned table's partitions each number their rows'
// places (ctid) from (0,1): the writer finds a locked row by its partition and place, so a row
// of another partition at the same place is left as it is.
func TestPartitionedTableRowsByPlace(t *testing.T) {
	srv := pgtest.Shared(t)
	u := srv.WithPassword(srv.DB(t))
	execSQL(t, u, `CREATE TABLE chat (id text PRIMARY KEY, chat json) PARTITION BY LIST (id);
CREATE TABLE chat_a PARTITION OF chat FOR VALUES IN ('a1', 'a2', 'a3');
CREATE TABLE chat_b PARTITION OF chat FOR VALUES IN ('b1', 'b2', 'b3');
INSERT INTO chat SELECT 'a' || g, ('{"messages": [{"output": [{"type": "function_call", "call_id": "k' || g || '", "name": "srv_tool.' || g || '"}]}]}')::json FROM generate_series(1, 3) g;
INSERT INTO chat SELECT 'b' || g, ('{"messages": [{"output": [{"type": "function_call", "call_id": "k' || g || '", "name": "srv_tool_' || g || '"}]}]}')::json FROM generate_series(1, 3) g;`)
	require.Equal(t, "(0,1)", pgtest.Query(t, u, `SELECT ctid::text FROM chat WHERE id = 'b1'`), "both partitions start at (0,1)")
	require.Equal(t, "(0,1)", pgtest.Query(t, u, `SELECT ctid::text FROM chat WHERE id = 'a1'`))
	orig := values(t, u, "chat", "chat")
	st := Open(u, Options{Profiles: []*Profile{testProfile(t)}})
	snap, err := st.Scan(context.Background(), store.ScanOptions{})
	require.NoError(t, err)
	edits := planEdits(snap)
	require.Len(t, edits, 3, "the a rows' dotted names")
	_, err = st.Apply(context.Background(), snap, edits, applyOpts(t, "run-part"))
	require.NoError(t, err)
	now := values(t, u, "chat", "chat")
	for _, k := range []string{"b1", "b2", "b3"} {
		assert.Equal(t, orig[k], now[k], "%s: a row of the other partition at the same place is not written", k)
	}
	for _, k := range []string{"a1", "a2", "a3"} {
		assert.Equal(t, strings.Replace(orig[k], "srv_tool.", "srv_tool_", 1), now[k], k)
	}
}

// TestScanChunksMergedInOrder: chunks parsed side by side (Parsers) give what one parser
// reading every row in turn gives: each batch's sites in key order, batches in key order, the
// problems of the rows in key order (the first maxProblemsPerKind of a kind, then the count),
// one Progress call per value in key order, child rows with their chat.
func TestScanChunksMergedInOrder(t *testing.T) {
	srv := pgtest.Shared(t)
	u := srv.WithPassword(srv.DB(t))
	execSQL(t, u, `CREATE TABLE chat (id text PRIMARY KEY, chat text);
CREATE TABLE chat_message (id text PRIMARY KEY, chat_id text, output json);
INSERT INTO chat SELECT 'c' || lpad(g::text, 2, '0'), CASE WHEN g % 3 = 0 THEN '{"messages": [' || g ELSE
 '{"messages": [{"output": [{"type": "function_call", "call_id": "k' || g || '", "name": "srv_tool.' || g || '"}]}]}' END FROM generate_series(1, 75) g;
INSERT INTO chat_message SELECT 'm' || lpad(g::text, 2, '0'), 'c' || lpad(g::text, 2, '0'),
 ('[{"type": "function_call", "call_id": "m' || g || '", "name": "msg_tool.' || g || '"}]')::json FROM generate_series(1, 75, 5) g;`)
	st := Open(u, Options{Profiles: []*Profile{testProfile(t)}, BatchRows: 4})
	var sizes []int64
	var batches [][]string
	snap, err := st.ScanBatches(context.Background(), store.ScanOptions{Progress: func(n int64) { sizes = append(sizes, n) }},
		func(_ *store.Snapshot, sites []store.Site) error {
			var names []string
			for _, s := range sites {
				names = append(names, s.Name)
			}
			batches = append(batches, names)
			return nil
		})
	require.NoError(t, err)
	var want [][]string
	var wantSizes []int64
	var wantProblems []string
	for g := 1; g <= 75; g++ {
		if (g-1)%4 == 0 {
			want = append(want, nil)
		}
		b := &want[len(want)-1]
		if g%3 == 0 {
			wantSizes = append(wantSizes, int64(len(fmt.Sprintf(`{"messages": [%d`, g))))
			if len(wantProblems) < maxProblemsPerKind {
				wantProblems = append(wantProblems, fmt.Sprintf("chat id=c%02d", g))
			}
		} else {
			wantSizes = append(wantSizes, int64(len(fmt.Sprintf(`{"messages": [{"output": [{"type": "function_call", "call_id": "k%d", "name": "srv_tool.%d"}]}]}`, g, g))))
			*b = append(*b, fmt.Sprintf("srv_tool.%d", g))
		}
		if (g-1)%4 == 3 || g == 75 {
			// the batch's child rows come after its chat rows
			for c := g - (g-1)%4; c <= g; c++ {
				if c%5 == 1 {
					*b = append(*b, fmt.Sprintf("msg_tool.%d", c))
					wantSizes = append(wantSizes, int64(len(fmt.Sprintf(`[{"type": "function_call", "call_id": "m%d", "name": "msg_tool.%d"}]`, c, c))))
				}
			}
		}
	}
	assert.Equal(t, want, batches)
	var probs []string
	for _, p := range snap.Problems {
		if p.Loc.Row != "" {
			probs = append(probs, p.Loc.Row)
		} else {
			probs = append(probs, p.Reason)
		}
	}
	assert.Equal(t, append(wantProblems, "25 rows with invalid JSON in all (the first 20 are listed)"), probs)
	assert.Equal(t, int64(75+15), snap.Records)
	assert.Equal(t, wantSizes, sizes)
}

// TestBackupTableOneIndex: a new sessionfix_backup has one index, its primary key (run_id, id),
// which undo and the verify pass read by (each backup row costs one index entry); a table an
// earlier version made (primary key id, index sessionfix_backup_run) is used as it is: a run
// writes into it, and undo restores from it.
func TestBackupTableOneIndex(t *testing.T) {
	ctx := context.Background()
	for _, old := range []bool{false, true} {
		t.Run(fmt.Sprintf("earlier table %v", old), func(t *testing.T) {
			u, _ := openwebuiDB(t)
			if old {
				execSQL(t, u, `CREATE TABLE sessionfix_backup (id bigserial PRIMARY KEY, run_id text NOT NULL, table_name text NOT NULL,
 key_column text NOT NULL, key_value text NOT NULL, column_name text NOT NULL, old_text text NOT NULL, old_hash text NOT NULL,
 new_hash text NOT NULL, new_xmin bigint, written_at timestamptz NOT NULL DEFAULT now(), restored_at timestamptz);
CREATE INDEX sessionfix_backup_run ON sessionfix_backup (run_id, id);`)
			}
			before := values(t, u, "chat", "chat")
			st := Open(u, Options{Profiles: []*Profile{testProfile(t)}})
			snap, err := st.Scan(ctx, store.ScanOptions{})
			require.NoError(t, err)
			ch, err := st.Apply(ctx, snap, planEdits(snap), applyOpts(t, "run-idx"))
			require.NoError(t, err)
			want := "sessionfix_backup_pkey (run_id, id)"
			if old {
				want = "sessionfix_backup_pkey (id); sessionfix_backup_run (run_id, id)"
			}
			assert.Equal(t, want, pgtest.Query(t, u, `SELECT string_agg(indexname || ' ' || substring(indexdef from '\(.*\)$'), '; ' ORDER BY indexname)
 FROM pg_indexes WHERE tablename = 'sessionfix_backup'`))
			assert.NotEqual(t, before, values(t, u, "chat", "chat"))
			require.NoError(t, Open(u, Options{}).Restore(ctx, ch, false))
			assert.Equal(t, before, values(t, u, "chat", "chat"), "undo gives every byte back")
			assert.Equal(t, "0", pgtest.Query(t, u, `SELECT count(*) FROM sessionfix_backup WHERE restored_at IS NULL`), "every backup row marked restored")
		})
	}
}

// TestLatin1DatabaseUndo: in a database whose encoding is not UTF-8 (LATIN1, non-ASCII text
// in the rows), the backup's old text is the row's text as the server had it, both hashes are
// the server's md5() of the texts as stored (what undo and the verify pass compare with), and
// undo gives every byte back.
func TestLatin1DatabaseUndo(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := context.Background()
	admin, err := sql.Open("pgx", srv.WithPassword(srv.URL))
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() }) // after the DROP below (cleanups run last first): a deferred Close ran before it, and the DROP failed unseen
	name := fmt.Sprintf("sf_latin1_%d", time.Now().UnixNano())
	_, err = admin.Exec("CREATE DATABASE " + name + " ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	pu, err := url.Parse(srv.WithPassword(srv.URL))
	require.NoError(t, err)
	pu.Path = "/" + name
	u := pu.String()
	execSQL(t, u, `CREATE TABLE chat (id text PRIMARY KEY, chat json);
INSERT INTO chat VALUES ('c1', '{"title": "Café ü", "messages": [{"output": [{"type": "function_call", "name": "a.b", "call_id": "x"}]}]}'),
 ('c2', '{"title": "plain", "messages": [{"output": [{"type": "function_call", "name": "c.d", "call_id": "y"}]}]}');`)
	before := values(t, u, "chat", "chat")
	require.Contains(t, before["c1"], "Café ü")
	st := Open(u, Options{Profiles: []*Profile{testProfile(t)}})
	snap, err := st.Scan(ctx, store.ScanOptions{})
	require.NoError(t, err)
	edits := planEdits(snap)
	require.Len(t, edits, 2)
	ch, err := st.Apply(ctx, snap, edits, applyOpts(t, "run-l1"))
	require.NoError(t, err)
	after := values(t, u, "chat", "chat")
	assert.Equal(t, strings.Replace(before["c1"], `"a.b"`, `"a_b"`, 1), after["c1"])
	assert.Equal(t, strings.Replace(before["c2"], `"c.d"`, `"c_d"`, 1), after["c2"])

	// The hashes are those of the stored texts (md5 of LATIN1 bytes for c1, not of UTF-8 ones).
	db, err := sql.Open("pgx", u)
	require.NoError(t, err)
	defer db.Close()
	var bad int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM sessionfix_backup b JOIN chat c ON c.id = b.key_value
 WHERE b.run_id = 'run-l1/0001-db' AND (b.new_hash <> md5(c.chat::text) OR b.old_hash <> md5(b.old_text))`).Scan(&bad))
	assert.Zero(t, bad)

	require.NoError(t, Open(u, Options{}).Restore(ctx, ch, false))
	assert.Equal(t, before, values(t, u, "chat", "chat"), "undo gives every byte back")
}

// TestWriteStatementScansLockedRowsOnce: on the writer's connection, the write statement reads
// the locked rows with one TID scan per part (the backup insert and the UPDATE), joined to the
// batch's parameters without a nested loop: a nested loop rescans a TID scan for every row, and
// each rescan asks the kernel for the table's size. Nor does it read the whole table (of 10,000
// chats; a table of a few pages may well be read whole).
func TestWriteStatementScansLockedRowsOnce(t *testing.T) {
	u := bigChats(t, 10000)
	execSQL(t, u, "ANALYZE chat")
	ctx := context.Background()
	st := Open(u, Options{Profiles: []*Profile{testProfile(t)}})
	st.prof = testProfile(t)
	var tr *tableRead
	for _, r := range mustReads(t, st) {
		if r != nil && r.spec.Table == "chat" {
			tr = r
		}
	}
	require.NotNil(t, tr)
	conn, err := st.connectPipe(ctx)
	require.NoError(t, err)
	defer conn.Close(ctx)
	for _, q := range backupDDL() {
		_, err := conn.Exec(ctx, q)
		require.NoError(t, err)
	}
	_, err = conn.PgConn().Prepare(ctx, "sessionfix_w", writeSQL(tr), []uint32{oidOIDArray, oidTIDArray, oidTextArray, oidTextArray,
		oidText, oidText, oidText, oidText, oidInt8})
	require.NoError(t, err)
	var plan string
	require.NoError(t, conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) EXECUTE sessionfix_w('{}', '{}', '{}', '{}', 'r', 'chat', 'id', 'chat', 0)`).Scan(&plan))
	var nodes []string
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		nodes = append(nodes, fmt.Sprintf("%v on %v", n["Node Type"], n["Relation Name"]))
		if kids, ok := n["Plans"].([]any); ok {
			for _, k := range kids {
				walk(k.(map[string]any))
			}
		}
	}
	var top []map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(plan), &top))
	walk(top[0]["Plan"])
	assert.NotContains(t, nodes, "Nested Loop on <nil>", "the parameters joined to the rows by a nested loop: %v", nodes)
	assert.NotContains(t, nodes, "Seq Scan on chat", "the whole table read: %v", nodes)
	tidScans := 0
	for _, n := range nodes {
		if n == "Tid Scan on chat" {
			tidScans++
		}
	}
	assert.Equal(t, 2, tidScans, "one TID scan for the backup rows, one for the UPDATE: %v", nodes)
}
