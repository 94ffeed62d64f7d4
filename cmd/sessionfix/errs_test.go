package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/reports"
)

// envWith is testEnv with extra variables.
func envWith(t testing.TB, vars map[string]string) *Env {
	env := testEnv(t)
	base := env.Getenv
	env.Getenv = func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return base(k)
	}
	return env
}

// TestMissingRootsAreErrors: issue 8 item 6. A PATH that does not exist, or no default
// runtime directory, is an error on stderr naming the path (and what was tried), exit 1, no
// empty report; an empty directory says no store was found.
func TestMissingRootsAreErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent")
	for _, cmd := range []string{"scan", "fix"} {
		r := runCLI(t, testEnv(t), "", cmd, missing)
		assert.Equal(t, exitcode.Error, r.code, cmd)
		assert.Equal(t, "sessionfix: nothing could be read: "+missing+": no such file or directory\n", r.err, cmd)
		assert.Empty(t, r.out, cmd+": no empty tables, no \"nothing to change\"")
	}

	// No PATH and no agent's default place (HOME is an empty directory): every place tried is
	// named (issue 23 item 4); --agent qwen names Qwen Code's alone.
	env := testEnv(t)
	r := runCLI(t, env, "", "scan")
	assert.Equal(t, exitcode.Error, r.code)
	assert.True(t, strings.HasPrefix(r.err, "sessionfix: no agent's store found: looked for "), r.err)
	for _, a := range all.Agents {
		assert.Contains(t, r.err, a.Core().Name+" (", "every agent's places are named")
	}
	assert.Contains(t, r.err, "Qwen Code ($QWEN_RUNTIME_DIR (not set), $QWEN_HOME (not set), ~/.qwen)")
	assert.Empty(t, r.out)
	r = runCLI(t, env, "", "scan", "--agent", "qwen")
	assert.Equal(t, exitcode.Error, r.code)
	assert.Equal(t, "sessionfix: no Qwen Code runtime directory found: tried $QWEN_RUNTIME_DIR (not set), $QWEN_HOME (not set), ~/.qwen: "+
		filepath.Join(env.Home, ".qwen")+": no such file or directory (pass a PATH, or set QWEN_HOME or QWEN_RUNTIME_DIR)\n", r.err)
	r = runCLI(t, envWith(t, map[string]string{"QWEN_HOME": missing}), "", "fix", "--agent", "qwen", "--format", "json")
	assert.Equal(t, exitcode.Error, r.code)
	assert.Contains(t, r.err, "tried $QWEN_RUNTIME_DIR (not set), $QWEN_HOME="+missing+": "+missing+": no such file or directory")
	r = runCLI(t, testEnv(t), "", "scan", "--agent", "codex")
	assert.Equal(t, exitcode.Error, r.code)
	assert.Contains(t, r.err, "no Codex home with sessions found: tried $CODEX_HOME (not set), so ~/.codex: ")

	// An empty directory: no error, but said.
	empty := t.TempDir()
	r = runCLI(t, testEnv(t), "", "scan", empty)
	assert.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.err, empty+": warning: no store found under "+empty)

	// One path read, one missing: the missing one is named, exit 3 (partial).
	r = runCLI(t, testEnv(t), "", "scan", "--format", "json", fixtureCopy(t), missing)
	assert.Equal(t, exitcode.Partial, r.code)
	assert.Contains(t, r.err, missing+": error: stat: no such file or directory")
}

// TestProblemsGoToStderr: issue 8 item 7. Per-store problems and warnings are written to
// standard error; the report on standard output stays machine-clean (JSON still has them as
// members).
func TestProblemsGoToStderr(t *testing.T) {
	dir := fixtureCopy(t)
	bad := filepath.Join(dir, "projects/-home-demo-src-api/chats/0badbad0-0000-4000-8000-000000000000.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte("{\"message\":\n"), 0o600))
	const reason = "0badbad0-0000-4000-8000-000000000000.jsonl:1: warning: invalid JSON (unexpected end of line, column 12); line left as it is"

	r := runCLI(t, testEnv(t), "", "scan", "--format", "json", dir)
	assert.Equal(t, exitcode.OK, r.code)
	var rep scanReport
	require.NoError(t, json.Unmarshal([]byte(r.out), &rep), "stdout is exactly one JSON document")
	require.Len(t, rep.Problems, 1)
	assert.Equal(t, bad, rep.Problems[0].Path)
	assert.Contains(t, r.err, "1 problem:\n  "+strings.TrimSuffix(bad, filepath.Base(bad))+reason)

	r = runCLI(t, testEnv(t), "", "scan", dir)
	assert.Equal(t, exitcode.OK, r.code)
	assert.NotContains(t, r.out, "problem")
	assert.Contains(t, r.err, reason)

	for _, format := range []string{"table", "json"} {
		r = runCLI(t, testEnv(t), "", "fix", "--format", format, dir)
		assert.Equal(t, exitcode.OK, r.code, format)
		assert.NotContains(t, r.out, "1 problem:", format)
		assert.Contains(t, r.err, reason, format)
	}
}

// TestSymlinkedRootIsFollowed: issue 9 item 10. ~/.qwen -> /data/qwen (and a PATH that is a
// symlink to a directory) is walked, with a note; links inside the tree are not followed.
func TestSymlinkedRootIsFollowed(t *testing.T) {
	env := testEnv(t)
	real := fixtureCopy(t)
	link := filepath.Join(env.Home, ".qwen")
	require.NoError(t, os.Symlink(real, link))
	// A link inside the tree to a session elsewhere stays not followed.
	outside := filepath.Join(t.TempDir(), "other.jsonl")
	b, err := os.ReadFile(filepath.Join(real, "projects/-home-demo-src-api/chats/50bcb974-4071-429f-a75f-7496ad5cddee.jsonl"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(outside, b, 0o600))
	inner := filepath.Join(real, "projects/-home-demo-src-api/chats/11111111-2222-4333-8444-555555555555.jsonl")
	require.NoError(t, os.Symlink(outside, inner))

	for _, args := range [][]string{{"scan", "--format", "json"}, {"scan", "--format", "json", link}} {
		r := runCLI(t, env, "", args...)
		require.Equal(t, exitcode.OK, r.code, r.err)
		var rep scanReport
		require.NoError(t, json.Unmarshal([]byte(r.out), &rep))
		assert.Equal(t, 4, rep.Totals.Stores, "the 4 stores of the linked tree, not the inner link")
		assert.Equal(t, 35, rep.Totals.Rewrite)
		assert.Contains(t, r.err, "note: "+link+": symbolic link to "+real+": followed")
		assert.Contains(t, r.err, "note: "+inner+": symbolic link not followed")
	}

	// fix --apply through the link rewrites the real files; undo restores them.
	before := snapshotTree(t, real)
	r := runCLI(t, env, "", "fix", "--apply", "--yes")
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.out, "rewrote 35 names in 3 files")
	r = runCLI(t, env, "", "undo", "--last")
	require.Equal(t, exitcode.OK, r.code, r.out+r.err)
	assert.Equal(t, before, snapshotTree(t, real))
}

// TestDiscoverAllServersFailing: issue 8 item 12. A server that dies is named with its
// command, exit status and last stderr lines, its configured secrets redacted; when every
// server fails, fix and audit end alike: exit 1, nothing planned or reported.
func TestDiscoverAllServersFailing(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "dying-server")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho \"starting with token $API_TOKEN\" >&2\necho 'backend unreachable' >&2\nexit 7\n"), 0o755))
	want := `discover MCP server "dying": connect: `
	tail := `; command "` + script + `" ended with exit status 7; its stderr ended with: starting with token [redacted] | backend unreachable`

	settingsPath := filepath.Join(dir, "settings.json")
	require.NoError(t, os.WriteFile(settingsPath, []byte(`{"mcpServers": {"dying": {"command": "`+script+`", "env": {"API_TOKEN": "tok-SETTINGS-SECRET"}}}}`), 0o644))
	env := testEnv(t)
	env.Environ = func() []string { return []string{"PATH=" + dir} }
	r := runCLI(t, env, "", "audit", "--settings", settingsPath, "--discover", "--discover-timeout", "1m")
	assert.Equal(t, exitcode.Error, r.code, r.err)
	assert.Contains(t, r.err, "sessionfix: --discover: none of the 1 MCP server could be listed (nothing was done):\n  "+want)
	assert.Contains(t, r.err, tail)
	assert.NotContains(t, r.err, "tok-SETTINGS-SECRET")
	assert.Empty(t, r.out, "no report of an inventory of nothing")

	home, rollout := codexHome(t, readFixture(t, "rollout-codex-0.50.0.jsonl"), false)
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"), []byte("[mcp_servers.dying]\ncommand = \""+script+"\"\nenv = { API_TOKEN = \"tok-CODEX-SECRET\" }\n"), 0o600))
	before := snapshotTree(t, home)
	r = runCLI(t, env, "", "fix", "--discover", "--apply", "--yes", rollout)
	assert.Equal(t, exitcode.Error, r.code, "the same exit as audit: "+r.err)
	assert.Contains(t, r.err, "sessionfix: --discover: none of the 1 MCP server could be listed (nothing was done):\n  "+want)
	assert.Contains(t, r.err, tail)
	assert.NotContains(t, r.err+r.out, "tok-CODEX-SECRET")
	assert.Equal(t, before, snapshotTree(t, home), "nothing rewritten")
}

// TestSettingsSecretsNeverPrinted: issue 9 item 9. Rules are printed as written ($VAR not
// expanded, and no current name computed from the variables' values); a settings string the
// parser rejects is named by file:line:col, never quoted.
func TestSettingsSecretsNeverPrinted(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"),
		[]byte(`{"permissions": {"allow": ["mcp__lit__$MY_TOKEN.x", "mcp__lit__${MY_TOKEN}.y"], "deny": ["mcp__lit__literature.search_pubmed"]}}`+"\n"), 0o644))
	env := testEnv(t)
	env.Environ = func() []string { return []string{"MY_TOKEN=sk-TOPSECRET"} }
	for _, format := range []string{"table", "json"} {
		r := runCLI(t, env, "", "scan", "--format", format, dir)
		require.Equal(t, exitcode.OK, r.code, r.err)
		assert.NotContains(t, r.out+r.err, "TOPSECRET", format)
		assert.Contains(t, r.out, "mcp__lit__$MY_TOKEN.x", format)
		assert.Contains(t, r.out, "mcp__lit__literature_search_pubmed_1nv53db", "a rule without $VAR keeps its current name")
	}
	r := runCLI(t, env, "", "scan", dir)
	assert.Regexp(t, `mcp__lit__\$\{MY_TOKEN\}\.y +not-provider-safe +\(depends on \$VAR values; not shown\)`, r.out)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"mcpServers": {"x": {"command": "c", "env": {"TOKEN": "sk-LITERAL-SECRET\q"}}}}`+"\n"), 0o644))
	r = runCLI(t, env, "", "audit", "--settings", bad, "--inventory", "../../fixtures/qwen-settings/inventory.json", "--format", "json")
	assert.Equal(t, exitcode.Partial, r.code)
	assert.Contains(t, r.err, bad+":1:56: invalid string starting here (a bad escape such as \\q, or a control character such as a tab); its text is not shown")
	assert.NotContains(t, r.err+r.out, "LITERAL-SECRET")
}

// TestAuditPathAuditsThatHome: issue 8 item 13. "audit PATH" with a copied ~/.qwen and a
// project directory audits their settings (user and workspace scopes), subagents and session
// history — exactly what the equivalent --settings/--agents/--history flags give — and never
// the settings of whoever runs it; a run without any rule says so.
func TestAuditPathAuditsThatHome(t *testing.T) {
	work := t.TempDir()
	home := filepath.Join(work, "tickets", "4711", "user-qwen")
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", home)
	b, err := os.ReadFile("../../fixtures/qwen-settings/settings.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(home, "settings.json"), b, 0o644))
	project := filepath.Join(work, "tickets", "4711", "app")
	copyTree(t, "../../fixtures/qwen-settings/workspace", project)

	env := testEnv(t) // HOME is an empty directory
	r := runCLI(t, env, "", "audit", "--format", "json", home, project)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.err, "audit: "+home+" is a Qwen Code home: settings "+filepath.Join(home, "settings.json")+" (user scope), session history "+home+"\n")
	assert.Contains(t, r.err, "audit: "+project+" is a project: settings "+filepath.Join(project, ".qwen", "settings.json")+" (workspace scope), subagents "+filepath.Join(project, ".qwen", "agents")+"\n")
	var got qwenAuditDoc
	require.NoError(t, json.Unmarshal([]byte(r.out), &got))
	assert.Equal(t, []reports.JSONFile{{Path: filepath.Join(home, "settings.json"), Scope: "user"},
		{Path: filepath.Join(project, ".qwen", "settings.json"), Scope: "workspace"}}, got.Settings)
	assert.Equal(t, []string{filepath.Join(project, ".qwen", "agents", "verifier.md")}, got.Agents)
	assert.Equal(t, 18, got.Counts.Rules)
	assert.Equal(t, "inferred", got.Inventory)
	assert.Equal(t, 8, got.Counts.Tools, "tools inferred from that home's servers and history")

	flags := runCLI(t, env, "", "audit", "--format", "json", "--settings", "user="+filepath.Join(home, "settings.json"),
		"--settings", "workspace="+filepath.Join(project, ".qwen", "settings.json"), "--agents", filepath.Join(project, ".qwen", "agents"),
		"--history", home)
	require.Equal(t, exitcode.OK, flags.code, flags.err)
	assert.JSONEq(t, flags.out, r.out, "PATHs read exactly what the flags name")

	// The runner's own settings are never read for a PATH.
	mine := filepath.Join(env.Home, ".qwen", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(mine), 0o755))
	require.NoError(t, os.WriteFile(mine, []byte(`{"permissions": {"deny": ["mcp__mine__tool"]}}`), 0o644))
	again := runCLI(t, env, "", "audit", "--format", "json", home, project)
	require.Equal(t, exitcode.OK, again.code, again.err)
	assert.JSONEq(t, r.out, again.out)

	// --history DIR only reads DIR's history: said so, with the command that audits DIR.
	r = runCLI(t, env, "", "audit", "--history", home)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.err, "sessionfix: note: --history "+home+" reads only its session history, not "+filepath.Join(home, "settings.json")+
		"; to audit that home's settings run: sessionfix audit "+home+"\n")

	// A home without settings: no rule at all, said so.
	require.NoError(t, os.Remove(filepath.Join(home, "settings.json")))
	r = runCLI(t, env, "", "audit", home)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.err, "no settings.json in "+home)
	assert.Contains(t, r.err, "audit: no permission rule found (no settings or subagent file was read): every tool gets its default decision")

	r = runCLI(t, env, "", "audit", filepath.Join(work, "missing"))
	assert.Equal(t, exitcode.Error, r.code)
	assert.Contains(t, r.err, filepath.Join(work, "missing")+": no such file or directory")
	r = runCLI(t, env, "", "audit", t.TempDir())
	assert.Equal(t, exitcode.Usage, r.code)
	assert.Contains(t, r.err, "neither a Qwen Code home (settings.json or projects/ in it) nor a project (a .qwen directory in it)")
}

// TestUndoRefusalsGoToStderr: issue 8 item 7 for undo. A file undo refuses is named on
// standard error; standard output keeps the run's lines and the summary.
func TestUndoRefusalsGoToStderr(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	r := runCLI(t, env, "", "fix", "--apply", "--yes", dir)
	require.Equal(t, exitcode.OK, r.code, r.err)
	usage := filepath.Join(dir, "usage_record.jsonl")
	require.NoError(t, os.WriteFile(usage, []byte("{}\n"), 0o644)) // changed since the run, not appended to
	r = runCLI(t, env, "", "undo", "--last")
	assert.Equal(t, exitcode.Partial, r.code, r.out+r.err)
	assert.Contains(t, r.err, "  refused  ")
	assert.Contains(t, r.err, "usage_record.jsonl")
	assert.NotContains(t, r.out, "refused  ")
	assert.Contains(t, r.out, "1 file not restored")
}

// With --format json, a run that reads nothing still writes one closed JSON document with an
// "error" member on stdout (as undo does), the message on stderr and exit 1 unchanged.
func TestNothingReadJSONIsAClosedDocument(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent")
	want := "nothing could be read: " + missing + ": no such file or directory"
	for _, args := range [][]string{
		{"scan"}, {"fix"}, {"fix", "--apply", "--yes"}, {"check", "--provider", "all"},
	} {
		name := strings.Join(args, " ")
		r := runCLI(t, testEnv(t), "", append(args, "--format", "json", missing)...)
		assert.Equal(t, exitcode.Error, r.code, name)
		assert.Equal(t, "sessionfix: "+want+"\n", r.err, name)
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.out), &doc), "%s: stdout %q", name, r.out)
		assert.Equal(t, want, doc["error"], name)
		if args[0] == "fix" {
			mode := "dry-run"
			if len(args) > 1 {
				mode = "apply"
			}
			assert.Equal(t, mode, doc["mode"], name)
			assert.Equal(t, []any{}, doc["stores"], name)
		}
	}
}
