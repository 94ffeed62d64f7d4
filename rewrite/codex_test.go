package rewrite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/codex"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

const codexFixtures = "../fixtures/codex-real/"

// codexInventory is the raw tool set of the codex-real runs (fixtures/README.md).
var codexInventory = []mcpname.CodexTool{
	{Server: "foo-bar", Tool: "deploy.prod"},
	{Server: "foo-bar", Tool: "get_data"},
	{Server: "lit", Tool: "get+data"},
	{Server: "lit", Tool: "get_data_for_a_specific_location_and_date_range_extended"},
	{Server: "lit", Tool: "literature.search_pubmed"},
	{Server: "lit", Tool: "literature_search_pubmed"},
	{Server: "lit", Tool: "ok_tool"},
	{Server: "lit", Tool: "搜索文献"},
}

// codexPolicy is a Policy whose Codex part is cp (the default of every rollout).
func codexPolicy(cp codex.CodexPolicy) naming.Policy {
	var pol naming.Policy
	naming.SetAgent(&pol, codex.ID, &naming.PathPolicy[codex.CodexPolicy]{Default: cp})
	return pol
}

// planCodex scans one rollout and plans it with pol.
func planCodex(t testing.TB, path string, pol naming.Policy) *StorePlan {
	t.Helper()
	st := jsonl.Open(path, codex.Rollout)
	snap, err := st.Scan(context.Background(), store.ScanOptions{})
	require.NoError(t, err)
	require.Empty(t, snap.Problems)
	p := Build([]Scanned{{Store: st, Snap: snap}}, pol)
	require.Len(t, p.Stores, 1)
	return p.Stores[0]
}

func codexConfig(t testing.TB, text string) *codex.Config {
	t.Helper()
	c, err := codex.ParseConfig("config.toml", []byte(text))
	require.NoError(t, err)
	return c
}

func fixtureConfig(t testing.TB, extra string) *codex.Config {
	t.Helper()
	b, err := os.ReadFile(codexFixtures + "config.toml")
	require.NoError(t, err)
	return codexConfig(t, extra+"\n"+string(b))
}

// repair is one expected rewrite of a call: its old flat name, new namespace and name.
type repair struct{ old, ns, name string }

// rewrites returns the rewrites of a plan as old → (namespace, name), checking that each call
// rewrites its name and inserts its namespace right after it, and returns the sources seen.
func rewrites(t testing.TB, sp *StorePlan) (map[string]repair, map[string]string) {
	t.Helper()
	out, sources := map[string]repair{}, map[string]string{}
	byGroup := map[string][]naming.Decision{}
	for _, d := range sp.Decisions {
		if d.Action == naming.ActRewrite {
			byGroup[d.Site.Group] = append(byGroup[d.Site.Group], d)
		}
	}
	for g, ds := range byGroup {
		require.Len(t, ds, 2, "group %s rewrites name and namespace", g)
		name, ns := ds[0], ds[1]
		require.Equal(t, codex.FieldName, name.Site.Field)
		require.Equal(t, codex.FieldNamespace, ns.Site.Field)
		assert.Empty(t, ns.Site.Raw, "the namespace member is inserted")
		assert.Equal(t, name.Site.Loc.Offset+int64(len(name.Site.Raw)), ns.Site.Loc.Offset)
		assert.Equal(t, name.Site.CallID, ns.Site.CallID)
		assert.Equal(t, codex.ClassCodexRejected, name.Class)
		assert.Equal(t, name.Source, ns.Source)
		assert.True(t, mcpname.CodexNameAccepted(ns.New+mcpname.CodexDelimiter+name.New, mcpname.ResponsesNameMax))
		assert.True(t, mcpname.CodexNameAccepted(name.New, mcpname.ChatCompletionsNameMax))
		out[name.Site.Name] = repair{name.Site.Name, ns.New, name.New}
		sources[name.Site.Name] = name.Source
	}
	return out, sources
}

// The names Codex 0.169.0 registers for the fixture tools (its own rollout records them).
var fixtureRepairs = map[string]repair{
	"mcp__foo-bar__deploy.prod":          {"mcp__foo-bar__deploy.prod", "mcp__foo_bar", "deploy_prod"},
	"mcp__lit__get+data":                 {"mcp__lit__get+data", "mcp__lit", "get_data"},
	"mcp__lit__literature.search_pubmed": {"mcp__lit__literature.search_pubmed", "mcp__lit", "literature_search_pubmed_977c8bf14fb3"},
	"mcp__lit__搜索文献":                     {"mcp__lit__搜索文献", "mcp__lit", "____"},
}

func TestCodexNamerFixture050(t *testing.T) {
	tests := []struct {
		name    string
		pol     codex.CodexPolicy
		want    map[string]repair
		source  string
		inNotes string
	}{
		{
			name: "config.toml server keys", pol: codex.CodexPolicy{Config: fixtureConfig(t, "")},
			want: fixtureRepairs, source: "config.toml server key (E2 spelling)", inNotes: "over the 7 tools attributed in this rollout",
		},
		{
			name: "inventory", pol: codex.CodexPolicy{Inventory: codexInventory, InventorySource: "inv.json"},
			want: fixtureRepairs, source: "inventory (E2 name)", inNotes: "over the 8 registered tools of inv.json",
		},
		{
			name: "inventory and config", pol: codex.CodexPolicy{Inventory: codexInventory, InventorySource: "inv.json", Config: fixtureConfig(t, "")},
			want: fixtureRepairs, source: "inventory (E2 name)", inNotes: "over the 8 registered tools of inv.json",
		},
		{
			name: "a disabled tool takes no part in collisions",
			pol: codex.CodexPolicy{Inventory: codexInventory, InventorySource: "inv.json", Config: codexConfig(t,
				"[mcp_servers.lit]\ncommand = \"x\"\ndisabled_tools = [\"literature_search_pubmed\"]\n[mcp_servers.foo-bar]\ncommand = \"x\"")},
			want: map[string]repair{
				"mcp__foo-bar__deploy.prod":          fixtureRepairs["mcp__foo-bar__deploy.prod"],
				"mcp__lit__get+data":                 fixtureRepairs["mcp__lit__get+data"],
				"mcp__lit__literature.search_pubmed": {"mcp__lit__literature.search_pubmed", "mcp__lit", "literature_search_pubmed"},
				"mcp__lit__搜索文献":                     fixtureRepairs["mcp__lit__搜索文献"],
			},
			source: "inventory (E2 name)", inNotes: "over the 7 registered tools of inv.json",
		},
		{
			name: "non-prefixed server",
			pol:  codex.CodexPolicy{Config: fixtureConfig(t, `non_prefixed_mcp_tool_servers = ["lit"]`)},
			want: map[string]repair{
				"mcp__foo-bar__deploy.prod":          fixtureRepairs["mcp__foo-bar__deploy.prod"],
				"mcp__lit__get+data":                 {"mcp__lit__get+data", "lit", "get_data"},
				"mcp__lit__literature.search_pubmed": {"mcp__lit__literature.search_pubmed", "lit", "literature_search_pubmed_977c8bf14fb3"},
				"mcp__lit__搜索文献":                     {"mcp__lit__搜索文献", "lit", "____"},
			},
			source: "config.toml server key (E2 spelling)", inNotes: "over the 7 tools attributed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := planCodex(t, codexFixtures+"rollout-codex-0.50.0.jsonl", codexPolicy(tt.pol))
			got, sources := rewrites(t, sp)
			assert.Equal(t, tt.want, got)
			for old, src := range sources {
				assert.Equal(t, tt.source, src, old)
			}
			for _, d := range sp.Decisions {
				if d.Action == naming.ActRewrite && d.Site.Field == codex.FieldName {
					assert.Contains(t, d.Note, tt.inNotes)
					assert.Contains(t, d.Note, "raw identity ")
				}
				if d.Action != naming.ActRewrite {
					assert.Equal(t, mcpname.ClassClean, d.Class, d.Site.Name)
					assert.Equal(t, naming.ActNone, d.Action, d.Site.Name)
				}
			}
			assert.Equal(t, 4, sp.Count(naming.ActRewrite), "four names (name + namespace each)")
			assert.Len(t, sp.Names(), 8)
			assert.Len(t, sp.Edits(), 8)
			assert.Equal(t, 4, NameCount(sp.Edits()))
		})
	}
}

func TestCodexNamerNothingKnown(t *testing.T) {
	sp := planCodex(t, codexFixtures+"rollout-codex-0.50.0.jsonl", naming.Policy{})
	assert.Zero(t, sp.Count(naming.ActRewrite))
	assert.Equal(t, 4, sp.Count(naming.ActKeep))
	for _, d := range sp.Decisions {
		if d.Action == naming.ActKeep {
			assert.Equal(t, codex.ClassCodexUnattributed, d.Class)
			assert.Contains(t, d.Note, "no invocation record for call "+d.Site.CallID)
			assert.Contains(t, d.Note, "no inventory")
			assert.Contains(t, d.Note, "no configured server key")
			assert.False(t, mcpname.CodexNameAccepted(d.Site.Name, 64))
		}
	}
	byClass := map[mcpname.Class]int{}
	for _, d := range sp.Names() {
		byClass[d.Class]++
	}
	assert.Equal(t, map[mcpname.Class]int{mcpname.ClassClean: 4, codex.ClassCodexUnattributed: 4}, byClass)
}

func TestCodexNamerFixture0169(t *testing.T) {
	sp := planCodex(t, codexFixtures+"rollout-codex-0.169.0.jsonl", codexPolicy(codex.CodexPolicy{Config: fixtureConfig(t, "")}))
	require.Len(t, sp.Decisions, 16)
	for _, d := range sp.Decisions {
		if d.Site.Name == "get_data_for_a_specific_location_and_date_range_extended" {
			// Codex's own name, 66 units flat: kept, a provider rejects it (issue 23 item 7).
			assert.Equal(t, naming.ActKeep, d.Action)
			assert.Equal(t, codex.ClassCodexOverLong, d.Class)
			continue
		}
		if d.Site.Field == codex.FieldNamespace {
			assert.Equal(t, naming.ActNone, d.Action, d.Site.Name)
			continue
		}
		assert.Equal(t, naming.ActNone, d.Action, d.Site.Name)
		assert.Equal(t, mcpname.ClassClean, d.Class, d.Site.Name)
	}
	assert.Len(t, sp.Names(), 8)
}

// writeCodex writes a rollout made of lines to a temp dir.
func writeCodex(t testing.TB, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rollout-2026-01-01T00-00-00-x.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return path
}

func rolloutCall(name, callID string) string {
	return `{"type":"response_item","payload":{"type":"function_call","name":"` + name + `","arguments":"{}","call_id":"` + callID + `"}}`
}

func rolloutEnd(callID, server, tool string) string {
	return `{"type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"` + callID + `","invocation":{"server":"` + server + `","tool":"` + tool + `"}}}`
}

func TestCodexNamerAttribution(t *testing.T) {
	hashed, err := mcpname.CodexFlatE2("lit", "get.data_for_a_specific_location_and_date_range_extended")
	require.NoError(t, err)
	require.Equal(t, "mcp__lit__get.data_for_a", hashed[:24])
	tests := []struct {
		name   string
		lines  []string
		pol    codex.CodexPolicy
		want   map[string]repair
		source string
		why    string // note of a kept name
	}{
		{
			name:   "invocation records",
			lines:  []string{rolloutCall("mcp__lit__literature.search_pubmed", "c1"), rolloutEnd("c1", "lit", "literature.search_pubmed"), rolloutCall("mcp__lit__literature_search_pubmed", "c2"), rolloutEnd("c2", "lit", "literature_search_pubmed")},
			want:   map[string]repair{"mcp__lit__literature.search_pubmed": fixtureRepairs["mcp__lit__literature.search_pubmed"]},
			source: codex.SourceInvocation,
		},
		{
			name:   "invocation record wins over the config keys",
			lines:  []string{rolloutCall("mcp__a__b__c.d", "c1"), rolloutEnd("c1", "a__b", "c.d")},
			pol:    codex.CodexPolicy{Config: codexConfig(t, "[mcp_servers.a]\ncommand='x'\n[mcp_servers.a__b]\ncommand='x'")},
			want:   map[string]repair{"mcp__a__b__c.d": {"mcp__a__b__c.d", "mcp__a__b", "c_d"}},
			source: codex.SourceInvocation,
		},
		{
			name:  "conflicting invocation records",
			lines: []string{rolloutCall("mcp__lit__x.y", "c1"), rolloutEnd("c1", "lit", "x.y"), rolloutEnd("c1", "lit", "x_y")},
			pol:   codex.CodexPolicy{Config: fixtureConfig(t, "")},
			why:   "conflicting invocation records",
		},
		{
			name:  "two configured keys spell the name",
			lines: []string{rolloutCall("mcp__a__b__c.d", "c1")},
			pol:   codex.CodexPolicy{Config: codexConfig(t, "[mcp_servers.a]\ncommand='x'\n[mcp_servers.a__b]\ncommand='x'")},
			why:   "2 configured server keys match",
		},
		{
			name:  "no configured key matches",
			lines: []string{rolloutCall("mcp__other__x.y", "c1")},
			pol:   codex.CodexPolicy{Config: fixtureConfig(t, "")},
			why:   "no configured server key matches",
		},
		{
			name:  "a hashed flat name needs the inventory",
			lines: []string{rolloutCall(hashed, "c1")},
			pol:   codex.CodexPolicy{Config: fixtureConfig(t, "")},
			why:   "a hashed flat name needs the inventory",
		},
		{
			name:   "E2 hash match",
			lines:  []string{rolloutCall(hashed, "c1")},
			pol:    codex.CodexPolicy{Inventory: []mcpname.CodexTool{{Server: "lit", Tool: "get.data_for_a_specific_location_and_date_range_extended"}}},
			want:   map[string]repair{hashed: {hashed, "mcp__lit", "get_data_for_a_specific_location_and_date_range_extended"}},
			source: "inventory (E2 hash match)",
		},
		{
			name:   "E1 and E0 spellings by config key",
			lines:  []string{rolloutCall("lit__a.b", "c1"), rolloutCall("lit__OAI_CODEX_MCP__c.d", "c2")},
			pol:    codex.CodexPolicy{Config: codexConfig(t, "[mcp_servers.lit]\ncommand='x'")},
			want:   map[string]repair{"lit__a.b": {"lit__a.b", "mcp__lit", "a_b"}, "lit__OAI_CODEX_MCP__c.d": {"lit__OAI_CODEX_MCP__c.d", "mcp__lit", "c_d"}},
			source: "", // checked below: E1 and E0
		},
		{
			name:   "E1 name by inventory",
			lines:  []string{rolloutCall("lit__a.b", "c1")},
			pol:    codex.CodexPolicy{Inventory: []mcpname.CodexTool{{Server: "lit", Tool: "a.b"}}},
			want:   map[string]repair{"lit__a.b": {"lit__a.b", "mcp__lit", "a_b"}},
			source: "inventory (E1 name)",
		},
		{
			name:  "no inventory tool has the name",
			lines: []string{rolloutCall("mcp__lit__zz.z", "c1")},
			pol:   codex.CodexPolicy{Inventory: codexInventory},
			why:   "no inventory tool has this flat name",
		},
		{
			name:   "over 64 bytes is rejected",
			lines:  []string{rolloutCall("lit__OAI_CODEX_MCP__"+strings.Repeat("x", 50), "c1")},
			pol:    codex.CodexPolicy{Config: codexConfig(t, "[mcp_servers.lit]\ncommand='x'")},
			want:   map[string]repair{"lit__OAI_CODEX_MCP__" + strings.Repeat("x", 50): {"lit__OAI_CODEX_MCP__" + strings.Repeat("x", 50), "mcp__lit", strings.Repeat("x", 50)}},
			source: "config.toml server key (E0 spelling)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := planCodex(t, writeCodex(t, tt.lines...), codexPolicy(tt.pol))
			got, sources := rewrites(t, sp)
			if tt.want == nil {
				tt.want = map[string]repair{}
			}
			assert.Equal(t, tt.want, got)
			for old, src := range sources {
				if tt.source != "" {
					assert.Equal(t, tt.source, src, old)
				} else {
					assert.Contains(t, src, codex.SourceConfigKey, old)
				}
			}
			if tt.why != "" {
				require.Equal(t, 1, sp.Count(naming.ActKeep))
				for _, d := range sp.Decisions {
					if d.Action == naming.ActKeep {
						assert.Equal(t, codex.ClassCodexUnattributed, d.Class)
						assert.Contains(t, d.Note, tt.why)
					}
				}
			}
		})
	}
}

func TestCodexNamerUnregistered(t *testing.T) {
	lines := []string{rolloutCall("mcp__lit__gone.tool", "c1"), rolloutEnd("c1", "lit", "gone.tool")}
	sp := planCodex(t, writeCodex(t, lines...), codexPolicy(codex.CodexPolicy{Inventory: codexInventory, InventorySource: "inv.json"}))
	got, _ := rewrites(t, sp)
	assert.Equal(t, map[string]repair{"mcp__lit__gone.tool": {"mcp__lit__gone.tool", "mcp__lit", "gone_tool"}}, got)
	for _, d := range sp.Decisions {
		if d.Site.Field == codex.FieldName {
			assert.Contains(t, d.Note, "lit/gone.tool is not in inv.json: no current tool answers to the new name")
		}
	}

	sp = planCodex(t, writeCodex(t, lines...), codexPolicy(codex.CodexPolicy{Config: codexConfig(t, "[mcp_servers.lit]\ncommand='x'\nenabled=false")}))
	for _, d := range sp.Decisions {
		if d.Site.Field == codex.FieldName {
			assert.Equal(t, naming.ActRewrite, d.Action)
			assert.Contains(t, d.Note, "config.toml does not register lit/gone.tool")
		}
	}
}

func TestCodexNamerExistingNamespace(t *testing.T) {
	// An E4b-shaped call ("mcp__lit__" + name) whose model-visible name is over the Responses
	// limit (never written by a real Codex, but the rule must hold): both members are rewritten
	// in place, nothing is inserted.
	long := strings.Repeat("t", 130)
	line := `{"type":"response_item","payload":{"type":"function_call","name":"` + long + `","namespace":"mcp__lit__","call_id":"c1"}}`
	sp := planCodex(t, writeCodex(t, line, rolloutEnd("c1", "lit", long)), naming.Policy{})
	want := mcpname.CodexAllocate([]mcpname.CodexTool{{Server: "lit", Tool: long}}, mcpname.CodexE6Params())[mcpname.CodexTool{Server: "lit", Tool: long}]
	require.Equal(t, "mcp__lit", want.Namespace)
	var news []string
	for _, d := range sp.Decisions {
		assert.Equal(t, naming.ActRewrite, d.Action)
		assert.NotEmpty(t, d.Site.Raw, "no insertion: the namespace exists")
		assert.Equal(t, codex.SourceInvocation, d.Source)
		news = append(news, d.Site.Field+"="+d.New)
	}
	assert.Equal(t, []string{"name=" + want.Name, "namespace=mcp__lit"}, news)
	assert.Equal(t, 1, sp.Count(naming.ActRewrite))

	// Same call within the limit: nothing to do.
	line = `{"type":"response_item","payload":{"type":"function_call","name":"get_data","namespace":"mcp__lit__","call_id":"c1"}}`
	sp = planCodex(t, writeCodex(t, line), naming.Policy{})
	assert.Zero(t, sp.Count(naming.ActRewrite))
	assert.Zero(t, sp.Count(naming.ActKeep))
}
