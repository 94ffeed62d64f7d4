package mcpname

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// realInventory is the MCP tool set of fixtures/qwen-real (README: lit, foo.bar,
// com.example.enterprise-search).
func realInventory() *Index {
	return NewIndex(
		Raw("lit", "literature.search_pubmed"), Raw("lit", "literature_search_pubmed"), Raw("lit", "get+data"),
		Raw("lit", "get_data_for_a_specific_location_and_date_range_extended"), Raw("lit", "搜索文献"), Raw("lit", "ok_tool"),
		Raw("foo.bar", "get_data"), Raw("foo.bar", "deploy.prod"),
		Raw("com.example.enterprise-search", "query_documents_by_semantic_similarity"), Raw("com.example.enterprise-search", "list"),
	)
}

func TestClassifyWithoutInventory(t *testing.T) {
	tests := []struct {
		name, in string
		class    Class
		reg      string
	}{
		{"builtin", "read_file", ClassBuiltin, "read_file"},
		{"bridge", "tool_call", ClassBuiltin, "tool_call"},
		{"builtin with dot is untouched", "my.tool", ClassBuiltin, "my.tool"},
		{"clean", "mcp__lit__ok_tool", ClassClean, "mcp__lit__ok_tool"},
		{"dotted", "mcp__lit__literature.search_pubmed", ClassLegacyDotted, "mcp__lit__literature_search_pubmed_1nv53db"},
		{"dotted server", "mcp__foo.bar__deploy.prod", ClassLegacyDotted, "mcp__foo_bar__deploy_prod_0tgvvnc"},
		{"over long safe", "mcp__srv__" + strings.Repeat("t", 54), ClassLegacyDotted, "mcp__srv__" + strings.Repeat("t", 45) + "_1dv04v0"},
		{"escaped-style unicode", "mcp__lit__搜索文献", ClassLegacyDotted, "mcp__lit_______0s19gpv"},
		{"truncated", "mcp__lit__get_data_for_a_spe___location_and_date_range_extended", ClassLegacyTruncated, "mcp__lit__get_data_for_a_spe___location_and_date_range_extended"},
		{"truncated dotted", "mcp__com.example.enterprise-___documents_by_semantic_similarity", ClassLegacyTruncatedDotted, "mcp__com_example_enterprise-___documents_by_semantic_si_0bznu1u"},
		{"lossy without inventory is clean", "mcp__lit__get_data", ClassClean, "mcp__lit__get_data"},
		{"normalized without inventory is clean", "mcp__lit__literature_search_pubmed_1nv53db", ClassClean, "mcp__lit__literature_search_pubmed_1nv53db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Classify(tt.in, nil)
			assert.Equal(t, tt.class, c.Class)
			assert.Equal(t, tt.reg, c.Registered)
		})
	}
}

func TestClassifyWithInventory(t *testing.T) {
	ix := realInventory()
	tests := []struct {
		name, in string
		class    Class
		owner    string
	}{
		{"lossy plus", "mcp__lit__get_data", ClassLossyLegacy, "mcp__lit__get+data"},
		{"lossy CJK", "mcp__lit______", ClassLossyLegacy, "mcp__lit__搜索文献"},
		{"normalized", "mcp__lit__literature_search_pubmed_1nv53db", ClassNormalized, "mcp__lit__literature.search_pubmed"},
		{"registered verbatim", "mcp__lit__literature_search_pubmed", ClassClean, "mcp__lit__literature_search_pubmed"},
		{"truncated with owner", "mcp__lit__get_data_for_a_spe___location_and_date_range_extended", ClassLegacyTruncated, "mcp__lit__get_data_for_a_specific_location_and_date_range_extended"},
		{"truncated dotted with owner", "mcp__com.example.enterprise-___documents_by_semantic_similarity", ClassLegacyTruncatedDotted, "mcp__com.example.enterprise-search__query_documents_by_semantic_similarity"},
		{"dotted with owner", "mcp__foo.bar__deploy.prod", ClassLegacyDotted, "mcp__foo.bar__deploy.prod"},
		{"unknown clean", "mcp__other__x", ClassClean, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Classify(tt.in, ix)
			assert.Equal(t, tt.class, c.Class)
			assert.Equal(t, tt.owner, c.Owner)
			if tt.owner != "" {
				assert.Equal(t, Normalize(tt.owner), c.OwnerRegistered)
			}
		})
	}
}

func TestClassifyAmbiguousLegacy(t *testing.T) {
	// foo.bar/get+data and foo_bar/get+data share no legacy; foo_bar/get+data and
	// foo_bar/get_data share "mcp__foo_bar__get_data" but the second registers it verbatim.
	ix := NewIndex(Raw("x", "a+b"), Raw("x", "a b"))
	c := Classify("mcp__x__a_b", ix)
	assert.Equal(t, ClassClean, c.Class)
	assert.Equal(t, 2, c.Ambiguous)
	assert.Empty(t, c.Owner)
}

func TestTruncationShapeBoundaries(t *testing.T) {
	base := "mcp__weather-forecast-premiu___nded_forecast_for_the_next_weeks"
	assert.True(t, IsTruncationShape(base))
	assert.False(t, IsTruncationShape(base[:62]))
	assert.False(t, IsTruncationShape(strings.Replace(base, "___", "_x_", 1)))
	assert.True(t, HasHashSuffix("mcp__lit_______0s19gpv"))
	assert.False(t, HasHashSuffix("mcp__lit__ok_tool"))
	assert.False(t, HasHashSuffix("mcp__lit__x_0S19GPV"))
}

func TestIndexExtendSharesAndDedupes(t *testing.T) {
	base := realInventory()
	ext := base.Extend(Raw("lit", "literature.search_pubmed"), Raw("new", "a.b"))
	assert.Equal(t, base.Len()+1, ext.Len(), "a raw identity already in the parent is not added twice")
	assert.Equal(t, []string{"mcp__lit__literature.search_pubmed"}, ext.RegisteredBy("mcp__lit__literature_search_pubmed_1nv53db"))
	assert.Equal(t, []string{"mcp__new__a.b"}, ext.LegacyOf("mcp__new__a.b"))
	assert.Empty(t, base.LegacyOf("mcp__new__a.b"), "the parent is not modified")
	assert.Equal(t, ClassNormalized, Classify(Normalize("mcp__new__a.b"), ext).Class)
}

func TestRejectReasons(t *testing.T) {
	for name, want := range map[string][]string{
		"mcp__lit__search":                     nil,
		"mcp__foo.bar__get_data":               {ReasonDot},
		"mcp__文献__搜索":                          {ReasonNonASCII},
		"mcp__lit__a b":                        {ReasonSpace},
		"mcp__lit/x__y":                        {ReasonSymbol},
		"mcp__" + strings.Repeat("a", 60):      {ReasonLong},
		"mcp__a.b__é":                          {ReasonDot, ReasonNonASCII},
		"mcp__a.b__" + strings.Repeat("x", 60): {ReasonDot, ReasonLong},
	} {
		assert.Equal(t, want, RejectReasons(name), name)
	}
}
