package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/internal/exitcode"
)

// openwebuiFixtures is the Open WebUI store and its --profile (fixtures/openwebui-schema).
const openwebuiFixtures = "../../fixtures/openwebui-schema/"

// TestUndoRunMadeWithProfile (issue 23 item 6): fix --apply --profile FILE records the profile
// document in the run's manifest, and undo reopens the store with it (before: exit 3, "the run
// recorded a sqlite store, but the file is not one"). A run whose manifest is lost (recovered
// from its journal, which does not hold the profile) says to give undo --profile FILE, and
// restores with it.
func TestUndoRunMadeWithProfile(t *testing.T) {
	env := testEnv(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "webui.db")
	sql, err := os.Open(openwebuiFixtures + "dump_sqlite.sql")
	require.NoError(t, err)
	defer sql.Close()
	// A store only the --profile describes: Open WebUI's own tables are known since issue 28
	// (agent/openwebui); a renamed column keeps that profile (it needs chat.folder_id) from
	// matching, and the --profile (chat.chat only) still does.
	require.NoError(t, sqlitetest.BuildFromSQL(context.Background(), db, false, sql,
		strings.NewReader("ALTER TABLE chat RENAME COLUMN folder_id TO folder;")))
	orig := dumpSHA(t, db)
	prof := filepath.Join(dir, "openwebui.profile.json")
	doc, err := os.ReadFile(openwebuiFixtures + "openwebui.profile.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(prof, doc, 0o644))

	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--profile", prof, db)
	require.Equal(t, 0, r.code, r.out+r.err)
	runs, err := filepath.Glob(filepath.Join(env.Home, "state", "sessionfix", "runs", "*", "manifest.json"))
	require.NoError(t, err)
	require.Len(t, runs, 1)
	var m struct {
		Profile struct {
			Source   string          `json:"source"`
			Document json.RawMessage `json:"document"`
		} `json:"profile"`
	}
	b, err := os.ReadFile(runs[0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, prof, m.Profile.Source)
	assert.JSONEq(t, string(doc), string(m.Profile.Document))

	r = runCLI(t, env, "", "undo", "--last")
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Equal(t, orig, dumpSHA(t, db))

	// A run made before runs recorded their profile (its manifest without "profile"): undo says
	// which flag gives it, and restores with it; another profile than a recorded one is refused.
	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--profile", prof, db)
	require.Equal(t, 0, r.code, r.out+r.err)
	runs, err = filepath.Glob(filepath.Join(env.Home, "state", "sessionfix", "runs", "*", "manifest.json"))
	require.NoError(t, err)
	require.Len(t, runs, 2)
	for _, p := range runs {
		var old map[string]any
		b, err = os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &old))
		if old["state"] == "undone" {
			continue // the first run
		}
		require.Contains(t, old, "profile")
		delete(old, "profile")
		resealManifest(t, p, old)
	}
	r = runCLI(t, env, "", "undo", "--last")
	assert.Equal(t, exitcode.Partial, r.code, r.out+r.err)
	assert.Contains(t, r.err, db+": the run recorded a sqlite store, but no known SQLite store profile matches the file: not restored (a run made with fix --profile FILE: give undo --profile FILE)")
	r = runCLI(t, env, "", "undo", "--last", "--profile", prof)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Equal(t, orig, dumpSHA(t, db))
}
