package main

import (
	"encoding/json"
	"fmt"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const claudeFixture = "fixtures/claude-real"

// claudeRecorded is fixtures/claude-real/README.md "What the result lines show", per session
// and tool (server/tool): ran, refused (an ask, refused by claude -p), denied, not offered.
var claudeRecorded = map[string]map[string]string{
	"1.0.51 lab": {"foo.bar/deploy.prod": "ran", "foo.bar/get_data": "refused",
		"com.example.enterprise-search-platform/query_documents_by_semantic_similarity_and_rank": "ran", "my server/ping": "denied"},
	"2.1.332 lab": {"foo.bar/deploy.prod": "refused", "foo.bar/get_data": "refused",
		"com.example.enterprise-search-platform/query_documents_by_semantic_similarity_and_rank": "ran", "my server/ping": "not offered"},
	"2.1.332 api": {"lit/literature.search_pubmed": "not offered", "lit/literature_search_pubmed": "not offered",
		"foo.bar/deploy.prod": "refused", "foo.bar/get_data": "ran",
		"com.example.enterprise-search-platform/query_documents_by_semantic_similarity_and_rank": "refused", "my server/ping": "refused"},
}

// every other tool of the recording is a lit tool that ran (mcp__lit)
func recordedOutcome(session, tool string) string {
	if o, ok := claudeRecorded[session][tool]; ok {
		return o
	}
	return "ran"
}

// the audit's outcome in the recording's words
var recordedWord = map[string]string{"ran": "ran", "ask": "refused", "block": "denied", "not offered": "not offered"}

// TestClaudeAuditAcceptance is issue 11's second acceptance bullet: audit --agent claude on the
// fixture's rule files predicts per tool what 1.0.51 (before) and 2.1.332 (now) did.
func TestClaudeAuditAcceptance(t *testing.T) {
	atRepoRoot(t)
	env := testEnv(t)
	match, total := map[string]int{}, map[string]int{}
	for _, p := range []string{"lab", "api"} {
		toolsOut := filepath.Join(t.TempDir(), "tools.csv")
		res := runCLI(t, env, "", "audit", "--agent", "claude", "--inventory", "fixtures/claude-audit/inventory.json",
			"--before", "1.0.51", "--project-key", "/home/demo/src/"+p, "--tools-out", toolsOut,
			claudeFixture+"/dot-claude", claudeFixture+"/project-settings/"+p)
		require.Equal(t, 0, res.code, res.err)
		data, err := os.ReadFile(toolsOut)
		require.NoError(t, err)
		rows := readCSV(t, data)
		require.Equal(t, []string{"server", "tool", "name_now", "name_before", "decision_now", "rule_now", "outcome_now",
			"decision_before", "rule_before", "outcome_before", "shared_now"}, rows[0])
		require.Len(t, rows, 11)
		for _, r := range rows[1:] {
			tool := r[0] + "/" + r[1]
			for _, s := range []struct {
				session, outcome string
			}{{"2.1.332 " + p, r[6]}, {"1.0.51 " + p, r[9]}} {
				if _, recordedSession := claudeRecorded[s.session]; !recordedSession {
					continue // 1.0.51 was not run in api
				}
				rel := strings.Fields(s.session)[0]
				total[rel]++
				if assert.Equal(t, recordedOutcome(s.session, tool), recordedWord[s.outcome], "%s: %s", s.session, tool) {
					match[rel]++
				}
			}
		}
	}
	t.Logf("tools matching the recording: 1.0.51 %d of %d, 2.1.332 %d of %d", match["1.0.51"], total["1.0.51"], match["2.1.332"], total["2.1.332"])
	assert.Equal(t, map[string]int{"1.0.51": 10, "2.1.332": 20}, total)
	assert.Equal(t, total, match)
}

// A deny that matched under 1.0.0's raw names and matches nothing under 2.1.332 is a lost
// restriction: first on stderr, first row of the CSV, first member of the JSON, first section
// of the HTML, and --fail-on lost exits 5.
func TestClaudeAuditLostRestrictionFirst(t *testing.T) {
	atRepoRoot(t)
	env := testEnv(t)
	dir := t.TempDir()
	args := []string{"audit", "--agent", "claude", "--inventory", "fixtures/claude-audit/inventory.json",
		"--before", "1.0.0", "--project-key", "/home/demo/src/lab"}
	paths := []string{claudeFixture + "/dot-claude", claudeFixture + "/project-settings/lab"}
	res := runCLI(t, env, "", append(append(append([]string{}, args...), "--fail-on", "lost"), paths...)...)
	assert.Equal(t, exitcode.Finding, res.code, res.err)
	assert.True(t, strings.HasPrefix(res.err, `audit: LOST RESTRICTION: deny rule "mcp__foo.bar__deploy.prod" (fixtures/claude-real/dot-claude/settings.json:4:14, permissions.deny) matched foo.bar/deploy.prod as mcp__foo.bar__deploy.prod under 1.0.0 and matches nothing of it under 2.1.332 (now mcp__foo_bar__deploy_prod: ask)`), res.err)
	rows := readCSV(t, []byte(res.out))
	assert.Equal(t, []string{claudeFixture + "/dot-claude/settings.json", "user", "permissions.deny", "0", "mcp__foo.bar__deploy.prod", "deny",
		"foo.bar", "deploy.prod", "mcp__foo_bar__deploy_prod", "mcp__foo.bar__deploy.prod", "no", "match", "lost"}, rows[1])
	assert.Contains(t, res.err, "1 lost (1 restriction)")

	// without --fail-on: exit 0, same report
	res = runCLI(t, env, "", append(append([]string{}, args...), paths...)...)
	assert.Equal(t, 0, res.code, res.err)

	jsonOut := filepath.Join(dir, "a.json")
	res = runCLI(t, env, "", append(append(append([]string{}, args...), "--format", "json", "--out", jsonOut), paths...)...)
	require.Equal(t, 0, res.code, res.err)
	data, err := os.ReadFile(jsonOut)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "{\n  \"lost_restrictions\": [\n"), string(data[:80]))
	var doc struct {
		Lost []struct {
			Rule, Kind, Server, Tool, Change string
		} `json:"lost_restrictions"`
		Now     string `json:"claude_version"`
		Before  string `json:"before"`
		Trusted bool   `json:"trusted"`
		Tools   []struct {
			Server, Tool string
			Now          struct{ Outcome, Name string }
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	require.Len(t, doc.Lost, 1)
	assert.Equal(t, "mcp__foo.bar__deploy.prod", doc.Lost[0].Rule)
	assert.Equal(t, "deny", doc.Lost[0].Kind)
	assert.Equal(t, "2.1.332", doc.Now)
	assert.Equal(t, "1.0.0", doc.Before)
	assert.True(t, doc.Trusted)

	htmlOut := filepath.Join(dir, "a.html")
	res = runCLI(t, env, "", append(append(append([]string{}, args...), "--format", "html", "--out", htmlOut), paths...)...)
	require.Equal(t, 0, res.code, res.err)
	page, err := os.ReadFile(htmlOut)
	require.NoError(t, err)
	s := strings.ReplaceAll(string(page), "<wbr>", "") // a cell's seams where it may wrap
	lost, pairs := strings.Index(s, `id="lost"`), strings.Index(s, `id="pairs"`)
	require.Positive(t, lost)
	assert.Less(t, lost, pairs, "the lost restrictions come before the pairs table")
	assert.Contains(t, s[lost:pairs], "mcp__foo.bar__deploy.prod")
	assert.NotContains(t, s, "<script src=")
}

// Discovered scopes: $HOME/.claude/settings.json, $HOME/.claude.json, the project's
// .claude/settings.json and settings.local.json, legacy allowedTools, an untrusted project;
// a managed file given with --settings managed=FILE. The sessions' oldest version is the
// default --before.
func TestClaudeAuditDiscoveredScopesAndTrust(t *testing.T) {
	env := testEnv(t)
	home := env.Home
	proj := filepath.Join(home, "src", "app")
	write := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	write(filepath.Join(home, ".claude", "settings.json"), `{"permissions": {"allow": ["mcp__lit"]}}`)
	write(filepath.Join(proj, ".claude", "settings.json"), `{
  // the team's rules
  "permissions": {"allow": ["mcp__foo_bar__get_data"], "deny": ["mcp__foo.bar__deploy.prod"]}
}`)
	write(filepath.Join(proj, ".claude", "settings.local.json"), `{"permissions": {"ask": ["mcp__lit__ok_tool"]}}`)
	write(filepath.Join(home, ".claude.json"), `{"projects": {"`+proj+`": {"allowedTools": ["mcp__foo.bar__deploy.prod"], "hasTrustDialogAccepted": false}}}`)
	write(filepath.Join(home, ".claude", "projects", strings.ReplaceAll(proj, "/", "-"), "s.jsonl"),
		`{"type":"user","version":"1.0.0"}`+"\n"+`{"type":"user","version":"2.1.90"}`+"\n")
	managed := filepath.Join(t.TempDir(), "managed-settings.json")
	write(managed, `{"permissions": {"deny": ["mcp__lit__get_data"]}}`)
	inv := filepath.Join(t.TempDir(), "inv.json")
	write(inv, `{"servers": {"lit": {"tools": ["ok_tool", "get+data"]}, "foo.bar": {"tools": ["get_data", "deploy.prod"]}}}`)
	toolsOut := filepath.Join(t.TempDir(), "tools.csv")
	res := runCLI(t, env, "", "audit", "--agent", "claude", "--inventory", inv, "--project", proj,
		"--settings", "managed="+managed, "--tools-out", toolsOut, "--all-pairs")
	require.Equal(t, 0, res.code, res.err)
	assert.Contains(t, res.err, "Claude Code 2.1.332 (before: 1.0.0), project "+proj+" (not trusted): 6 rules, 4 tools")
	data, err := os.ReadFile(toolsOut)
	require.NoError(t, err)
	got := map[string]string{}
	for _, r := range readCSV(t, data)[1:] {
		got[r[0]+"/"+r[1]] = r[4] + " " + r[5] + " " + r[6] + " | " + r[7] + " " + r[8] + " " + r[9]
	}
	assert.Equal(t, map[string]string{
		// project allow ignored (untrusted) under 2.1.332; under 1.0.0 it names nothing
		// (1.0.0 called the tool mcp__foo.bar__get_data)
		"foo.bar/get_data": "default  ask | default  ask",
		// the project deny (raw spelling) denied under 1.0.0; now the legacy allowedTools no
		// longer match either (and are ignored: untrusted)
		"foo.bar/deploy.prod": "default  ask | deny mcp__foo.bar__deploy.prod block",
		// the managed deny of the normalized name hides get+data now; 1.0.0 named it get+data
		"lit/get+data": "deny mcp__lit__get_data not offered | default  ask",
		"lit/ok_tool":  "ask mcp__lit__ok_tool ask | default  ask",
	}, got)
	rows := readCSV(t, []byte(res.out))
	assert.Len(t, rows, 1+6*4, "--all-pairs lists every pair")
	assert.Equal(t, []string{"project", "permissions.deny", "mcp__foo.bar__deploy.prod", "deploy.prod", "lost"},
		[]string{rows[1][1], rows[1][2], rows[1][4], rows[1][7], rows[1][12]}, "the restriction lost first: the project deny")
}

func TestClaudeAuditUsage(t *testing.T) {
	atRepoRoot(t)
	env := testEnv(t)
	inv := "fixtures/claude-audit/inventory.json"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "claude", "--subagent", "x", "--inventory", inv}, "--subagent is a Qwen Code audit flag"},
		{[]string{"--agent", "claude", "--claude-version", "2.x", "--inventory", inv}, "--claude-version"},
		{[]string{"--agent", "claude", "--before", "old", "--inventory", inv}, "--before"},
		{[]string{"--agent", "claude"}, "no MCP tool known"},
		{[]string{"--agent", "claude", "--settings", "workspace=x.json", "--inventory", inv}, "SCOPE one of managed, user, project, local"},
		{[]string{"--agent", "codex"}, `--agent must be gemini, qwen, claude, kilo, copilot or cline, not "codex"`},
		{[]string{"--before", "1.0.51"}, "--before is a Gemini CLI, Claude Code and GitHub Copilot CLI audit flag: add --agent gemini, --agent claude or --agent copilot"},
		// The Qwen Code audit reads no MCP config: --mcp-config was silently ignored (review5).
		{[]string{"--mcp-config", "mcp.json", "--inventory", "fixtures/qwen-settings/inventory.json", "fixtures/qwen-settings"}, "--mcp-config is a Claude Code audit flag: add --agent claude"},
		{[]string{"--agent", "claude", "--inventory", inv, claudeFixture + "/dot-claude", claudeFixture + "/project-settings/lab"}, "give --project-key (one of /home/demo/src/api, /home/demo/src/lab)"},
	} {
		res := runCLI(t, env, "", append([]string{"audit"}, c.args...)...)
		assert.Equal(t, exitcode.Usage, res.code, "%v: %s", c.args, res.err)
		assert.Contains(t, res.err, c.want, "%v", c.args)
	}
}

// Tool and server names come from remote MCP servers: the HTML page escapes them, CSV cells are
// inert for spreadsheets, control characters are shown as escapes.
func TestClaudeAuditHostileNames(t *testing.T) {
	env := testEnv(t)
	dir := t.TempDir()
	inv := filepath.Join(dir, "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers": {"x<b>": {"tools": ["<img src=x onerror=alert(1)>", "=HYPERLINK(\"http://e\")", "a\u202eb"]}}}`), 0o644))
	set := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(set, []byte(`{"permissions": {"deny": ["mcp__x_b_"]}}`), 0o644))
	htmlOut, csvOut := filepath.Join(dir, "a.html"), filepath.Join(dir, "t.csv")
	res := runCLI(t, env, "", "audit", "--agent", "claude", "--inventory", inv, "--settings", "user="+set, "--before", "1.0.0",
		"--format", "html", "--out", htmlOut, "--tools-out", csvOut, "--project", dir)
	require.Equal(t, 0, res.code, res.err)
	page := readFileString(t, htmlOut)
	assert.NotContains(t, page, "<img src=x")
	assert.NotContains(t, page, "x<b>")
	assert.Contains(t, strings.ReplaceAll(page, "<wbr>", ""), "&lt;img src=x onerror=alert(1)&gt;")
	assert.NotContains(t, page, "\u202e")
	csvText := readFileString(t, csvOut)
	assert.NotContains(t, csvText, ",=HYPERLINK")
	assert.NotContains(t, csvText, "\u202e")
}

// audit --agent claude --format sarif: one result per lost (error), gained and ignored
// ("refused", warning) pair, located at the rule file and line, schema-valid; --baseline of a
// previous sarif or json output leaves only new findings to --fail-on.
func TestClaudeAuditSARIF(t *testing.T) {
	atRepoRoot(t)
	env := testEnv(t)
	dir := t.TempDir()
	args := []string{"audit", "--agent", "claude", "--inventory", "fixtures/claude-audit/inventory.json", "--before", "1.0.0",
		"--project-key", "/home/demo/src/lab"}
	paths := []string{claudeFixture + "/dot-claude", claudeFixture + "/project-settings/lab"}
	res := runCLI(t, env, "", append(append(append([]string{}, args...), "--format", "sarif"), paths...)...)
	require.Equal(t, 0, res.code, res.err)
	run := validSARIF(t, res.out).Runs[0]
	var ids []string
	for _, x := range run.Tool.Driver.Rules {
		ids = append(ids, x.ID)
	}
	assert.Equal(t, []string{"sessionfix/audit/lost", "sessionfix/audit/gained", "sessionfix/audit/refused", "sessionfix/name/redispatch"}, ids)
	// 1 lost, 8 gained (the summary line's counts), then the 2 stored 1.0.51 calls of
	// lit/literature_search_pubmed that 2.1.332 answers with lit/literature.search_pubmed.
	require.Len(t, run.Results, 11)
	assert.Equal(t, "sessionfix/name/redispatch", run.Results[9].RuleID)
	assert.Equal(t, 4, run.Results[9].Locations[0].Physical.Region.StartLine)
	first := run.Results[0]
	assert.Equal(t, "sessionfix/audit/lost", first.RuleID)
	assert.Equal(t, "error", first.Level)
	assert.Equal(t, claudeFixture+"/dot-claude/settings.json", first.Locations[0].Physical.Artifact.URI)
	assert.Equal(t, 4, first.Locations[0].Physical.Region.StartLine)
	assert.Equal(t, `deny rule "mcp__foo.bar__deploy.prod" (user permissions.deny[0]) lost tool deploy.prod (server foo.bar): matched it under 1.0.0 (as mcp__foo.bar__deploy.prod) and matches nothing of it under 2.1.332 (as mcp__foo_bar__deploy_prod); outcome now ask, before block.`, first.Message.Text)
	for _, x := range run.Results[1:9] {
		assert.Equal(t, "sessionfix/audit/gained", x.RuleID)
		assert.Equal(t, "warning", x.Level)
	}

	// Baselines: the same findings are not new.
	sarifOut, jsonOut := filepath.Join(dir, "a.sarif"), filepath.Join(dir, "a.json")
	require.NoError(t, os.WriteFile(sarifOut, []byte(res.out), 0o644))
	res = runCLI(t, env, "", append(append(append([]string{}, args...), "--format", "json", "--out", jsonOut), paths...)...)
	require.Equal(t, 0, res.code, res.err)
	res = runCLI(t, env, "", append(append(append([]string{}, args...), "--fail-on", "lost"), paths...)...)
	assert.Equal(t, exitcode.Finding, res.code, "without a baseline the lost pair fails")
	for _, b := range []string{sarifOut, jsonOut} {
		res = runCLI(t, env, "", append(append(append([]string{}, args...), "--fail-on", "lost,gained", "--baseline", b, "--format", "sarif"), paths...)...)
		assert.Equal(t, 0, res.code, b+": "+res.err)
		assert.Contains(t, res.err, "no finding new since the baseline")
		for _, x := range validSARIF(t, res.out).Runs[0].Results {
			if strings.HasPrefix(x.RuleID, "sessionfix/audit/") || b == sarifOut {
				// A JSON baseline holds the pairs' fingerprints only: re-dispatch results are
				// "new" against it (the exit status never counts them).
				assert.Equal(t, "unchanged", x.BaselineState, b)
			}
		}
	}
	// Against the --before 1.0.51 audit's baseline the lost deny (it matched nothing under 1.0.51) is new.
	old := filepath.Join(dir, "old.sarif")
	res = runCLI(t, env, "", "audit", "--agent", "claude", "--inventory", "fixtures/claude-audit/inventory.json", "--before", "1.0.51",
		"--project-key", "/home/demo/src/lab", "--format", "sarif", "--out", old, paths[0], paths[1])
	require.Equal(t, 0, res.code, res.err)
	res = runCLI(t, env, "", append(append(append([]string{}, args...), "--fail-on", "lost", "--baseline", old), paths...)...)
	assert.Equal(t, exitcode.Finding, res.code, res.err)
	assert.Contains(t, res.err, "1 finding not in the baseline")

	// An untrusted project: its .claude/settings.json allow is ignored under 2.1.332 (refused).
	empty := filepath.Join(dir, "claude.json")
	require.NoError(t, os.WriteFile(empty, []byte(`{"projects": {"/home/demo/src/lab": {"hasTrustDialogAccepted": false}}}`), 0o644))
	res = runCLI(t, env, "", append(append(append([]string{}, args...), "--claude-json", empty, "--format", "sarif", "--fail-on", "refused"), paths...)...)
	assert.Equal(t, exitcode.Finding, res.code, res.err)
	var refused []string
	for _, x := range validSARIF(t, res.out).Runs[0].Results {
		if x.RuleID == "sessionfix/audit/refused" {
			refused = append(refused, x.Message.Text)
		}
	}
	assert.Equal(t, []string{`allow rule "mcp__com_example_enterprise-search-platform" (project permissions.allow[0]) refused tool query_documents_by_semantic_similarity_and_rank (server com.example.enterprise-search-platform): names it (as mcp__com_example_enterprise-search-platform__query_documents_by_semantic_similarity_and_rank), but 2.1.332 does not apply the rule; outcome now ask, before ask.`}, refused)
}

// Without --inventory the tool list comes from where the Claude repair finds raw identities:
// server keys of --mcp-config (and ~/.claude.json, .mcp.json), the sessions' stored names
// under them and their attributionMcpServer/Tool pairs. On the fixture's lab project (1.0.51
// sessions keep raw tools) that is the inventory file's list: the same tools table.
func TestClaudeAuditInfersTools(t *testing.T) {
	atRepoRoot(t)
	env := testEnv(t)
	dir := t.TempDir()
	audit := func(p string, extra ...string) (cliResult, [][]string) {
		tools := filepath.Join(dir, p+"-tools.csv")
		args := append([]string{"audit", "--agent", "claude", "--before", "1.0.51", "--project-key", "/home/demo/src/" + p,
			"--tools-out", tools, "--out", filepath.Join(dir, p+"-pairs.csv")}, extra...)
		res := runCLI(t, env, "", append(args, claudeFixture+"/dot-claude", claudeFixture+"/project-settings/"+p)...)
		require.Equal(t, 0, res.code, res.err)
		data, err := os.ReadFile(tools)
		require.NoError(t, err)
		rows := readCSV(t, data)
		sort.Slice(rows[1:], func(i, j int) bool { return strings.Join(rows[1+i], ",") < strings.Join(rows[1+j], ",") })
		return res, rows
	}
	_, want := audit("lab", "--inventory", "fixtures/claude-audit/inventory.json")
	res, got := audit("lab", "--mcp-config", claudeFixture+"/mcp-config.json")
	assert.Equal(t, want, got)
	assert.Contains(t, res.err, "(inventory: attributionMcpServer/Tool of the sessions (1 tool), stored names of the sessions under the configured server keys (9 tools))")
	assert.NotContains(t, res.err, "INCOMPLETE")

	// api's sessions are 2.1.332's (tools normalized): two tools are known, and the report says
	// which servers and stored names are left out.
	res, got = audit("api", "--mcp-config", claudeFixture+"/mcp-config.json", "--format", "json")
	require.Len(t, got, 3)
	assert.Equal(t, []string{"lit", "ok_tool"}, got[1][:2])
	assert.Equal(t, []string{"my server", "ping"}, got[2][:2])
	assert.Contains(t, res.err, `audit: note: INCOMPLETE: MCP server "foo.bar" (`+claudeFixture+`/mcp-config.json) is known by its key only`)
	assert.Contains(t, res.err, `INCOMPLETE: 7 MCP names stored in the sessions name no tool of the list (mcp__com_example_enterprise-search-platform__query_documents_by_semantic_similarity_and_rank, mcp__foo_bar__deploy_prod,`)
	var rep struct {
		Incomplete []string `json:"incomplete_servers"`
		Unknown    []string `json:"unknown_session_names"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "api-pairs.csv"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &rep))
	assert.Equal(t, []string{"foo.bar", "com.example.enterprise-search-platform"}, rep.Incomplete)
	assert.Len(t, rep.Unknown, 7)

	// --inventory wins where given: lit has exactly the file's tools; my server still comes from
	// the sessions.
	inv := filepath.Join(dir, "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers": {"lit": {"tools": ["get+data"]}}}`), 0o644))
	res, got = audit("api", "--inventory", inv)
	require.Len(t, got, 3, res.err)
	assert.Equal(t, []string{"lit", "get+data"}, got[1][:2])
	assert.Equal(t, []string{"my server", "ping"}, got[2][:2])

	// --discover starts the servers of --mcp-config: foo.bar's tools are then known.
	exe, err := os.Executable()
	require.NoError(t, err)
	tools, _ := json.Marshal([]string{"get_data", "deploy.prod"})
	cfg := filepath.Join(dir, "mcp.json")
	client := filepath.Join(dir, "client.txt")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers": {"foo.bar": {"command": %q, "env": {%q: "serve", %q: %q, %q: %q}}}}`,
		exe, fakeMCPEnv, fakeToolsEnv, string(tools), fakeClientEnv, client)), 0o644))
	res, got = audit("api", "--mcp-config", cfg, "--discover")
	// The server is told sessionfix's own name and version, not the Claude Code release audited.
	announced, err := os.ReadFile(client)
	require.NoError(t, err)
	assert.Equal(t, "sessionfix "+version, string(announced))
	var servers []string
	for _, r := range got[1:] {
		servers = append(servers, r[0]+"/"+r[1])
	}
	assert.Equal(t, []string{"foo.bar/deploy.prod", "foo.bar/get_data", "lit/ok_tool", "my server/ping"}, servers)
	assert.Contains(t, res.err, "--discover (2 tools)")
	assert.NotContains(t, res.err, `server "foo.bar"`)
}
