package cline

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fixtures = "../../fixtures/cline-real/"

// fixtureSettings reads the recording's cline_mcp_settings.json (the 3.0.65 home's: the same
// file 2.18.0 wrote) and its raw tools (each server's TOOLS) in file order.
func fixtureSettings(t *testing.T) (Settings, []Tool) {
	t.Helper()
	b, err := os.ReadFile(fixtures + "dot-cline-data-after-3.0.65/settings/cline_mcp_settings.json")
	require.NoError(t, err)
	set, err := ParseSettings(b)
	require.NoError(t, err)
	var doc struct {
		MCPServers map[string]struct {
			Env map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	var tools []Tool
	for _, s := range set.Servers {
		for _, tl := range strings.Split(doc.MCPServers[s.Key].Env["TOOLS"], ",") {
			tools = append(tools, Tool{s.Key, tl})
		}
	}
	return set, tools
}

type tsvRow struct{ release, mode, server, tool, listed, outcome string }

func rulesTSV(t *testing.T) []tsvRow {
	t.Helper()
	b, err := os.ReadFile(fixtures + "rules.tsv")
	require.NoError(t, err)
	var out []tsvRow
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if i == 0 {
			continue
		}
		f := strings.Split(line, "\t")
		require.GreaterOrEqual(t, len(f), 6, line)
		out = append(out, tsvRow{f[0], f[1], f[2], f[3], f[4], f[5]})
	}
	return out
}

// releaseOf maps a rules.tsv row's release and mode to a Release.
func releaseOf(t *testing.T, r tsvRow) Release {
	switch {
	case r.release == "2.18.0" && strings.HasPrefix(r.mode, "interactive"):
		return Gen2Interactive
	case r.release == "2.18.0": // -y, and headless --json without -y
		return Gen2Yolo
	case r.release == "3.0.65" && strings.Contains(r.mode, "--acp"):
		return Gen3ACP
	case r.release == "3.0.65":
		return Gen3AutoApprove
	}
	t.Fatalf("unknown release %q %q", r.release, r.mode)
	return Release{}
}

// outcomeOf maps a rules.tsv outcome to an Outcome.
func outcomeOf(t *testing.T, s string) Outcome {
	switch s {
	case "ran", "ran unasked", "approved unasked":
		return Approved
	case "asked":
		return Asked
	case "not offered":
		return NotOffered
	}
	t.Fatalf("unknown outcome %q", s)
	return ""
}

// TestOutcomesAgainstTheRecording: every row of rules.tsv — one tool, or "*" for every tool
// of the settings (all, the listed ones, or the unlisted ones) — gets the recorded outcome.
func TestOutcomesAgainstTheRecording(t *testing.T) {
	set, tools := fixtureSettings(t)
	require.Len(t, tools, 11)
	assert.Equal(t, []string{"literature.search_pubmed", "get+data", "搜索文献", "search"}, set.Server("lit").AutoApprove)
	checked := 0
	for _, row := range rulesTSV(t) {
		r, want := releaseOf(t, row), outcomeOf(t, row.outcome)
		for _, tl := range tools {
			s := *set.Server(tl.Server)
			listed := false
			for _, a := range s.AutoApprove {
				listed = listed || a == tl.Tool
			}
			switch {
			case row.server != "*" && (row.server != tl.Server || row.tool != tl.Tool):
				continue
			case row.server == "*" && row.tool == "(listed tool)" && !listed,
				row.server == "*" && row.tool == "(unlisted tool)" && listed:
				continue
			case row.server == "*" && r.Generation == Gen2 && !offered2(tl.Tool):
				continue // the rows of 2.x are about the tools it offers
			}
			if row.server != "*" {
				assert.Equal(t, row.listed == "yes", listed, "%s/%s listed", tl.Server, tl.Tool)
			}
			assert.Equal(t, want, OutcomeOf(r, s, tl.Tool), "%s %s: %s/%s", row.release, row.mode, tl.Server, tl.Tool)
			checked++
		}
	}
	// 11 single rows + 9 offered (headless) + 4+1+1 listed and 1+1+1 unlisted offered
	// (interactive) + 11 + 11 (3.0.65).
	assert.Equal(t, 11+9+6+3+11+11, checked)
}

// TestTheUpgradeWidensTheAllowlist: 2.x interactive (the allowlist as meant) → 3.x with its
// default --auto-approve: the five tools the list did not approve (three unlisted, two not
// offered by 2.x) now run unasked: gained findings; the six listed ones stay approved.
func TestTheUpgradeWidensTheAllowlist(t *testing.T) {
	set, tools := fixtureSettings(t)
	outs := Compare(set, tools, Gen2Interactive, Gen3AutoApprove)
	require.Len(t, outs, 11)
	fs := Findings(outs, Gen2Interactive, Gen3AutoApprove)
	var gained []Tool
	for _, f := range fs {
		assert.Equal(t, "gained", f.Kind)
		assert.Equal(t, Approved, f.After)
		gained = append(gained, f.Tool)
	}
	assert.Equal(t, []Tool{
		{"lit", "literature_search_pubmed"},
		{"lit", "get_data_for_a_specific_location_and_date_range_extended"},
		{"lit", "query_documents_by_semantic_similarity_with_metadata_filters_and_reranking"},
		{"foo.bar", "get_data"},
		{"foo_bar", "deploy.prod"},
	}, gained)
	assert.Equal(t, "not in autoApprove of lit: asked under Cline 2.x (interactive); Cline 3.x (auto-approve) drops autoApprove, and auto-approve runs it unasked", fs[0].Reason)
	assert.Equal(t, NotOffered, fs[1].Before)
	assert.Equal(t, "", fs[1].Name2)
	assert.Equal(t, "lit__get_data_for_a_specific_location_and_date_range_extended", fs[1].Name3)
	for _, o := range outs {
		if o.Listed {
			assert.Equal(t, Approved, o.Before)
			assert.False(t, o.Gained)
		}
	}
	// ACP asks for everything: nothing gained, the listed ones lose their approval.
	assert.Empty(t, Findings(Compare(set, tools, Gen2Interactive, Gen3ACP), Gen2Interactive, Gen3ACP))
}

func TestCompareKeepsListedToolsNoServerLists(t *testing.T) {
	set := Settings{Servers: []Server{{Key: "s", AutoApprove: []string{"gone"}}, {Key: "off", Disabled: true, AutoApprove: []string{"x"}}}}
	outs := Compare(set, []Tool{{"s", "kept"}}, Gen2Interactive, Gen3AutoApprove)
	require.Len(t, outs, 3)
	assert.Equal(t, ToolOutcome{Tool: Tool{"s", "kept"}, Name2: "c?????0mcp0kept", Name3: "s__kept", Before: Asked, After: Approved, Gained: true}, outs[0])
	assert.True(t, outs[1].Unknown && outs[1].Listed)
	assert.Equal(t, Disabled, outs[2].After, "a disabled server stays disabled in 3.x")
	assert.False(t, outs[2].Gained)
}

func TestParseSettings(t *testing.T) {
	set, err := ParseSettings([]byte(`{"mcpServers": {"b": {"autoApprove": ["x"]}, "a": {"disabled": true}, "b": {"autoApprove": ["y"], "disabled": false}}}`))
	require.NoError(t, err)
	assert.Equal(t, Settings{Servers: []Server{{Key: "b", AutoApprove: []string{"y"}}, {Key: "a", Disabled: true}}}, set)
	set, err = ParseSettings([]byte(`{}`))
	require.NoError(t, err)
	assert.Empty(t, set.Servers)
	for _, bad := range []string{`[]`, `{"mcpServers": []}`, `{"mcpServers": {"a": {"autoApprove": "x"}}}`, `{"mcpServers": {"a": {"disabled": "yes"}}}`} {
		_, err := ParseSettings([]byte(bad))
		assert.ErrorIs(t, err, ErrBadSettings, bad)
	}
}
