package mcpinventory

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpname"
)

const fixtureInventory = "../fixtures/qwen-settings/inventory.json"

func toolNames(s *Server) []string {
	var out []string
	for _, t := range s.Tools {
		out = append(out, t.Name)
	}
	return out
}

func TestLoadFixture(t *testing.T) {
	inv, err := Load(fixtureInventory)
	require.NoError(t, err)
	assert.Equal(t, []string{"com.example.enterprise-search", "foo.bar", "foo_bar", "lit"}, inv.Keys())

	lit := inv.Servers["lit"]
	assert.Equal(t, []string{"get+data", "get_data_for_a_specific_location_and_date_range_extended",
		"literature.search_pubmed", "literature_search_pubmed", "ok_tool", "搜索文献"}, toolNames(lit))
	assert.False(t, lit.Trust)
	assert.Equal(t, SourceFile, lit.Source)
	for _, tool := range lit.Tools {
		assert.Equal(t, SourceFile, tool.Source)
	}
	assert.True(t, inv.Servers["com.example.enterprise-search"].Trust)

	raws := inv.Raws()
	assert.Len(t, raws, 12)
	assert.Contains(t, raws, "mcp__foo.bar__deploy.prod")
	assert.Contains(t, raws, "mcp__lit__搜索文献")

	ix := inv.Index()
	assert.Equal(t, 12, ix.Len())
	assert.Equal(t, []string{"mcp__foo.bar__get_data"}, ix.RegisteredBy("mcp__foo_bar__get_data_0xybsnb"))
	assert.Equal(t, []string{"mcp__foo_bar__get_data"}, ix.RegisteredBy("mcp__foo_bar__get_data"),
		"foo_bar/get_data registers verbatim: the collision the fixture is about")
	assert.Equal(t, []string{"mcp__lit__get+data"}, ix.LegacyOf("mcp__lit__get_data"))
	assert.Equal(t, mcpname.ClassLossyLegacy, mcpname.Classify("mcp__lit__get_data", ix).Class)
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		cause     error
		line, col int
		reason    string
	}{
		{"bad JSON", "{\"servers\": {\n  \"a\": {\"tools\": [\"x\" \"y\"]}}}", mcpconfig.ErrSyntax, 2, 23, "invalid character '\"' after array value (expecting ',' or ']')"},
		{"not an object", "[]", ErrFormat, 1, 1, "inventory is not a JSON object"},
		{"no servers", "{\"server\": {}}", ErrFormat, 1, 1, `inventory has no "servers" object`},
		{"servers not an object", "{\"servers\": []}", ErrFormat, 1, 13, `"servers" is not an object`},
		{"server not an object", "{\"servers\": {\"a\": true}}", ErrFormat, 1, 19, `server "a": not an object`},
		{"trust not a boolean", "{\"servers\": {\"a\": {\"trust\": \"yes\"}}}", ErrFormat, 1, 29, `server "a": "trust" is not a boolean`},
		{"tools not an array", "{\"servers\": {\"a\": {\"tools\": \"x\"}}}", ErrFormat, 1, 29, `server "a": "tools" is not an array`},
		{"tool not a string", "{\"servers\": {\"a\": {\"tools\": [\"x\", 3]}}}", ErrFormat, 1, 35, `server "a": tools[1] is not a string`},
		{"empty tool", "{\"servers\": {\"a\": {\"tools\": [\"\"]}}}", ErrFormat, 1, 30, `server "a": tools[0] is empty`},
		{"duplicate server", "{\"servers\": {\"a\": {},\n \"a\": {}}}", ErrFormat, 2, 2, `server "a" is listed twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("inv.json", []byte(tt.in))
			require.Error(t, err)
			var pe *mcpconfig.ParseError
			require.ErrorAs(t, err, &pe)
			assert.ErrorIs(t, err, tt.cause)
			assert.Equal(t, [3]any{tt.line, tt.col, tt.reason}, [3]any{pe.Line, pe.Column, pe.Reason})
		})
	}
}

func TestParseAccepts(t *testing.T) {
	in := `{
  // comments and trailing commas are fine in our own format
  "version": 1,
  "servers": {
    "a": {"tools": ["z", "y", "z"], "note": "ignored",},
    "b": {},
  },
}`
	inv, err := Parse("inv.json", []byte(in))
	require.NoError(t, err)
	assert.Equal(t, []string{"y", "z"}, toolNames(inv.Servers["a"]), "sorted and unique")
	assert.Empty(t, inv.Servers["b"].Tools)
	assert.Equal(t, []string{"mcp__a__y", "mcp__a__z"}, inv.Raws())
}

func TestAddAndMerge(t *testing.T) {
	inv := New()
	inv.Add("lit", true, SourceFile, "b", "a")
	inv.Add("lit", false, SourceDiscovered, "c", "a")

	other := New()
	other.Add("lit", false, SourceInferred, "d")
	other.Add("new", true, SourceInferred, "x")
	inv.Merge(other)

	lit := inv.Servers["lit"]
	assert.True(t, lit.Trust, "an existing server keeps its trust")
	assert.Equal(t, SourceFile, lit.Source)
	assert.Equal(t, []Tool{{"a", SourceFile}, {"b", SourceFile}, {"c", SourceDiscovered}, {"d", SourceInferred}}, lit.Tools)
	require.Contains(t, inv.Servers, "new")
	assert.True(t, inv.Servers["new"].Trust)
	assert.Equal(t, SourceInferred, inv.Servers["new"].Source)
}

func TestInfer(t *testing.T) {
	servers := []mcpconfig.Server{
		{Key: "lit", Trust: true},
		{Key: "foo.bar"},
		{Key: "a"},
		{Key: "a__b"},
		{Key: "idle"},
	}
	seen := []string{
		"mcp__lit__literature.search_pubmed",                              // legacy = raw (dots kept)
		"mcp__lit__literature_search_pubmed",                              // registered verbatim
		"mcp__lit__literature_search_pubmed_1nv53db",                      // hashed: no raw name to recover
		"mcp__lit__get_data_for_a_spe___location_and_date_range_extended", // truncated
		"mcp__lit__搜索文献",                                                  // unsanitized (older agents)
		"mcp__lit__literature.search_pubmed",                              // repeated
		"mcp__foo.bar__deploy.prod",
		"mcp__foo_bar__deploy_prod_0tgvvnc", // hashed
		"mcp__a__b__c",                      // "a"/"b__c" or "a__b"/"c": ambiguous
		"mcp__a__x",
		"mcp__lit__",      // empty tool
		"mcp__unknown__x", // not configured
		"read_file",       // built-in
		"tool_call",       // bridge
	}
	inv := Infer(servers, seen)
	assert.Equal(t, []string{"a", "a__b", "foo.bar", "idle", "lit"}, inv.Keys())
	assert.Equal(t, []string{"literature.search_pubmed", "literature_search_pubmed", "搜索文献"}, toolNames(inv.Servers["lit"]))
	assert.Equal(t, []string{"deploy.prod"}, toolNames(inv.Servers["foo.bar"]))
	assert.Equal(t, []string{"x"}, toolNames(inv.Servers["a"]))
	assert.Empty(t, inv.Servers["a__b"].Tools)
	assert.Empty(t, inv.Servers["idle"].Tools)
	assert.True(t, inv.Servers["lit"].Trust)
	for _, s := range inv.Servers {
		assert.Equal(t, SourceInferred, s.Source)
		for _, tool := range s.Tools {
			assert.Equal(t, SourceInferred, tool.Source)
		}
	}
}

// InOrder lists the servers of order first (a key the inventory lacks skipped), then the others
// sorted, each server's tools in the inventory's order.
func TestInOrder(t *testing.T) {
	inv := New()
	inv.Add("zeta", false, SourceFile, "z2", "z1")
	inv.Add("alpha", false, SourceFile, "a1")
	inv.Add("lit", false, SourceFile, "literature.search_pubmed", "ok_tool")
	assert.Equal(t, []ServerTool{
		{"lit", "literature.search_pubmed"}, {"lit", "ok_tool"},
		{"alpha", "a1"},
		{"zeta", "z1"}, {"zeta", "z2"}, // Add keeps a server's tools sorted
	}, inv.InOrder([]string{"lit", "gone"}))
	assert.Empty(t, New().InOrder([]string{"lit"}))
}
