package settings

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadAgentFixture(t *testing.T) {
	a, err := LoadAgent(fixtureAgent)
	require.NoError(t, err)
	assert.Equal(t, "verifier", a.Name)
	assert.Equal(t, []ruleRow{
		{"disallowedTools", 0, KindDisallowed, "mcp__foo.bar", 5, 5},
		{"disallowedTools", 1, KindDisallowed, "mcp__com.example.enterprise-search__list", 6, 5},
	}, rows(a.DisallowedTools))
	data, err := os.ReadFile(fixtureAgent)
	require.NoError(t, err)
	for _, r := range a.DisallowedTools {
		assert.Equal(t, r.Literal, string(data[r.Offset:r.End]))
		assert.Equal(t, ScopeAgent, r.Scope)
		assert.Equal(t, fixtureAgent, r.File)
		assert.Equal(t, r.Literal, r.Expanded)
	}
	assert.Empty(t, a.Warnings)
}

func TestParseAgent(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     []ruleRow
		tokens   []string // data[Offset:End] of each rule
		servers  []string
		warnings []string
	}{
		{
			name: "comma-separated string",
			in:   "---\nname: a\ndescription: d\ndisallowedTools: mcp__foo.bar, ,mcp__lit__*  ,Bash\n---\nbody\n",
			want: []ruleRow{
				{"disallowedTools", 0, KindDisallowed, "mcp__foo.bar", 4, 18},
				{"disallowedTools", 1, KindDisallowed, "mcp__lit__*", 4, 33},
				{"disallowedTools", 2, KindDisallowed, "Bash", 4, 47},
			},
			tokens: []string{"mcp__foo.bar", "mcp__lit__*", "Bash"},
		},
		{
			name: "CRLF, BOM, quoted and flow items, agent-local servers",
			in: "\ufeff---\r\nname: \"a\"\r\ndescription: d\r\ndisallowedTools: [\"mcp__搜索__x\", 'mcp__y', 7, true]\r\n" +
				"mcpServers:\r\n  local.srv: {command: x}\r\n  other: {url: http://h}\r\n---\r\n",
			want: []ruleRow{
				{"disallowedTools", 0, KindDisallowed, "mcp__搜索__x", 4, 19},
				{"disallowedTools", 1, KindDisallowed, "mcp__y", 4, 37},
			},
			tokens:  []string{`"mcp__搜索__x"`, `'mcp__y'`},
			servers: []string{"local.srv", "other"},
			warnings: []string{
				"a.md:4:47: disallowedTools[2]: not a string; Qwen Code drops it",
				"a.md:4:50: disallowedTools[3]: not a string; Qwen Code drops it",
			},
		},
		{
			name:   "duplicate key: the last one is used",
			in:     "---\nname: a\ndescription: d\ndisallowedTools: x\ndisallowedTools: [y]\n---\n",
			want:   []ruleRow{{"disallowedTools", 0, KindDisallowed, "y", 5, 19}},
			tokens: []string{"y"},
			warnings: []string{
				`a.md:5:1: front matter key "disallowedTools" appears more than once; the last one is used`,
			},
		},
		{
			name: "no disallowedTools; mcpServers of the wrong shape",
			in:   "---\nname: a\ndescription: d\nmcpServers: [x]\n---\n",
			warnings: []string{
				"a.md:4:13: mcpServers: not a mapping; Qwen Code drops it",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.in)
			a, err := ParseAgent("a.md", data)
			require.NoError(t, err)
			assert.Equal(t, tt.want, rows(a.DisallowedTools))
			var tokens []string
			for _, r := range a.DisallowedTools {
				tokens = append(tokens, string(data[r.Offset:r.End]))
			}
			assert.Equal(t, tt.tokens, tokens)
			assert.Equal(t, tt.servers, a.MCPServers)
			var warnings []string
			for _, w := range a.Warnings {
				warnings = append(warnings, w.String())
			}
			assert.Equal(t, tt.warnings, warnings)
		})
	}
}

func TestParseAgentRejects(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
		want string
	}{
		{"no front matter", "name: a\n", 1, "a.md:1:1: missing YAML front matter"},
		{"no closing line end", "---\nname: a\ndescription: d\n---", 1, "a.md:1:1: missing YAML front matter"},
		// yaml.v3 reports an unclosed flow sequence at the line where it starts.
		{"unclosed flow sequence", "---\nname: a\ndescription: d\ndisallowedTools: [a, b\nother: x\n---\n", 4, "a.md:4:1: front matter: did not find expected ',' or ']'"},
		{"bad indentation", "---\nname: a\n  description: d: e\n---\n", 3, "a.md:3:1: front matter: mapping values are not allowed in this context"},
		{"not a mapping", "---\n- a\n---\n", 2, "a.md:2:1: front matter is not a YAML mapping"},
		{"missing name", "---\ndescription: d\n---\n", 2, `a.md:2:1: front matter has no "name"`},
		{"missing description", "---\nname: a\ndescription:\n---\n", 2, `a.md:2:1: front matter has no "description"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseAgent("a.md", []byte(tt.in))
			require.Error(t, err)
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			assert.ErrorIs(t, err, ErrFrontMatter)
			assert.Equal(t, tt.line, pe.Line)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestLoadAgentsDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	write("b.md", "---\nname: b\ndescription: d\ndisallowedTools: [mcp__b]\n---\n")
	write("a.md", "---\nname: a\ndescription: d\ndisallowedTools: mcp__a\n---\n")
	write("broken.md", "no front matter\n")
	write("notes.txt", "---\nname: x\n---\n")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub.md"), 0o755))

	agents, errs := LoadAgentsDir(dir)
	var names []string
	for _, a := range agents {
		names = append(names, a.Name)
	}
	assert.Equal(t, []string{"a", "b"}, names)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "broken.md:1:1")

	agents, errs = LoadAgentsDir(filepath.Join(dir, "missing"))
	assert.Nil(t, agents)
	assert.Nil(t, errs)
}
