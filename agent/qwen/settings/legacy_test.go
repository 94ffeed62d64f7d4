package settings

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpname"
)

// fixtureIndex is the raw identities of fixtures/qwen-settings/inventory.json.
func fixtureIndex() *mcpname.Index {
	ix := mcpname.NewIndex()
	for server, tools := range map[string][]string{
		"lit": {"literature.search_pubmed", "literature_search_pubmed", "get+data",
			"get_data_for_a_specific_location_and_date_range_extended", "搜索文献", "ok_tool"},
		"foo.bar":                       {"get_data", "deploy.prod"},
		"foo_bar":                       {"get_data", "evil"},
		"com.example.enterprise-search": {"query_documents_by_semantic_similarity", "list"},
	} {
		for _, tool := range tools {
			ix.Add(mcpname.Raw(server, tool))
		}
	}
	return ix
}

type legacyRow struct {
	key        string
	index      int
	reason     LegacyReason
	owners     []string
	registered []string
}

func legacyRows(list []LegacyRule) []legacyRow {
	var out []legacyRow
	for _, l := range list {
		out = append(out, legacyRow{l.Rule.Key, l.Rule.Index, l.Reason, l.Owners, l.Registered})
	}
	return out
}

func TestLegacyRulesOnFixtures(t *testing.T) {
	user, _ := loadFixture(t, fixtureUser, ScopeUser, nil)
	ws, _ := loadFixture(t, fixtureWorkspace, ScopeWorkspace, nil)
	agent, err := LoadAgent(fixtureAgent)
	require.NoError(t, err)
	rules := append(append(append([]Rule{}, user.Rules...), ws.Rules...), agent.DisallowedTools...)

	t.Run("with the inventory", func(t *testing.T) {
		assert.Equal(t, []legacyRow{
			{"permissions.allow", 0, LegacyUnsafe, []string{"mcp__lit__literature.search_pubmed"},
				[]string{"mcp__lit__literature_search_pubmed_1nv53db"}},
			{"permissions.allow", 1, LegacyUnsafe, nil, nil}, // mcp__foo.bar: a server rule
			{"permissions.allow", 2, LegacyUnsafe,
				[]string{"mcp__com.example.enterprise-search__query_documents_by_semantic_similarity"},
				[]string{"mcp__com_example_enterprise-search__query_documents_by__10hvo5y"}},
			{"permissions.deny", 0, LegacyUnsafe, []string{"mcp__foo.bar__deploy.prod"},
				[]string{"mcp__foo_bar__deploy_prod_0tgvvnc"}},
			{"permissions.deny", 1, LegacyOfKnown,
				[]string{"mcp__lit__get_data_for_a_specific_location_and_date_range_extended"},
				[]string{"mcp__lit__get_data_for_a_specific_location_and_date_ran_1r1v6mz"}},
			{"tools.exclude", 0, LegacyOfKnown, []string{"mcp__lit__搜索文献"}, []string{"mcp__lit_______0s19gpv"}},
			{"tools.disabled", 0, LegacyUnsafe, []string{"mcp__foo.bar__get_data"}, []string{"mcp__foo_bar__get_data_0xybsnb"}},
			{"disallowedTools", 0, LegacyUnsafe, nil, nil},
			{"disallowedTools", 1, LegacyUnsafe, []string{"mcp__com.example.enterprise-search__list"},
				[]string{mcpname.Normalize("mcp__com.example.enterprise-search__list")}},
		}, legacyRows(LegacyRules(rules, fixtureIndex())))
	})

	t.Run("without an inventory only unsafe names are found", func(t *testing.T) {
		got := LegacyRules(rules, nil)
		var names []string
		for _, l := range got {
			assert.Equal(t, LegacyUnsafe, l.Reason)
			assert.Empty(t, l.Owners)
			names = append(names, l.Name)
		}
		assert.Equal(t, []string{
			"mcp__lit__literature.search_pubmed",
			"mcp__foo.bar",
			"mcp__com.example.enterprise-___documents_by_semantic_similarity",
			"mcp__foo.bar__deploy.prod",
			"mcp__foo.bar__get_data",
			"mcp__foo.bar",
			"mcp__com.example.enterprise-search__list",
		}, names)
		assert.Equal(t, []string{"mcp__lit__literature_search_pubmed_1nv53db"}, got[0].Registered,
			"without an owner, the registered name is NormalizeMcp of the rule's name")
	})
}

func TestLegacyRulesShapes(t *testing.T) {
	ix := fixtureIndex()
	tests := []struct {
		rule   string
		kind   Kind
		reason LegacyReason // "" = not legacy
		name   string
	}{
		{"mcp__lit__get_data", KindAllow, LegacyOfKnown, "mcp__lit__get_data"},
		{"  mcp__lit__get_data  ", KindAsk, LegacyOfKnown, "mcp__lit__get_data"},
		{"mcp__foo.bar__*", KindDeny, LegacyUnsafe, "mcp__foo.bar__"},
		{"mcp__foo.bar__get_data(x)", KindDeny, LegacyUnsafe, "mcp__foo.bar__get_data"},
		{"mcp__lit__*", KindAllow, "", "mcp__lit__"},
		{"mcp__lit__literature_search_pubmed", KindAllow, "", ""},        // a real tool's registered name
		{"mcp__foo_bar__get_data", KindAllow, "", ""},                    // registered by foo_bar/get_data
		{"mcp__lit__literature_search_pubmed_1nv53db", KindDeny, "", ""}, // current name
		{"Bash(rm -rf *)", KindDeny, "", ""},
		{"mcp__x.y__z", KindIncludeTools, "", ""}, // raw names are never legacy
		{"mcp__x.y__z", KindMCPAllowed, "", ""},
		{"mcp__x.y__z", KindCore, "", ""},
		{"mcp__x.y__z", KindDisallowed, LegacyUnsafe, "mcp__x.y__z"},
	}
	for _, tt := range tests {
		t.Run(tt.rule+" "+string(tt.kind), func(t *testing.T) {
			got := LegacyRules([]Rule{{Kind: tt.kind, Literal: tt.rule, Expanded: tt.rule}}, ix)
			if tt.reason == "" {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			assert.Equal(t, tt.reason, got[0].Reason)
			assert.Equal(t, tt.name, got[0].Name)
		})
	}
}

func TestRuleToolName(t *testing.T) {
	for in, want := range map[string]string{
		"mcp__a__b":       "mcp__a__b",
		" mcp__a__b* ":    "mcp__a__b",
		"mcp__a__b (x)":   "mcp__a__b",
		"Bash(git:*)":     "Bash",
		"*":               "",
		"mcp__a__b()":     "mcp__a__b",
		"mcp__a(x)__b(y)": "mcp__a",
	} {
		assert.Equal(t, want, RuleToolName(in), in)
	}
}
