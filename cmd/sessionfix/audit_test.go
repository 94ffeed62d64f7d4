package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/reports/htmltest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ (audit/, golden/, golden/help/) and the cmp files of testdata/script/*.txtar")

const fixtureSettings = "fixtures/qwen-settings"

// fixtureArgs are the acceptance command's inputs, relative to the repository root.
func fixtureArgs() []string {
	return []string{"audit",
		"--settings", fixtureSettings + "/settings.json",
		"--settings", fixtureSettings + "/workspace/.qwen/settings.json",
		"--agents", fixtureSettings + "/workspace/.qwen/agents",
		"--inventory", fixtureSettings + "/inventory.json"}
}

// atRepoRoot runs the test from the repository root, so report paths read
// "fixtures/qwen-settings/…" as in the README and the goldens are stable.
func atRepoRoot(t *testing.T) {
	t.Helper()
	t.Chdir("../..")
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("cmd", "sessionfix", "testdata", "audit", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./cmd/sessionfix -run %s -update to create it", t.Name())
	assert.Equal(t, string(want), string(got), "golden %s (refresh with -update)", name)
}

func readCSV(t testing.TB, data []byte) [][]string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	require.NoError(t, err)
	return rows
}

// TestAuditAcceptance is the acceptance command on the fixture: both CSVs with the
// columns of audit.md, the HTML page and the JSON document, against golden files.
func TestAuditAcceptance(t *testing.T) {
	atRepoRoot(t)
	out := t.TempDir()
	env := testEnv(t)

	pairsPath, toolsPath := filepath.Join(out, "pairs.csv"), filepath.Join(out, "tools.csv")
	r := runCLI(t, env, "", append(fixtureArgs(), "--out", pairsPath, "--tools-out", toolsPath)...)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Empty(t, r.out, "reports go to the files")
	assert.Equal(t, "audit: 18 rules, 12 tools (inventory: file fixtures/qwen-settings/inventory.json), 26 pairs listed: 1 lost, 3 gained, 0 refused\n", r.err)

	pairs, err := os.ReadFile(pairsPath)
	require.NoError(t, err)
	tools, err := os.ReadFile(toolsPath)
	require.NoError(t, err)
	golden(t, "pairs.csv", pairs)
	golden(t, "tools.csv", tools)
	pr, tr := readCSV(t, pairs), readCSV(t, tools)
	assert.Equal(t, qwen.PairColumns, pr[0])
	assert.Equal(t, []string{"settings_file", "scope", "key", "index", "rule", "server", "tool", "registered_name", "now", "before", "change"}, pr[0])
	assert.Len(t, pr, 1+26)
	assert.Equal(t, []string{"server", "tool", "registered_name", "legacy_name", "decision_now", "rule_now", "outcome_now",
		"decision_before", "rule_before", "outcome_before"}, tr[0])
	assert.Len(t, tr, 1+12)
	assert.Contains(t, pr, []string{"fixtures/qwen-settings/settings.json", "explicit", "permissions.allow", "2",
		"mcp__com.example.enterprise-___documents_by_semantic_similarity", "com.example.enterprise-search",
		"query_documents_by_semantic_similarity", "mcp__com_example_enterprise-search__query_documents_by__10hvo5y", "no", "match", "lost"})

	r = runCLI(t, env, "", append(fixtureArgs(), "--settings", "./"+fixtureSettings+"/settings.json", "--agents", fixtureSettings+"/workspace/.qwen/agents/")...)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Equal(t, string(pairs), r.out, "a settings file or agents directory given twice is read once")

	r = runCLI(t, env, "", append(fixtureArgs(), "--all-pairs")...)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Len(t, readCSV(t, []byte(r.out)), 1+18*12, "--all-pairs: every pair, to standard output")

	htmlPath := filepath.Join(out, "audit.html")
	r = runCLI(t, env, "", append(fixtureArgs(), "--format", "html", "--out", htmlPath)...)
	require.Equal(t, exitcode.OK, r.code, r.err)
	page, err := os.ReadFile(htmlPath)
	require.NoError(t, err)
	golden(t, "audit.html", page)

	r = runCLI(t, env, "", append(fixtureArgs(), "--format", "json")...)
	require.Equal(t, exitcode.OK, r.code, r.err)
	golden(t, "audit.json", []byte(r.out))
	var doc struct {
		Counts qwenCounts         `json:"counts"`
		Pairs  []reports.JSONPair `json:"pairs"`
		Tools  []qwenTool         `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.out), &doc))
	assert.Equal(t, qwenCounts{Rules: 18, Tools: 12, Pairs: 26, Lost: 1, Gained: 3}, doc.Counts)
	assert.Len(t, doc.Pairs, 26)
	assert.Len(t, doc.Tools, 12)
}

// TestAuditHTMLInBrowser opens the fixture page in headless Chromium: the counts, both
// tables, and a view linked by fragment (only the lost pair).
func TestAuditHTMLInBrowser(t *testing.T) {
	bin := htmltest.Chromium(t)
	atRepoRoot(t)
	page := filepath.Join(t.TempDir(), "audit.html")
	r := runCLI(t, testEnv(t), "", append(fixtureArgs(), "--format", "html", "--out", page)...)
	require.Equal(t, exitcode.OK, r.code, r.err)

	dom := htmltest.DumpDOM(t, bin, htmltest.FileURL(t, page, ""))
	for _, c := range []string{
		`<a href="#pairs"><span class="n">18</span> <span class="label">rules</span></a>`,
		`<a href="#tools"><span class="n">12</span> <span class="label">tools</span></a>`,
		`<li data-tone="bad"><a href="#pairs.change=lost"><span class="n">1</span> <span class="label">lost</span></a>`,
		// gained is green, as the gained cells are (issue 8 item 19)
		`<li data-tone="good"><a href="#pairs.change=gained"><span class="n">3</span> <span class="label">gained</span></a>`,
		`<a href="#pairs.now=refused"><span class="n">0</span> <span class="label">refused</span></a>`,
		// a legend for the words of the tables, each value styled as its cells
		`<summary>Legend</summary>`,
		`<dt>now</dt><dd>`, `<dt>before</dt><dd>`, `<dt>scope</dt><dd>`,
		`<dt data-v="lost">lost</dt>`, `<dt data-v="gained">gained</dt>`, `<dt data-v="refused">refused</dt>`,
	} {
		assert.Contains(t, dom, c)
	}
	pairs, shown := htmltest.Section(t, dom, "pairs")
	assert.Len(t, pairs, 26)
	assert.Equal(t, "26 rows", shown)
	tools, _ := htmltest.Section(t, dom, "tools")
	assert.Len(t, tools, 12)
	assert.Equal(t, 1, htmltest.Tags(dom)["script"])

	dom = htmltest.DumpDOM(t, bin, htmltest.FileURL(t, page, "pairs.change=lost&tools.decision_now=deny&tools.sort=-tool"))
	pairs, shown = htmltest.Section(t, dom, "pairs")
	visible := htmltest.Visible(pairs)
	require.Len(t, visible, 1)
	assert.Equal(t, "1 of 26 rows", shown)
	assert.Equal(t, "mcp__com.example.enterprise-___documents_by_semantic_similarity", visible[0].Cells[4])
	tools, shown = htmltest.Section(t, dom, "tools")
	assert.Equal(t, "3 of 12 rows", shown)
	var denied []string
	for _, r := range htmltest.Visible(tools) {
		denied = append(denied, r.Cells[1])
	}
	assert.Equal(t, []string{"搜索文献", "get_data_for_a_specific_location_and_date_range_extended", "evil"}, denied, "deny rows, tool descending")

	// Each count card's link opens its rows: as many visible rows as the card says.
	for _, c := range []struct {
		frag string
		n    int
	}{{"pairs.change=lost", 1}, {"pairs.change=gained", 3}} {
		dom = htmltest.DumpDOM(t, bin, htmltest.FileURL(t, page, c.frag))
		pairs, _ = htmltest.Section(t, dom, "pairs")
		assert.Len(t, htmltest.Visible(pairs), c.n, c.frag)
	}

	if dir := os.Getenv("SESSIONFIX_SCREENSHOT_DIR"); dir != "" {
		htmltest.Screenshot(t, bin, htmltest.FileURL(t, page, ""), filepath.Join(dir, "audit.png"), 1400, 1600)
	}
}

func TestAuditExitCodes(t *testing.T) {
	atRepoRoot(t)
	env := testEnv(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		// A finding has its own code (5), apart from input that could not be read (3), which
		// wins when both happen: the findings may be incomplete (issue 8 item 9).
		{"fail-on lost hits", []string{"--fail-on", "lost"}, exitcode.Finding, "audit: --fail-on lost: 1 pair lost\n"},
		{"fail-on subset, comma list", []string{"--fail-on", "refused,gained"}, exitcode.Finding, "audit: --fail-on gained: 3 pairs gained\n"},
		{"unreadable input wins over a finding", []string{"--agents", "no-such-agents-dir", "--fail-on", "lost"}, exitcode.Partial, "audit: --fail-on lost: 1 pair lost\n"},
		{"fail-on refused does not hit", []string{"--fail-on", "refused"}, exitcode.OK, ""},
		{"bad fail-on", []string{"--fail-on", "lost,broken"}, exitcode.Usage, `--fail-on takes lost, refused and gained, not "broken"`},
		{"bad format", []string{"--format", "xml"}, exitcode.Usage, `--format must be csv, html, json or sarif, not "xml"`},
		{"bad mode", []string{"--mode", "auto"}, exitcode.Usage, "--mode must be one of default, yolo, auto-edit, plan"},
		{"both outputs to stdout", []string{"--tools-out", "-"}, exitcode.Usage, "cannot both be standard output"},
		{"inventory and discover", []string{"--discover"}, exitcode.Usage, "--inventory and --discover exclude each other"},
		{"unknown subagent", []string{"--subagent", "nobody"}, exitcode.Usage, `--subagent "nobody": no such subagent`},
		{"a file as PATH", []string{fixtureSettings + "/inventory.json"}, exitcode.Usage, "inventory.json: not a directory (give a settings file with --settings)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, env, "", append(fixtureArgs(), tt.args...)...)
			assert.Equal(t, tt.code, r.code, r.err)
			assert.Contains(t, r.err, tt.stderr)
		})
	}

	r := runCLI(t, env, "", append(fixtureArgs(), "--subagent", "verifier", "--mode", "yolo", "--format", "json")...)
	require.Equal(t, exitcode.OK, r.code, r.err)
	var doc qwenAuditDoc
	require.NoError(t, json.Unmarshal([]byte(r.out), &doc))
	assert.Equal(t, "verifier", doc.Subagent)
	for _, tool := range doc.Tools {
		if tool.Server == "com.example.enterprise-search" && tool.Tool == "list" {
			assert.Equal(t, "disallowed", tool.Now.Decision)
			assert.Equal(t, "mcp__com.example.enterprise-search__list", tool.Now.Rule)
			assert.Equal(t, "fixtures/qwen-settings/workspace/.qwen/agents/verifier.md:6:5 disallowedTools[1]", tool.Now.RuleAt)
		}
		if tool.Server == "foo_bar" && tool.Tool == "get_data" {
			assert.Equal(t, "ran", tool.Now.Outcome, "an ask rule runs in YOLO mode")
		}
	}
}

// TestAuditBadSettingsGoesOn: a malformed settings file is reported with file:line:col, the
// other files are still audited, and the exit status is 3.
func TestAuditBadSettingsGoesOn(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{\n  \"permissions\": {\"deny\": [\"mcp__lit\",]}\n}\n"), 0o644))
	good := filepath.Join(dir, "good.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"permissions": {"allow": ["mcp__lit"]}}`), 0o644))
	inv := filepath.Join(dir, "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers": {"lit": {"tools": ["ok_tool"]}}}`), 0o644))
	missing := filepath.Join(dir, "missing.json")

	r := runCLI(t, testEnv(t), "", "audit", "--settings", bad, "--settings", good, "--settings", missing, "--inventory", inv)
	assert.Equal(t, exitcode.Partial, r.code)
	assert.Contains(t, r.err, bad+":2:38: ")
	assert.Contains(t, r.err, "trailing comma")
	assert.Contains(t, r.err, missing)
	rows := readCSV(t, []byte(r.out))
	require.Len(t, rows, 2, "the good file is still audited")
	assert.Equal(t, []string{good, "explicit", "permissions.allow", "0", "mcp__lit", "lit", "ok_tool", "mcp__lit__ok_tool", "match", "match", "same"}, rows[1])

	require.NoError(t, os.WriteFile(inv, []byte("{\"servers\": {\"lit\": {\"tools\": [\"\"]}}}"), 0o644))
	r = runCLI(t, testEnv(t), "", "audit", "--settings", good, "--inventory", inv)
	assert.Equal(t, exitcode.Error, r.code)
	assert.Contains(t, r.err, inv+":1:32: ")
}

// TestAuditDiscoversScopes: without --settings, the user, workspace and system files are
// found as Qwen Code finds them, with the workspace's subagents.
func TestAuditDiscoversScopes(t *testing.T) {
	env := testEnv(t)
	qwenHome := filepath.Join(env.Home, "qh")
	project := filepath.Join(t.TempDir(), "app")
	system := filepath.Join(t.TempDir(), "system.json")
	write := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	write(filepath.Join(qwenHome, "settings.json"), `{"mcpServers": {"lit": {"command": "x", "trust": true}}, "permissions": {"allow": ["mcp__lit__ok_tool"]}}`)
	write(filepath.Join(project, ".qwen", "settings.json"), `{"permissions": {"deny": ["mcp__lit"]}}`)
	write(filepath.Join(project, ".qwen", "agents", "a.md"), "---\nname: a\ndescription: d\ndisallowedTools: mcp__lit__ok_tool\n---\n")
	write(system, `{"permissions": {"ask": ["mcp__lit__*"]}}`)
	env.Environ = func() []string {
		return []string{"QWEN_HOME=" + qwenHome, "QWEN_CODE_SYSTEM_SETTINGS_PATH=" + system,
			"QWEN_CODE_SYSTEM_DEFAULTS_PATH=" + filepath.Join(t.TempDir(), "none.json")}
	}
	inv := filepath.Join(t.TempDir(), "inv.json")
	write(inv, `{"servers": {"lit": {"tools": ["ok_tool"]}}}`)

	r := runCLI(t, env, "", "audit", "--project", project, "--inventory", inv, "--format", "json")
	require.Equal(t, exitcode.OK, r.code, r.err)
	var doc qwenAuditDoc
	require.NoError(t, json.Unmarshal([]byte(r.out), &doc))
	var scopes []string
	for _, s := range doc.Settings {
		scopes = append(scopes, s.Scope)
	}
	assert.Equal(t, []string{"user", "workspace", "system"}, scopes)
	assert.Equal(t, []string{filepath.Join(project, ".qwen", "agents", "a.md")}, doc.Agents)
	require.Len(t, doc.Tools, 1)
	assert.Equal(t, "deny", doc.Tools[0].Now.Decision)
	assert.True(t, doc.Tools[0].Trusted, "trust from the user settings")
	assert.Len(t, doc.Rules, 4)
}

// TestAuditInfersInventory: without --inventory or --discover, servers come from the
// settings and tools from the session history; rows say so.
func TestAuditInfersInventory(t *testing.T) {
	atRepoRoot(t)
	env := testEnv(t)
	r := runCLI(t, env, "", "audit", "--settings", fixtureSettings+"/settings.json", "--history", "fixtures/qwen-real/dot-qwen",
		"--tools-out", filepath.Join(t.TempDir(), "tools.csv"))
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.err, "no --inventory or --discover: ")
	assert.Contains(t, r.err, "rows say inventory=inferred")
	rows := readCSV(t, []byte(r.out))
	assert.Equal(t, append(append([]string{}, qwen.PairColumns...), "inventory"), rows[0])
	require.Greater(t, len(rows), 1)
	tools := map[string]bool{}
	for _, row := range rows[1:] {
		assert.Equal(t, "inferred", row[11])
		tools[row[5]+"/"+row[6]] = true
	}
	assert.True(t, tools["lit/literature.search_pubmed"], "a legacy name in the history gives the raw tool: %v", tools)

	// No history at all: only the configured servers, without tools.
	r = runCLI(t, env, "", "audit", "--settings", fixtureSettings+"/settings.json", "--format", "json")
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.err, "0 tools of 4 servers inferred")
}

// TestAuditDiscover starts a local stdio MCP server (this test binary) through the settings
// and lists its tools; a server that cannot start is reported and the rest goes on.
func TestAuditDiscover(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	tools, _ := json.Marshal([]string{"literature.search_pubmed", "get+data", "ok_tool"})
	settingsPath := filepath.Join(dir, "settings.json")
	doc := fmt.Sprintf(`{
  "mcpServers": {
    "lit": {"command": %q, "env": {%q: "serve", %q: %q, "LIT_TOKEN": "$LIT_TOKEN"}},
    "broken": {"command": "no-such-mcp-server-for-sessionfix-tests", "headers": {"Authorization": "Bearer HEADER-SECRET"}}
  },
  "permissions": {"allow": ["mcp__lit__literature.search_pubmed"], "deny": ["mcp__lit__get_data"]}
}`, exe, fakeMCPEnv, fakeToolsEnv, string(tools))
	require.NoError(t, os.WriteFile(settingsPath, []byte(doc), 0o644))
	env := testEnv(t)
	env.Environ = func() []string { return []string{"LIT_TOKEN=ENV-SECRET-VALUE", "PATH=" + dir} }

	r := runCLI(t, env, "", "audit", "--settings", settingsPath, "--discover", "--discover-timeout", "1m", "--tools-out", filepath.Join(dir, "tools.csv"))
	t.Logf("audit --discover printed on stderr:\n%s", r.err)
	assert.Equal(t, exitcode.Partial, r.code, "a server failed")
	assert.Contains(t, r.err, "discover: \"lit\": 3 tools\n")
	assert.Contains(t, r.err, `sessionfix: discover MCP server "broken": start "no-such-mcp-server-for-sessionfix-tests": executable file not found`)
	assert.Contains(t, r.err, "(inventory: discovered)")
	for _, secret := range []string{"ENV-SECRET-VALUE", "HEADER-SECRET"} {
		assert.NotContains(t, r.err, secret)
		assert.NotContains(t, r.out, secret)
	}
	rows := readCSV(t, []byte(r.out))
	assert.Equal(t, qwen.PairColumns, rows[0], "a discovered inventory is exact: no inventory column")
	assert.Contains(t, rows, []string{settingsPath, "explicit", "permissions.allow", "0", "mcp__lit__literature.search_pubmed", "lit",
		"literature.search_pubmed", "mcp__lit__literature_search_pubmed_1nv53db", "match", "match", "same"})
	assert.Contains(t, rows, []string{settingsPath, "explicit", "permissions.deny", "0", "mcp__lit__get_data", "lit",
		"get+data", "mcp__lit__get_data_0kcpus5", "match", "match", "same"}, "the lossy legacy deny still restricts get+data through its published legacy alias")
}

// TestAuditHostileNames: names from a hostile inventory come out inert in CSV (formula guard,
// escaped controls) and HTML (no element, no handler).
func TestAuditHostileNames(t *testing.T) {
	dir := t.TempDir()
	inv := map[string]any{"servers": map[string]any{
		`=HYPERLINK("http://evil.example","x")`: map[string]any{"tools": []string{`"><img src=x onerror=alert(1)>`}},
		"srv":                                   map[string]any{"tools": []string{"<script>alert(1)</script>", "a\u202eb", "nul\x00byte", strings.Repeat("x", 3000), "@SUM(1)"}},
	}}
	b, err := json.Marshal(inv)
	require.NoError(t, err)
	invPath := filepath.Join(dir, "inv.json")
	require.NoError(t, os.WriteFile(invPath, b, 0o644))
	settingsPath := filepath.Join(dir, "settings.json")
	require.NoError(t, os.WriteFile(settingsPath, []byte(`{"permissions": {"allow": ["mcp__*"], "deny": ["=1+1", "-2"]}}`), 0o644))

	r := runCLI(t, testEnv(t), "", "audit", "--settings", settingsPath, "--inventory", invPath, "--all-pairs",
		"--tools-out", filepath.Join(dir, "tools.csv"))
	require.Equal(t, exitcode.OK, r.code, r.err)
	for _, raw := range []string{"\n=", ",=", "\n+", ",+", "\n@", ",@", "\n-", ",-", "\u202e", "\x00"} {
		assert.NotContains(t, r.out, raw)
	}
	rows := readCSV(t, []byte(r.out))
	cells := map[string]bool{}
	for _, row := range rows[1:] {
		for _, c := range row {
			cells[c] = true
		}
	}
	for _, want := range []string{`'=HYPERLINK("http://evil.example","x")`, `"><img src=x onerror=alert(1)>`, `a\u202eb`, `nul\u0000byte`,
		"'@SUM(1)", "'=1+1", "'-2", strings.Repeat("x", 3000)} {
		assert.True(t, cells[want], "cell %.40q", want)
	}
	toolsCSV, err := os.ReadFile(filepath.Join(dir, "tools.csv"))
	require.NoError(t, err)
	assert.NotContains(t, string(toolsCSV), "\n=")

	page := filepath.Join(dir, "audit.html")
	r = runCLI(t, testEnv(t), "", "audit", "--settings", settingsPath, "--inventory", invPath, "--format", "html", "--out", page)
	require.Equal(t, exitcode.OK, r.code, r.err)
	data, err := os.ReadFile(page)
	require.NoError(t, err)
	tags := htmltest.Tags(string(data))
	assert.Zero(t, tags["img"])
	assert.Equal(t, 1, tags["script"])

	t.Run("in Chromium", func(t *testing.T) {
		bin := htmltest.Chromium(t)
		dom := htmltest.DumpDOM(t, bin, htmltest.FileURL(t, page, ""))
		tags := htmltest.Tags(dom)
		assert.Zero(t, tags["img"], "nothing injected after the page's script ran")
		assert.Equal(t, 1, tags["script"])
		tools, _ := htmltest.Section(t, dom, "tools")
		var names []string
		for _, row := range tools {
			names = append(names, row.Cells[1])
		}
		assert.Contains(t, names, `"><img src=x onerror=alert(1)>`)
		assert.Contains(t, names, `<script>alert(1)</script>`)
	})
}

func TestAuditReportsNameTheInputsThatFailed(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{\n  \"permissions\": {\"allow\": [\"mcp__a\",]}\n}\n"), 0o600))
	inv := "../../fixtures/qwen-settings/inventory.json"
	out := filepath.Join(dir, "audit.json")
	r := runCLI(t, testEnv(t), "", "audit", "--settings", bad, "--agents", filepath.Join(dir, "nope"), "--inventory", inv, "--format", "json", "--out", out)
	assert.Equal(t, exitcode.Partial, r.code, r.err)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep struct {
		Errors []string `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Len(t, rep.Errors, 2, "the saved report says what it is missing")
	assert.Contains(t, rep.Errors[0], "bad.json:2:")
	assert.Contains(t, rep.Errors[1], "--agents")

	r = runCLI(t, testEnv(t), "", "audit", "--inventory", inv, "--out", out, "--tools-out", out)
	assert.Equal(t, exitcode.Usage, r.code, "the tools table would overwrite the pairs")
}

// qwenCounts, qwenVerdict, qwenTool and qwenAuditDoc read Qwen Code's audit --format json
// (docs/audit.md §3): the members the tests look at.
type qwenCounts struct {
	Rules   int `json:"rules"`
	Tools   int `json:"tools"`
	Pairs   int `json:"pairs"`
	Lost    int `json:"lost"`
	Gained  int `json:"gained"`
	Refused int `json:"refused"`
}

type qwenVerdict struct {
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
	RuleAt   string `json:"rule_at"`
	Outcome  string `json:"outcome"`
}

type qwenTool struct {
	Server  string      `json:"server"`
	Tool    string      `json:"tool"`
	Trusted bool        `json:"trusted"`
	Now     qwenVerdict `json:"now"`
	Before  qwenVerdict `json:"before"`
}

type qwenAuditDoc struct {
	Subagent  string             `json:"subagent"`
	Inventory string             `json:"inventory"`
	Counts    qwenCounts         `json:"counts"`
	Settings  []reports.JSONFile `json:"settings"`
	Agents    []string           `json:"agents"`
	Rules     []json.RawMessage  `json:"rules"`
	Tools     []qwenTool         `json:"tools"`
	Pairs     []reports.JSONPair `json:"pairs"`
}
