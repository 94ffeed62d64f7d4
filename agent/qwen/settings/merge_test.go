package settings

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parseString(t testing.TB, path, in string, scope Scope) *File {
	t.Helper()
	f, err := Parse(path, []byte(in), scope, nil)
	require.NoError(t, err)
	return f
}

type originRow struct {
	file  string
	key   string
	index int
}

func origins(mr MergedRule) []originRow {
	out := make([]originRow, len(mr.Origins))
	for i, r := range mr.Origins {
		out[i] = originRow{r.File, r.Key, r.Index}
	}
	return out
}

func TestMerge(t *testing.T) {
	user, _ := loadFixture(t, fixtureUser, ScopeUser, nil)
	ws, _ := loadFixture(t, fixtureWorkspace, ScopeWorkspace, nil)
	defaults := parseString(t, "defaults.json", `{"$version": 4,
  "tools": {"allowed": ["WebFetch"], "core": ["read_file"], "approvalMode": "plan"},
  "mcp": {"allowed": ["lit"]},
  "permissions": {"deny": ["mcp__foo.bar__deploy.prod"]}}`, ScopeSystemDefaults)
	system := parseString(t, "system.json", `{"$version": 4,
  "tools": {"allowed": ["mcp__lit__ok_tool"], "exclude": ["mcp__lit__*", "mcp__lit______"], "disabled": ["mcp__x__y"]},
  "mcp": {"allowed": ["lit", "foo*"], "excluded": ["scratch"]},
  "security": {"folderTrust": {"enabled": true}},
  "mcpServers": {"lit": {"command": "lit2", "includeTools": ["ok_tool"]}}}`, ScopeSystem)

	// Order of the arguments does not matter: files are merged by scope rank.
	m := Merge(system, nil, ws, user, defaults)

	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
	}
	assert.Equal(t, []string{"defaults.json", fixtureUser, fixtureWorkspace, "system.json"}, paths)

	assert.Equal(t, []string{
		"mcp__lit__literature.search_pubmed",
		"mcp__foo.bar",
		"mcp__com.example.enterprise-___documents_by_semantic_similarity",
		"Read",
		"mcp__foo_bar__get_data_0xybsnb",
		"mcp__lit__*",
		"mcp__lit__ok_tool", // tools.allowed of the system scope (REPLACE: WebFetch is gone)
	}, Texts(m.Allow))
	assert.Equal(t, []string{"mcp__foo_bar__*"}, Texts(m.Ask))
	assert.Equal(t, []string{
		"mcp__foo.bar__deploy.prod",
		"mcp__lit__get_data_for_a_spe___location_and_date_range_extended",
		"Bash(rm -rf *)",
		"mcp__foo_bar__evil",
		"mcp__lit______",
		"mcp__lit__*",
	}, Texts(m.Deny))
	assert.Equal(t, []originRow{
		{"defaults.json", "permissions.deny", 0},
		{fixtureUser, "permissions.deny", 0},
	}, origins(m.Deny[0]), "a UNION keeps every origin of a duplicate string")
	assert.Equal(t, []originRow{
		{fixtureUser, "tools.exclude", 0},
		{"system.json", "tools.exclude", 1},
	}, origins(m.Deny[4]))
	assert.Equal(t, []string{"mcp__foo.bar__get_data", "mcp__x__y"}, Texts(m.Disabled))

	require.Len(t, m.Core, 1)
	assert.Equal(t, "read_file", m.Core[0].Literal)

	var allowed []string
	for _, r := range m.MCPAllowed {
		allowed = append(allowed, r.Literal+"@"+r.File)
	}
	assert.Equal(t, []string{"lit@defaults.json", "lit@system.json", "foo*@system.json"}, allowed, "CONCAT keeps duplicates")
	require.Len(t, m.MCPExcluded, 1)

	assert.Equal(t, "plan", m.ApprovalMode)
	require.NotNil(t, m.FolderTrust)
	assert.True(t, *m.FolderTrust)

	var servers []string
	for _, s := range m.MCPServers {
		servers = append(servers, s.Key+"="+s.Command)
	}
	assert.Equal(t, []string{"lit=lit2", "foo.bar=node", "foo_bar=", "com.example.enterprise-search=es-mcp"}, servers,
		"SHALLOW_MERGE: first-seen order, last definition wins")
	lit, ok := m.Server("lit")
	require.True(t, ok)
	require.Len(t, lit.IncludeTools, 1)

	var shadowed []string
	for _, r := range m.Shadowed {
		shadowed = append(shadowed, r.File+" "+r.Key+" "+r.Literal)
		assert.NotEmpty(t, r.Ignored)
	}
	assert.Equal(t, []string{"defaults.json tools.allowed WebFetch"}, shadowed)

	// Every origin in effect, one per list entry.
	// allow 7, ask 1, deny 8 (two strings have two origins), disabled 2, core 1,
	// mcp.allowed 3, mcp.excluded 1, include/exclude of the effective servers 4.
	assert.Len(t, m.Rules(), 7+1+8+2+1+3+1+4)
	for _, r := range m.Rules() {
		assert.Empty(t, r.Ignored)
	}
}

func TestMergeReplacedServerAndV1(t *testing.T) {
	user := parseString(t, "user.json", `{
  "allowedTools": ["mcp__a__x"],
  "excludeTools": ["mcp__a__y"],
  "mcpServers": {"a": {"command": "a1", "excludeTools": ["z"]}}}`, ScopeUser)
	ws := parseString(t, "ws.json", `{"$version": 4,
  "allowedTools": ["mcp__a__ignored"],
  "tools": {"allowed": []},
  "mcpServers": {"a": {"command": "a2"}}}`, ScopeWorkspace)

	m := Merge(user, ws)
	assert.Empty(t, Texts(m.Allow), "an empty tools.allowed in a later scope replaces the earlier list")
	assert.Equal(t, []string{"mcp__a__y"}, Texts(m.Deny), "v1 excludeTools of a migrated file counts as tools.exclude")
	require.Len(t, m.MCPServers, 1)
	assert.Equal(t, "a2", m.MCPServers[0].Command)

	var shadowed []string
	for _, r := range m.Shadowed {
		shadowed = append(shadowed, r.File+" "+r.Key+" "+r.Literal)
	}
	assert.ElementsMatch(t, []string{
		"user.json mcpServers.a.excludeTools z",
		"user.json allowedTools mcp__a__x",
		"ws.json allowedTools mcp__a__ignored",
	}, shadowed)
}

// Texts returns the rule strings of a merged list, in order (what Qwen Code evaluates).
func Texts(list []MergedRule) []string {
	out := make([]string, len(list))
	for i, r := range list {
		out[i] = r.Text
	}
	return out
}
