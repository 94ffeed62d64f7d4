package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store/postgres/pgtest"
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
}
