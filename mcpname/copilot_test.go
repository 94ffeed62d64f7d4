package mcpname

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const copilotFixtures = "../fixtures/copilot-real/"

// copilotFixtureTools are the raw tools of fixtures/copilot-real/dot-copilot/mcp-config.json,
// each server's in the order its TOOLS lists them (the order fake_mcp.py lists them).
func copilotFixtureTools(t *testing.T) []CopilotTool {
	t.Helper()
	b, err := os.ReadFile(copilotFixtures + "dot-copilot/mcp-config.json")
	require.NoError(t, err)
	var cfg struct {
		MCPServers map[string]struct {
			Env map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(b, &cfg))
	var out []CopilotTool
	for _, key := range []string{"lit", "foo.bar", "foo_bar"} { // file order
		for _, tool := range strings.Split(cfg.MCPServers[key].Env["TOOLS"], ",") {
			out = append(out, CopilotTool{Server: key, Tool: tool})
		}
	}
	require.Len(t, out, 11)
	return out
}

// copilotOfferedMCP returns the MCP tool names (prefixes lit-, foo-, foo_) of the first
// request a recorded run sent, in request order.
func copilotOfferedMCP(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(copilotFixtures + "requests/" + file)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	require.True(t, sc.Scan())
	var req struct {
		Body struct {
			Tools []struct {
				Function struct{ Name string } `json:"function"`
			} `json:"tools"`
		} `json:"body"`
	}
	require.NoError(t, json.Unmarshal(sc.Bytes(), &req))
	var out []string
	for _, tl := range req.Body.Tools {
		n := tl.Function.Name
		if strings.HasPrefix(n, "lit-") || strings.HasPrefix(n, "foo-") || strings.HasPrefix(n, "foo_") {
			out = append(out, n)
		}
	}
	return out
}

// TestCopilotRegisterRecorded: the names and their order in the tool list 1.0.39 (old1) and
// 1.0.102 (new3) sent are CopilotRegister's for the fixture's servers.
func TestCopilotRegisterRecorded(t *testing.T) {
	tools := copilotFixtureTools(t)
	for _, c := range []struct {
		file    string
		version string
	}{{"old1.jsonl", "1.0.39"}, {"new3.jsonl", "1.0.102"}} {
		era, err := CopilotEraOf(c.version)
		require.NoError(t, err)
		var got []string
		for _, o := range CopilotRegister(era, tools) {
			assert.False(t, o.Shadowed, "%s: %v", c.version, o)
			got = append(got, o.Name)
		}
		assert.Equal(t, copilotOfferedMCP(t, c.file), got, c.version)
	}
}

func TestCopilotNameIn(t *testing.T) {
	long := "get_data_for_a_specific_location_and_date_range_extended_with_more_filters"
	cases := []struct {
		server, tool          string
		raw, serverSan, whole string
	}{
		{"lit", "literature.search_pubmed", "lit-literature.search_pubmed", "lit-literature.search_pubmed", "lit-literature-search_pubmed"},
		{"lit", "get+data", "lit-get+data", "lit-get+data", "lit-get-data"},
		{"lit", "搜索文献", "lit-搜索文献", "lit-搜索文献", "lit-xn--u2un5au31afvj"},
		{"foo.bar", "deploy.prod", "foo.bar-deploy.prod", "foo-bar-deploy.prod", "foo-bar-deploy-prod"},
		{"foo_bar", "deploy.prod", "foo_bar-deploy.prod", "foo_bar-deploy.prod", "foo_bar-deploy-prod"},
		{"lit", long, "lit-" + long, "lit-get_data_for_a_specific_location_and_date_range_extended_wit", "lit-get_data_for_a_specific_location_and_date_range_extended_wit"},
		{"me@corp", "a@b", "me@corp-a@b", "me-corp-a@b", "me-corp-a-b"},
	}
	for _, c := range cases {
		assert.Equal(t, c.raw, CopilotNameIn(CopilotEraRaw, c.server, c.tool))
		assert.Equal(t, c.serverSan, CopilotNameIn(CopilotEraServerSanitized, c.server, c.tool))
		assert.Equal(t, c.whole, CopilotNameIn(CopilotEraSanitized, c.server, c.tool))
	}
	assert.Equal(t, 78, Len(CopilotNameIn(CopilotEraRaw, "lit", long)), "the raw era caps nothing")
	// The cut counts UTF-16 units: 60 ASCII + 4 CJK units, not bytes.
	cjk := strings.Repeat("a", 56) + "搜索文献搜索"
	n := CopilotNameIn(CopilotEraServerSanitized, "lit", cjk)
	assert.Equal(t, 64, Len(n))
	assert.Equal(t, "lit-"+strings.Repeat("a", 56)+"搜索文献", n)
}

// TestCopilotSanitizePunycode: expected values from Node 20's punycode.toASCII (the punycode.js
// 2.x that 1.0.39 and 1.0.40 bundle, version 2.3.1) followed by the "-" pass, as Copilot's
// sanitizer composes them.
func TestCopilotSanitizePunycode(t *testing.T) {
	for in, want := range map[string]string{
		"搜索文献":                      "xn--u2un5au31afvj",
		"ab搜":                       "xn--ab-1p6d",
		"Ab搜C":                      "xn--AbC-mj7f",
		"münchen-Straße":            "xn--mnchen-Strae-v9a90b",
		"a\u3002b":                  "a-b",
		"😀":                         "xn--e28h",
		"x.搜索.y":                    "x-xn--u2uy07c-y",
		"a@b":                       "a-b",
		"ＡＢ":                        "xn--ph7cc",
		"\uff0e.\uff61":             "---",
		"get+data":                  "get-data",
		"literature.search_pubmed":  "literature-search_pubmed",
		"":                          "",
		"ok_tool":                   "ok_tool",
		"com.example.enterprise-ok": "com-example-enterprise-ok",
	} {
		assert.Equal(t, want, CopilotSanitize(in), "%q", in)
	}
}

func TestCopilotRegisterCutAndShadow(t *testing.T) {
	long := strings.Repeat("x", 70)
	offers := CopilotRegister(CopilotEraSanitized, []CopilotTool{
		{"srv", long + "a"}, {"srv", long + "b"}, {"srv", long + "c"},
		{"foo.bar", "x"}, {"foo-bar", "x"}, {"foo", "bar-x"},
		{"lit", "get+data"}, {"lit", "get-data"},
	})
	byTool := map[CopilotTool]CopilotOffer{}
	for _, o := range offers {
		byTool[o.Tool] = o
	}
	cut := "srv-" + strings.Repeat("x", 60)
	assert.Equal(t, cut, byTool[CopilotTool{"srv", long + "a"}].Name)
	assert.Equal(t, cut[:63]+"2", byTool[CopilotTool{"srv", long + "b"}].Name)
	assert.Equal(t, cut[:63]+"3", byTool[CopilotTool{"srv", long + "c"}].Name)
	assert.True(t, byTool[CopilotTool{"srv", long + "c"}].Truncated)
	// "foo" < "foo-bar" < "foo.bar": foo/bar-x answers to foo-bar-x, the other two are shadowed.
	assert.False(t, byTool[CopilotTool{"foo", "bar-x"}].Shadowed)
	for _, s := range []string{"foo-bar", "foo.bar"} {
		o := byTool[CopilotTool{s, "x"}]
		assert.True(t, o.Shadowed, s)
		assert.Equal(t, &CopilotTool{"foo", "bar-x"}, o.ShadowedBy, s)
		assert.Equal(t, "foo-bar-x", o.Name)
	}
	// One server: equal names keep the server's order.
	assert.False(t, byTool[CopilotTool{"lit", "get+data"}].Shadowed)
	assert.True(t, byTool[CopilotTool{"lit", "get-data"}].Shadowed)
}

func TestCopilotToolPartAndDispatch(t *testing.T) {
	p, ok := CopilotToolPart(CopilotEraSanitized, "foo.bar", "foo-bar-deploy-prod")
	assert.True(t, ok)
	assert.Equal(t, "deploy-prod", p)
	p, ok = CopilotToolPart(CopilotEraServerSanitized, "lit", "lit-literature.search_pubmed")
	assert.True(t, ok)
	assert.Equal(t, "literature.search_pubmed", p)
	_, ok = CopilotToolPart(CopilotEraSanitized, "lit", "foo-bar-x")
	assert.False(t, ok)
	// 1.0.39 stored what it dispatched (fixtures/copilot-real S1).
	for in, want := range map[string]string{
		"lit-literature.search_pubmed": "lit-literature_search_pubmed",
		"lit-搜索文献":                     "lit-_",
		"lit-get+data":                 "lit-get_data",
		"foo-bar-deploy.prod":          "foo-bar-deploy_prod",
		"lit-ok_tool":                  "lit-ok_tool",
	} {
		assert.Equal(t, want, CopilotDispatchName(CopilotEraServerSanitized, in))
		assert.Equal(t, in, CopilotDispatchName(CopilotEraRaw, in))
	}
}

func TestCopilotEraOf(t *testing.T) {
	for v, want := range map[string]CopilotEra{"0.0.340": CopilotEraRaw, "0.0.417": CopilotEraRaw, "0.0.420": CopilotEraServerSanitized,
		"1.0.39": CopilotEraServerSanitized, "1.0.40": CopilotEraSanitized, "1.0.102": CopilotEraSanitized, "1.0.102-1": CopilotEraSanitized} {
		got, err := CopilotEraOf(v)
		require.NoError(t, err, v)
		assert.Equal(t, want, got, v)
	}
	_, err := CopilotEraOf("latest")
	assert.ErrorIs(t, err, ErrCopilotVersion)
	assert.True(t, CopilotNameAccepted("lit-get_data_for_a_specific_location_and_date_range_extended_wit"))
	assert.False(t, CopilotNameAccepted("lit-get_data_for_a_specific_location_and_date_range_extended_with"))
	assert.False(t, CopilotNameAccepted("foo-bar-deploy.prod"))
	assert.False(t, CopilotNameAccepted(""))
}
