package gemini_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/gemini"
	"github.com/sessionfix/sessionfix/store"
)

// applyFileEdits makes edits (offsets into data, not overlapping) on data, checking each old
// bytes: what the rule-file store writes.
func applyFileEdits(t *testing.T, data []byte, edits []store.FileEdit) []byte {
	t.Helper()
	es := append([]store.FileEdit(nil), edits...)
	sort.SliceStable(es, func(i, j int) bool { return es[i].At < es[j].At })
	var out []byte
	at := int64(0)
	for _, e := range es {
		require.GreaterOrEqual(t, e.At, at)
		require.Equal(t, e.Old, string(data[e.At:e.At+int64(len(e.Old))]))
		out = append(append(out, data[at:e.At]...), e.New...)
		at = e.At + int64(len(e.Old))
	}
	return append(out, data[at:]...)
}

func ruleFixInput(t *testing.T, home, inv string, opts agent.Values) agent.RuleFixInput {
	return agent.RuleFixInput{Env: agent.Env{Getenv: func(string) string { return "" }, Home: home}, Inventory: inv,
		Cwd: t.TempDir(), Options: opts, Problem: func(err error) { t.Errorf("problem: %v", err) }, Note: func(string) {}, Warn: func(string) {}}
}

// TestRuleFixDenyFixture: on the recording's deny rules (fixtures/gemini-real/rules/deny, the
// rules 0.32.1 and 0.61.0 were run with) the migration rewrites the four rules 0.61.0 lost, and
// only their bytes: tools.exclude's "foo.bar__purge" string, and in three policy files an
// mcpName line before toolName and the toolName string (the sanitized tool part). The rules
// 0.61.0 still applies (bare deploy.prod, mcp_foo.bar_rotate, mcpName+toolName) are not
// touched. Red before: Gemini CLI had no fix --rules (agent.RuleFix nil).
func TestRuleFixDenyFixture(t *testing.T) {
	home := t.TempDir()
	g := filepath.Join(home, ".gemini")
	require.NoError(t, os.MkdirAll(filepath.Join(g, "policies"), 0o755))
	src := fx + "rules/deny/"
	copyFile(t, src+"settings.json", filepath.Join(g, "settings.json"))
	names, err := filepath.Glob(src + "policies/*.toml")
	require.NoError(t, err)
	for _, n := range names {
		copyFile(t, n, filepath.Join(g, "policies", filepath.Base(n)))
	}
	inv := filepath.Join(t.TempDir(), "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers": {"foo.bar": {"tools": ["deploy.prod", "purge", "rotate", "wipe", "scale", "drain", "keep", "get+data"]},
 "acme": {"tools": ["a1", "a2"]}, "lit": {"tools": ["literature.search_pubmed", "ok_tool", "fetch", "summarize"]}}}`), 0o600))
	require.Same(t, gemini.RuleFix, gemini.Agent.(agent.RuleFixer).RuleFix())
	p, err := gemini.RuleFix.Plan(context.Background(), ruleFixInput(t, home, inv, agent.Values{gemini.ApprovalModeOption: {"yolo"}, gemini.BeforeOption: {"0.32.1"}}))
	require.NoError(t, err)
	assert.Equal(t, "0.61.0", p.Version)
	var rows [][]any
	for _, c := range p.Changes {
		rows = append(rows, []any{filepath.Base(c.File), c.Line, c.Column, c.Key, c.Action, c.Old, c.New, c.Before, c.After})
	}
	assert.Equal(t, [][]any{
		{"settings.json", 6, 40, "tools.exclude", "rewrite", "foo.bar__purge", "mcp_foo.bar_purge", []string{"foo.bar/purge"}, []string{"foo.bar/purge"}},
		{"d1-g1-qualified.toml", 2, 12, "rule", "rewrite", `toolName = "foo.bar__wipe"`, `mcpName = "foo.bar", toolName = "wipe"`, []string{"foo.bar/wipe"}, []string{"foo.bar/wipe"}},
		{"d4-g1-wildcard.toml", 2, 12, "rule", "rewrite", `toolName = "acme__*"`, `mcpName = "acme", toolName = "*"`, []string{"acme/a1", "acme/a2"}, []string{"acme/a1", "acme/a2"}},
		{"d5-mixed.toml", 2, 12, "rule", "rewrite", `toolName = "lit__literature.search_pubmed"`, `mcpName = "lit", toolName = "literature.search_pubmed"`,
			[]string{"lit/literature.search_pubmed"}, []string{"lit/literature.search_pubmed"}},
	}, rows)
	require.Len(t, p.Edits, 4)
	want := map[string]string{
		"settings.json":        stringsReplace(readString(t, src+"settings.json"), `"foo.bar__purge"`, `"mcp_foo.bar_purge"`),
		"d1-g1-qualified.toml": "[[rule]]\nmcpName = \"foo.bar\"\ntoolName = \"wipe\"\ndecision = \"deny\"\npriority = 500\n",
		"d4-g1-wildcard.toml":  "[[rule]]\nmcpName = \"acme\"\ntoolName = \"*\"\ndecision = \"deny\"\npriority = 500\n",
		"d5-mixed.toml": "[[rule]]\nmcpName = \"lit\"\ntoolName = \"literature.search_pubmed\"\ndecision = \"deny\"\npriority = 500\n\n" +
			"[[rule]]\nmcpName = \"lit\"\ntoolName = \"ok_tool\"\ndecision = \"deny\"\npriority = 500\n",
	}
	for _, f := range p.Edits {
		data, err := os.ReadFile(f.Path)
		require.NoError(t, err)
		assert.Equal(t, want[filepath.Base(f.Path)], string(applyFileEdits(t, data, f.Edits)), f.Path)
		assert.Equal(t, 1, f.Rules)
		assert.Len(t, f.Labels, len(f.Edits))
	}
	b, err := json.Marshal(p.Report("dry-run", "", nil, nil))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"agent":"gemini","version":"0.61.0","before":"0.32.1"`)
	assert.Contains(t, string(b), `"action":"rewrite","old":"foo.bar__purge","new":"mcp_foo.bar_purge","written_for":"0.32.1"`)
}

// TestRuleFixCommentsAndHeld: JSONC and TOML comments, spacing and the other rules stay byte
// for byte; a rewrite that would match a tool the rule did not mean (foo_bar__status: its
// declared name mcp_foo_bar_status is also foo bar/status's) is held back with the reason, in
// settings and in a policy list alike, while the rest of the same files is rewritten.
func TestRuleFixCommentsAndHeld(t *testing.T) {
	home := t.TempDir()
	g := filepath.Join(home, ".gemini")
	require.NoError(t, os.MkdirAll(filepath.Join(g, "policies"), 0o755))
	settings := "{\n  // the servers\n  \"tools\": {\n    /* deny these */\n    \"exclude\": [\"foo_bar__status\", // the old spelling\n                \"lit__fetch\"]\n  },\n" +
		"  \"mcpServers\": {\"foo_bar\": {\"command\": \"x\"}, \"foo bar\": {\"command\": \"y\"}, \"lit\": {\"command\": \"z\"}}\n}\n"
	policy := "# policies written for 0.32.1\n[[rule]]\n# the summary\ntoolName = \"lit__summarize\"   # stays denied\ndecision = \"deny\"\npriority = 500\n\n" +
		"[[rule]]\ntoolName = [\"lit__fetch\", \"foo_bar__status\"]\ndecision = \"deny\"\npriority = 400\n"
	require.NoError(t, os.WriteFile(filepath.Join(g, "settings.json"), []byte(settings), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(g, "policies", "p.toml"), []byte(policy), 0o600))
	inv := filepath.Join(t.TempDir(), "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers": {"foo_bar": {"tools": ["status"]}, "foo bar": {"tools": ["status"]}, "lit": {"tools": ["fetch", "summarize"]}}}`), 0o600))
	p, err := gemini.RuleFix.Plan(context.Background(), ruleFixInput(t, home, inv, agent.Values{gemini.ApprovalModeOption: {"yolo"}}))
	require.NoError(t, err)
	require.Len(t, p.Changes, 4)
	assert.Equal(t, "held", p.Changes[0].Action)
	assert.Contains(t, p.Changes[0].Note, `would also match foo bar/status, which tools.exclude: "foo_bar__status" did not mean: held back (never widen)`)
	assert.Equal(t, []any{"rewrite", "mcp_lit_fetch"}, []any{p.Changes[1].Action, p.Changes[1].New})
	assert.Equal(t, []any{"rewrite", `mcpName = "lit", toolName = "summarize"`}, []any{p.Changes[2].Action, p.Changes[2].New})
	assert.Equal(t, "held", p.Changes[3].Action)
	assert.Contains(t, p.Changes[3].Note, "would also match foo bar/status")
	got := map[string]string{}
	for _, f := range p.Edits {
		data, err := os.ReadFile(f.Path)
		require.NoError(t, err)
		got[filepath.Base(f.Path)] = string(applyFileEdits(t, data, f.Edits))
	}
	assert.Equal(t, stringsReplace(settings, `"lit__fetch"`, `"mcp_lit_fetch"`), got["settings.json"])
	assert.Equal(t, stringsReplace(policy, "toolName = \"lit__summarize\"", "mcpName = \"lit\"\ntoolName = \"summarize\""), got["p.toml"])
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o600))
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// stringsReplace replaces the one occurrence of old (it must be there once).
func stringsReplace(s, old, new string) string {
	i := indexOnce(s, old)
	return s[:i] + new + s[i+len(old):]
}

func indexOnce(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	panic("not found: " + sub)
}
