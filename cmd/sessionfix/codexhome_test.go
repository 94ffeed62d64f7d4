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

	"github.com/sessionfix/sessionfix/agent/codex"
	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/internal/exitcode"
)

// fixJSON is the part of fix --format json these tests read.
type fixJSON struct {
	Stores []fixStore    `json:"stores"`
	Codex  []*codex.Info `json:"codex"`
	Totals struct {
		Rewrite int `json:"rewrite"`
		Kept    int `json:"kept"`
	} `json:"totals"`
}

// callRenames maps each planned call/name rewrite (old → new) of a fix --format json run.
func callRenames(t testing.TB, out []byte) (map[string]string, fixJSON) {
	t.Helper()
	var rep fixJSON
	require.NoError(t, json.Unmarshal(out, &rep), string(out))
	got := map[string]string{}
	for _, s := range rep.Stores {
		for _, d := range s.Decisions {
			if d.Site == "call/name" && d.Action == "rewrite" {
				got[d.Old.String()] = d.New
			}
		}
	}
	return got, rep
}

// the user's own config (both literature tools enabled) gives the colliding pair suffixes.
var userCodexNames = map[string]string{
	"mcp__foo-bar__deploy.prod":          "deploy_prod",
	"mcp__lit__get+data":                 "get_data",
	"mcp__lit__literature.search_pubmed": "literature_search_pubmed_977c8bf14fb3",
	"mcp__lit__搜索文献":                     "____",
}

// engineerConfig is a config.toml of the person running sessionfix: it disables
// literature_search_pubmed, so under it literature.search_pubmed would get no suffix.
const engineerConfig = `[mcp_servers.lit]
command = "python3"
disabled_tools = ["literature_search_pubmed"]

[mcp_servers.foo-bar]
command = "python3"
`

// TestCodexHomeAsPathUsesItsOwnConfig: a copied Codex home given as PATH is planned with its
// own config.toml, never with $CODEX_HOME's or ~/.codex's (issue 8 item 2).
func TestCodexHomeAsPathUsesItsOwnConfig(t *testing.T) {
	orig := readFixture(t, "rollout-codex-0.50.0.jsonl")
	home, path := codexHome(t, orig, true)
	cfg := filepath.Join(home, "config.toml")

	// HOME empty, no CODEX_HOME: the home's own config attributes every name.
	e := newCodexEnv(t, nil)
	require.Equal(t, exitcode.OK, e.run(t, "fix", "--format", "json", home), e.err.String())
	got, rep := callRenames(t, e.out.Bytes())
	assert.Equal(t, userCodexNames, got)
	require.Len(t, rep.Codex, 1, "the plan names the config it used")
	assert.Equal(t, codex.Info{Home: home, Rollouts: 1, Config: cfg, ConfigFrom: "the Codex home of PATH", Inventory: []string{}, History: []string{}}, *rep.Codex[0])
	require.Equal(t, exitcode.OK, e.run(t, "fix", home), e.err.String())
	assert.Contains(t, e.out.String(), "Codex naming: config "+cfg+" (the Codex home of PATH); no inventory; no thread history")
	assert.Contains(t, e.out.String(), "would rewrite 4 names in 1 file")

	// The engineer's own ~/.codex/config.toml (and a $CODEX_HOME) are not read, whether the
	// PATH is the home, its sessions/, one rollout or a directory above the home.
	require.NoError(t, os.MkdirAll(filepath.Join(e.Home, ".codex"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.Home, ".codex", "config.toml"), []byte(engineerConfig), 0o600))
	for _, vars := range []map[string]string{nil, {"CODEX_HOME": filepath.Join(e.Home, ".codex")}} {
		e.Getenv = func(k string) string { return vars[k] }
		for _, arg := range []string{home, filepath.Join(home, "sessions"), path, filepath.Dir(home)} {
			require.Equal(t, exitcode.OK, e.run(t, "fix", "--format", "json", arg), e.err.String())
			got, rep := callRenames(t, e.out.Bytes())
			assert.Equal(t, userCodexNames, got, "PATH %s, env %v", arg, vars)
			require.Len(t, rep.Codex, 1)
			assert.Equal(t, cfg, rep.Codex[0].Config)
		}
	}

	// --codex-config still overrides.
	eng := filepath.Join(e.Home, ".codex", "config.toml")
	require.Equal(t, exitcode.OK, e.run(t, "fix", "--format", "json", "--codex-config", eng, home), e.err.String())
	got, rep = callRenames(t, e.out.Bytes())
	assert.Equal(t, "literature_search_pubmed", got["mcp__lit__literature.search_pubmed"])
	require.Len(t, rep.Codex, 1)
	assert.Equal(t, eng, rep.Codex[0].Config)
	assert.Equal(t, "--codex-config", rep.Codex[0].ConfigFrom)

	// Without a PATH, the default home is named as such.
	e.Getenv = func(k string) string { return map[string]string{"CODEX_HOME": home}[k] }
	require.Equal(t, exitcode.OK, e.run(t, "scan", "--agent", "codex", "--format", "json"), e.err.String())
	var srep scanJSON
	require.NoError(t, json.Unmarshal(e.out.Bytes(), &srep))
	if assert.Len(t, srep.Codex, 1) {
		assert.Equal(t, "$CODEX_HOME", srep.Codex[0].ConfigFrom)
		assert.Equal(t, cfg, srep.Codex[0].Config)
	}

	// Two homes in one run: each rollout is planned with its own home's config.
	e.Getenv = func(string) string { return "" }
	other, otherPath := codexHome(t, orig, false)
	require.NoError(t, os.WriteFile(filepath.Join(other, "config.toml"), []byte(engineerConfig), 0o600))
	require.Equal(t, exitcode.OK, e.run(t, "fix", "--format", "json", home, other), e.err.String())
	require.NoError(t, json.Unmarshal(e.out.Bytes(), &rep))
	byStore := map[string]string{}
	for _, s := range rep.Stores {
		for _, d := range s.Decisions {
			if d.Old.String() == "mcp__lit__literature.search_pubmed" {
				byStore[s.Path] = d.New
			}
		}
	}
	assert.Equal(t, map[string]string{path: "literature_search_pubmed_977c8bf14fb3", otherPath: "literature_search_pubmed"}, byStore)
	require.Len(t, rep.Codex, 2)
	require.Equal(t, exitcode.OK, e.run(t, "fix", home, other), e.err.String())
	assert.Contains(t, e.out.String(), "Codex naming: config "+cfg+" (the Codex home of PATH) for 1 rollout; no inventory")
	assert.Contains(t, e.out.String(), "Codex naming: config "+filepath.Join(other, "config.toml")+" (the Codex home of PATH) for 1 rollout; no inventory")
}

// TestCodexHomeApplyMatchesCodexHomeEnv: fix --apply on a copied home with an empty HOME and
// no CODEX_HOME writes exactly what CODEX_HOME=<home> writes (the acceptance).
func TestCodexHomeApplyMatchesCodexHomeEnv(t *testing.T) {
	orig := readFixture(t, "rollout-codex-0.50.0.jsonl")
	results := map[string][]byte{}
	for _, mode := range []string{"path", "env"} {
		home, path := codexHome(t, orig, true)
		vars := map[string]string{}
		args := []string{"fix", "--apply", "--yes", "--state-dir", t.TempDir()}
		if mode == "env" {
			vars["CODEX_HOME"] = home
			args = append(args, "--agent", "codex")
		} else {
			args = append(args, home)
		}
		e := newCodexEnv(t, vars)
		require.Equal(t, exitcode.OK, e.run(t, args...), e.err.String())
		assert.Contains(t, e.out.String(), "rewrote 4 names in 1 file", mode)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		results[mode] = b
	}
	assert.NotEqual(t, orig, results["path"])
	assert.Equal(t, string(results["env"]), string(results["path"]))
}

// buildHistory writes the fixture thread_history_1.sqlite into dir.
func buildHistory(t testing.TB, dir string) string {
	t.Helper()
	f, err := os.Open(codexFixtures + "thread_history_1.sql")
	require.NoError(t, err)
	defer f.Close()
	db := filepath.Join(dir, "thread_history_1.sqlite")
	require.NoError(t, sqlitetest.BuildFromSQL(context.Background(), db, true, f))
	return db
}

// TestCodexThreadHistoryFeedsTheNamer: a copied home with no config.toml but its
// thread_history_1.sqlite attributes every rejected name from the raw identities Codex
// recorded there, names the source, and scan lists those identities (issue 8 item 4).
func TestCodexThreadHistoryFeedsTheNamer(t *testing.T) {
	orig := readFixture(t, "rollout-codex-0.50.0.jsonl")
	home, _ := codexHome(t, orig, false)
	db := buildHistory(t, home)
	e := newCodexEnv(t, nil)

	require.Equal(t, exitcode.OK, e.run(t, "fix", "--format", "json", home), e.err.String())
	got, rep := callRenames(t, e.out.Bytes())
	assert.Equal(t, userCodexNames, got)
	for _, s := range rep.Stores {
		for _, d := range s.Decisions {
			if d.Site == "call/name" && d.Action == "rewrite" {
				assert.Equal(t, "thread history (thread_history_1.sqlite, E2 name)", d.Source, d.Old)
				assert.Contains(t, d.Note, "over the 8 tools of thread_history_1.sqlite")
			}
		}
	}
	require.Len(t, rep.Codex, 1)
	assert.Equal(t, []string{db}, rep.Codex[0].History)
	assert.Equal(t, 8, rep.Codex[0].HistoryTools)
	assert.Equal(t, "", rep.Codex[0].Config)

	require.Equal(t, exitcode.OK, e.run(t, "scan", "--format", "json", home), e.err.String())
	var srep scanJSON
	require.NoError(t, json.Unmarshal(e.out.Bytes(), &srep))
	want := map[string]int{}
	for _, id := range srep.Identities {
		want[id.Server+"/"+id.Tool] = id.Count
	}
	assert.Equal(t, map[string]int{"foo-bar/deploy.prod": 1, "foo-bar/get_data": 1, "lit/get+data": 1,
		"lit/get_data_for_a_specific_location_and_date_range_extended": 1, "lit/literature.search_pubmed": 1,
		"lit/literature_search_pubmed": 1, "lit/ok_tool": 1, "lit/搜索文献": 1}, want)
	require.Equal(t, exitcode.OK, e.run(t, "scan", home), e.err.String())
	assert.Contains(t, e.out.String(), "raw MCP identities recorded")
	assert.Regexp(t, `lit +literature\.search_pubmed +1 +1`, e.out.String())
	assert.Contains(t, e.out.String(), "raw identities of 8 tools from "+db)
}

// TestWrongAgentWarns: scan --agent codex over a Qwen home is no silent all-clear (issue 8
// item 11): each Qwen file read as a rollout is named in a warning.
func TestWrongAgentWarns(t *testing.T) {
	dir := fixtureCopy(t)
	e := newCodexEnv(t, nil)
	require.Equal(t, exitcode.OK, e.run(t, "scan", "--agent", "codex", "--format", "json", dir), e.err.String())
	var rep scanJSON
	require.NoError(t, json.Unmarshal(e.out.Bytes(), &rep))
	warned := 0
	for _, p := range rep.Problems {
		if p.Severity == "warning" && strings.Contains(p.Reason, "read as a Codex rollout (--agent codex), but it looks like a qwen store (qwen-session)") {
			warned++
		}
	}
	assert.Equal(t, 3, warned, "the three Qwen sessions: %+v", rep.Problems)
}

// TestKeptRejectedNamesAndFailOnKept: names a provider rejects that are kept are counted in a
// closing line with why and how to fix, and --fail-on kept gives scan and fix exit 5 (issue 8
// item 3); provider-safe kept names (middle-truncated) are no finding.
func TestKeptRejectedNamesAndFailOnKept(t *testing.T) {
	orig := readFixture(t, "rollout-codex-0.50.0.jsonl")
	bare, _ := codexHome(t, orig, false) // no config, no history: nothing attributes the names
	e := newCodexEnv(t, nil)

	const line = "4 names a provider rejects were kept: 4 codex-unattributed (raw MCP identity unknown; fix: pass --inventory or --codex-config"
	require.Equal(t, exitcode.OK, e.run(t, "fix", bare), e.err.String())
	assert.Contains(t, e.out.String(), line)
	for _, cmd := range []string{"fix", "scan"} {
		assert.Equal(t, exitcode.Finding, e.run(t, cmd, "--fail-on", "kept", bare), cmd)
		assert.Contains(t, e.out.String(), line, cmd)
		assert.Equal(t, cmd+": --fail-on kept: 4 names a provider rejects kept\n", e.err.String())
	}
	assert.Equal(t, exitcode.Finding, e.run(t, "fix", "--apply", "--yes", "--state-dir", t.TempDir(), "--fail-on", "kept", bare))

	require.Equal(t, exitcode.Finding, e.run(t, "fix", "--format", "json", "--fail-on", "kept", bare))
	var tail struct {
		KeptNote string `json:"kept_note"`
		Totals   struct {
			KeptRejected int `json:"kept_rejected"`
		} `json:"totals"`
	}
	require.NoError(t, json.Unmarshal(e.out.Bytes(), &tail))
	assert.Equal(t, 4, tail.Totals.KeptRejected)
	assert.Contains(t, tail.KeptNote, line)

	// Repaired with its config: nothing kept, --fail-on kept passes.
	home, _ := codexHome(t, orig, true)
	require.Equal(t, exitcode.OK, e.run(t, "fix", "--fail-on", "kept", home), e.err.String())
	assert.NotContains(t, e.out.String(), "a provider rejects were kept")

	// Qwen: middle-truncated names are provider-safe (no finding); a dotted one kept by
	// --keep-truncated is.
	dir := fixtureCopy(t)
	require.Equal(t, exitcode.OK, e.run(t, "scan", "--fail-on", "kept", dir), e.err.String())
	assert.Equal(t, exitcode.Finding, e.run(t, "scan", "--fail-on", "kept", "--keep-truncated", dir))
	assert.Contains(t, e.out.String(), "7 names a provider rejects were kept: 7 legacy-truncated-dotted (kept by --keep-truncated; fix: run without it)")

	assert.Equal(t, exitcode.Usage, e.run(t, "fix", "--fail-on", "lost", bare))
	assert.Contains(t, e.err.String(), `--fail-on takes kept, not "lost"`)
}
