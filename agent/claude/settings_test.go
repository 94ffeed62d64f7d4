package claude

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/store"
)

const claudeReal = "../../fixtures/claude-real/"

func TestParseRuleFileFixture(t *testing.T) {
	f, err := LoadRuleFile(claudeReal+"project-settings/api/settings.json", permission.ClaudeScopeProject)
	require.NoError(t, err)
	var got []string
	for _, r := range f.Rules {
		got = append(got, string(r.Kind)+" "+r.Text+" "+string(f.Data[r.Offset:r.End]))
		assert.Equal(t, `"`+r.Text+`"`, string(f.Data[r.Offset:r.End]))
	}
	assert.Equal(t, []string{
		`allow mcp__foo_bar__get_data "mcp__foo_bar__get_data"`,
		`allow mcp__com.example.enterprise-search-platform "mcp__com.example.enterprise-search-platform"`,
		`deny mcp__lit__literature_search_pubmed "mcp__lit__literature_search_pubmed"`,
		`ask mcp__my_server "mcp__my_server"`,
	}, got)
	assert.Equal(t, 3, f.Rules[0].Line)
	assert.Equal(t, 15, f.Rules[0].Column)
	assert.Equal(t, "permissions.allow", f.Rules[1].Key)
	assert.Equal(t, 1, f.Rules[1].Index)
}

func TestParseRuleFileCommentsBOMAndWarnings(t *testing.T) {
	data := []byte("\xEF\xBB\xBF{\n  // team rules\n  \"permissions\": {\"deny\": [\"mcp__a\", 3, \"mcp__\\u0062\"], /* x */ \"ask\": \"mcp__c\",},\n}\n")
	f, err := ParseRuleFile("s.json", data, permission.ClaudeScopeUser)
	require.NoError(t, err)
	require.Len(t, f.Rules, 2)
	assert.Equal(t, "mcp__a", f.Rules[0].Text)
	assert.Equal(t, `"mcp__a"`, string(data[f.Rules[0].Offset:f.Rules[0].End]))
	assert.Equal(t, "mcp__b", f.Rules[1].Text)
	assert.Equal(t, `"mcp__\u0062"`, string(data[f.Rules[1].Offset:f.Rules[1].End]))
	assert.Equal(t, []string{"s.json:3:38: permissions.deny[1] is not a string; ignored", "s.json:3:72: permissions.ask is not an array; ignored"}, f.Warnings)
	_, err = ParseRuleFile("bad.json", []byte("{\"permissions\": {\"allow\": [\"sk-secret\" \"x\"]}}"), permission.ClaudeScopeUser)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "sk-secret")
	assert.Contains(t, err.Error(), "bad.json:1:")
}

func TestParseGlobalConfigFixture(t *testing.T) {
	g, err := LoadGlobalConfig(claudeReal + "claude.json")
	require.NoError(t, err)
	tr, found := g.Trusted("/home/demo/src/lab")
	assert.True(t, tr)
	assert.True(t, found)
	tr, found = g.Trusted("/home/demo/src/api/sub")
	assert.True(t, tr, "a parent's trust counts")
	assert.True(t, found)
	tr, found = g.Trusted("/home/demo/src/other")
	assert.False(t, tr)
	assert.False(t, found)
	assert.Empty(t, g.Projects["/home/demo/src/lab"].AllowedTools)

	data := []byte(`{"mcpServers": {"lit": {}, "foo.bar": {}}, "projects": {"/p": {"allowedTools": ["mcp__foo.bar__deploy.prod"], "hasTrustDialogAccepted": false}}}`)
	g, err = ParseGlobalConfig("c.json", data)
	require.NoError(t, err)
	assert.Equal(t, []string{"lit", "foo.bar"}, g.Servers)
	r := g.Projects["/p"].AllowedTools
	require.Len(t, r, 1)
	assert.Equal(t, permission.ClaudeScopeLegacy, r[0].Scope)
	assert.Equal(t, `projects["/p"].allowedTools`, r[0].Key)
	assert.Equal(t, `"mcp__foo.bar__deploy.prod"`, string(data[r[0].Offset:r[0].End]))
	tr, found = g.Trusted("/p")
	assert.False(t, tr)
	assert.True(t, found)
}

func TestManagedFilesIn(t *testing.T) {
	d := t.TempDir()
	require.NoError(t, os.MkdirAll(d+"/managed-settings.d", 0o755))
	for _, f := range []string{"managed-settings.json", "managed-settings.d/20-b.json", "managed-settings.d/10-a.json", "managed-settings.d/x.txt"} {
		require.NoError(t, os.WriteFile(d+"/"+f, []byte("{}"), 0o644))
	}
	assert.Equal(t, []string{d + "/managed-settings.json", d + "/managed-settings.d/10-a.json", d + "/managed-settings.d/20-b.json"}, ManagedFilesIn(d))
	assert.Equal(t, "/etc/claude-code", ManagedDir("linux"))
	assert.Equal(t, "/Library/Application Support/ClaudeCode", ManagedDir("darwin"))
}

// TestRuleStoreScanOfBrokenFileHasARuleSnapshot: a rule file that is not valid JSON scans to one
// error problem naming file:line:column, no sites, not writable, and still a *RuleSnapshot
// (RuleSnapshotOf; fix --rules reads it, and a missing one made it panic).
func TestRuleStoreScanOfBrokenFileHasARuleSnapshot(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	require.NoError(t, os.WriteFile(p, []byte("{\n \"permissions\": {\"allow\": [\"mcp__a\"]}\n \"x\": 1}\n"), 0o644))
	snap, err := OpenRules(p, permission.ClaudeScopeProject).Scan(context.Background(), store.ScanOptions{})
	require.NoError(t, err)
	rs := RuleSnapshotOf(snap)
	require.NotNil(t, rs, "the snapshot keeps no *RuleSnapshot")
	assert.Empty(t, rs.Rules)
	assert.Equal(t, permission.ClaudeScopeProject, rs.Scope)
	assert.Empty(t, snap.Sites)
	assert.Equal(t, "not valid JSON", snap.NotWritable)
	require.Len(t, snap.Problems, 1)
	assert.Contains(t, snap.Problems[0].Reason, p+":3:2: not valid JSON")
}

// TestParseErrorStringBrokenAcrossLines: a JSON string with a raw line break (a token pasted
// into ~/.claude.json without its closing quote) was reported as "path:1:1: not JSON" — the
// parser's message holds the newline, and the position was lost. It is located where the
// string starts, and its text (a secret, here) is never quoted.
func TestParseErrorStringBrokenAcrossLines(t *testing.T) {
	data := []byte("{\n  \"mcpServers\": {\n    \"lit\": {\"env\": {\"TOKEN\": \"sk-SECRET0005\n    }, \"command\": \"python3\"}\n  }\n}\n")
	_, err := ParseGlobalConfig("/h/.claude.json", data)
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 3, pe.Line, err.Error())
	assert.Equal(t, 30, pe.Column, err.Error())
	assert.NotContains(t, err.Error(), "SECRET")
	assert.Equal(t, "/h/.claude.json:3:30: not valid JSON: invalid value starting here; its text is not shown", err.Error())
}
