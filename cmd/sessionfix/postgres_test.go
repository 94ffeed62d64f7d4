package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/postgres/pgtest"
)

// TestPostgresCLI (issue 28 items 1, 2): scan, fix --apply, runs and undo of an Open WebUI
// store on PostgreSQL named by a postgres:// URL as PATH, found by its schema and by --agent
// openwebui. The password, given in the URL or in PGPASSWORD, never reaches any output (text,
// JSON, errors) or the run's files; undo gets it from PGPASSWORD (a run records none).
func TestPostgresCLI(t *testing.T) {
	srv := pgtest.Start(t) // one cluster for the whole test (about 5 s), or $SESSIONFIX_TEST_PG
	u := srv.DB(t)
	pw := srv.WithPassword(u)
	pgtest.ExecFile(t, pw, openwebuiFixtures+"schema_postgres.psql")
	pgtest.ExecFile(t, pw, openwebuiFixtures+"rows_postgres.psql")
	orig := pgtest.Values(t, pw, "chat", "id", "chat")
	origOut := pgtest.Values(t, pw, "chat_message", "id", "output")
	secret := srv.Password
	require.NotEmpty(t, secret, "the test's server must ask for a password")
	env := testEnv(t)
	t.Setenv("PGPASSWORD", "")
	t.Setenv("PGPASSFILE", filepath.Join(t.TempDir(), "none"))

	noSecret := func(r cliResult) {
		t.Helper()
		assert.NotContains(t, r.out, secret)
		assert.NotContains(t, r.err, secret)
	}
	r := runCLI(t, env, "", "scan", pw)
	noSecret(r)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, u+"  openwebui  4        12     12", "detected by its schema: Open WebUI's profile")
	assert.Contains(t, r.out, "lit_literature.search_pubmed")

	r = runCLI(t, env, "", "scan", "--agent", "openwebui", "--format", "json", pw)
	noSecret(r)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, `"`+u+`"`)

	r = runCLI(t, env, "", "scan", "--agent", "claude", pw)
	noSecret(r)
	assert.Contains(t, r.out+r.err, "PostgreSQL store of openwebui (profile openwebui), not of claude")

	bad := strings.Replace(pw, secret, secret+"x", 1)
	r = runCLI(t, env, "", "scan", bad)
	noSecret(r)
	assert.NotEqual(t, 0, r.code)
	assert.Contains(t, r.out+r.err, "password authentication failed")

	r = runCLI(t, env, "", "fix", "--apply", "--yes", pw)
	noSecret(r)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, "rewrote 12 names")
	now := pgtest.Values(t, pw, "chat", "id", "chat")
	for k, v := range now {
		assert.NotEqual(t, orig[k], v)
		assert.Contains(t, v, `"name": "lit_literature_search_pubmed_138667s"`)
		assert.NotContains(t, v, `"name": "lit_literature.search_pubmed"`)
	}
	assert.Contains(t, pgtest.Values(t, pw, "chat_message", "id", "output")["7c1f4e2a-5b6d-4e8f-9a0b-1c2d3e4f5a6b-msg-asst-1"],
		`"name": "lit_literature_search_pubmed_138667s"`, "both places of the call, the same name")
	state := filepath.Join(env.Home, "state", "sessionfix")
	require.NoError(t, filepath.WalkDir(state, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.NotContains(t, string(b), secret, "%s holds the password", p)
		}
		return nil
	}))

	r = runCLI(t, env, "", "runs")
	noSecret(r)
	assert.Contains(t, r.out, "applied")

	// Undo: the run recorded the URL without its password.
	r = runCLI(t, env, "", "undo", "--last", "--yes")
	noSecret(r)
	assert.NotEqual(t, 0, r.code)
	assert.Contains(t, r.out+r.err, "password authentication failed")
	t.Setenv("PGPASSWORD", secret)
	r = runCLI(t, env, "", "undo", "--last", "--yes")
	noSecret(r)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Equal(t, orig, pgtest.Values(t, pw, "chat", "id", "chat"), "undo gives every byte back")
	assert.Equal(t, origOut, pgtest.Values(t, pw, "chat_message", "id", "output"))

	// PGPASSWORD alone, the URL without a password.
	r = runCLI(t, env, "", "fix", u)
	noSecret(r)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, "would rewrite 12 names")

	t.Run("killed after some batches, runs and undo see the run", func(t *testing.T) { killThenUndo(t, srv) })
	t.Run("a jsonb column: names kept, exit 3", func(t *testing.T) { jsonbPartial(t, srv) })
}

// jsonbPartial: Open WebUI's schema with chat.chat jsonb (jsonb keeps no text: no byte-exact
// rewrite) is a store refused as not rewritable, as Kilo's 7.0 schema is (docs/exit-codes.md):
// with names to rewrite, scan, check, fix and fix --apply exit 3 (partial), the store's error on
// standard error, every name kept saying why, and nothing is written (not even chat_message's
// json column: both places of a call change together or not at all).
func jsonbPartial(t *testing.T, srv *pgtest.Server) {
	u := srv.DB(t)
	pw := srv.WithPassword(u)
	schema, err := os.ReadFile(openwebuiFixtures + "schema_postgres.psql")
	require.NoError(t, err)
	jsonb := strings.Replace(string(schema), "\n    chat json,", "\n    chat jsonb,", 1)
	require.NotEqual(t, string(schema), jsonb)
	pgtest.Exec(t, pw, jsonb)
	pgtest.ExecFile(t, pw, openwebuiFixtures+"rows_postgres.psql")
	orig := pgtest.Values(t, pw, "chat", "id", "chat")
	origOut := pgtest.Values(t, pw, "chat_message", "id", "output")
	env := testEnv(t)
	t.Setenv("PGPASSWORD", srv.Password)
	const refused = "error: not rewritten: chat.chat is jsonb (jsonb keeps no text, so a byte-exact rewrite is impossible; sessionfix never changes a column's type); 12 names it would rewrite are kept and nothing is written to it"
	for _, args := range [][]string{{"scan"}, {"check", "--provider", "openai-chat"}, {"fix"}, {"fix", "--apply", "--yes"}} {
		r := runCLI(t, env, "", append(args, u)...)
		assert.Equal(t, 3, r.code, "%v: %s%s", args, r.out, r.err)
		assert.Contains(t, r.err, u+": "+refused, "%v", args)
		assert.NotContains(t, r.err, "warning: not rewritten", "%v: said once, as the error", args)
		if args[0] == "fix" {
			assert.Equal(t, 12, strings.Count(r.out, "(kept)"), "%v: every name kept\n%s", args, r.out)
			assert.Equal(t, 4, strings.Count(r.out, ": not rewritten: chat.chat is jsonb"), "%v: each of the 4 names says why\n%s", args, r.out)
			assert.Contains(t, r.out, "nothing to change")
		}
	}
	assert.Equal(t, orig, pgtest.Values(t, pw, "chat", "id", "chat"))
	assert.Equal(t, origOut, pgtest.Values(t, pw, "chat_message", "id", "output"), "chat_message (json) is not written either")
	assert.Equal(t, "0", pgtest.Query(t, pw, "SELECT count(*) FROM pg_tables WHERE tablename = 'sessionfix_backup'"))
}

// killThenUndo: sessionfix fix --apply killed (SIGKILL) once some batches of 500 chats are
// committed leaves whole batches; runs lists the run (partial: its journal), undo restores every
// row from sessionfix_backup.
func killThenUndo(t *testing.T, srv *pgtest.Server) {
	const chats = 40000
	u := srv.DB(t)
	pw := srv.WithPassword(u)
	pgtest.ExecFile(t, pw, openwebuiFixtures+"schema_postgres.psql")
	pgtest.Exec(t, pw, fmt.Sprintf(`INSERT INTO chat (id, user_id, chat) SELECT 'c' || lpad(g::text, 6, '0'), 'u',
('{"messages": [{"output": [{"type": "function_call", "call_id": "k' || g || '", "name": "srv.tool_' || g || '"}]}]}')::json
FROM generate_series(1, %d) g`, chats))
	orig := pgtest.Values(t, pw, "chat", "id", "chat")
	state := t.TempDir()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "fix", "--apply", "--yes", "--state-dir", state, u)
	cmd.Env = append(os.Environ(), fakeMCPEnv+"=main", "PGPASSWORD="+srv.Password)
	require.NoError(t, cmd.Start())
	backups := func() int {
		n, _ := strconv.Atoi(pgtest.Query(t, pw, "SELECT count(*) FROM pg_tables WHERE tablename = 'sessionfix_backup'"))
		if n == 0 {
			return 0
		}
		n, _ = strconv.Atoi(pgtest.Query(t, pw, "SELECT count(*) FROM sessionfix_backup"))
		return n
	}
	deadline := time.Now().Add(3 * time.Minute)
	for backups() < 1000 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	// A batch's write and COMMIT go to the server in one round trip: the server may still
	// finish a transaction the killed client sent. Count once its sessions have ended.
	for time.Now().Before(deadline) {
		if pgtest.Query(t, pw, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()") == "0" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	n := backups()
	require.GreaterOrEqual(t, n, 1000)
	require.Less(t, n, chats, "killed before the end")
	assert.Zero(t, n%500, "whole batches of 500 chats only: %d backup rows", n)
	changed := 0
	for k, v := range pgtest.Values(t, pw, "chat", "id", "chat") {
		if v != orig[k] {
			changed++
		}
	}
	assert.Equal(t, n, changed, "every rewritten row has its backup row, and no other row changed")

	env := testEnv(t)
	t.Setenv("PGPASSWORD", srv.Password)
	r := runCLI(t, env, "", "runs", "--state-dir", state)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, "partial", "the run is recovered from its journal")
	r = runCLI(t, env, "", "undo", "--state-dir", state, "--last", "--yes")
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, "restored "+u)
	assert.Equal(t, orig, pgtest.Values(t, pw, "chat", "id", "chat"), "every row back")
}
