package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/permission/rules"
	"github.com/sessionfix/sessionfix/reports"
)

// point is a rules.Semantics given as data.
type point struct {
	label string
	match map[[2]int]rules.Match
	out   []rules.Verdict
}

func (p point) Label() string                    { return p.label }
func (p point) Match(rule, tool int) rules.Match { return p.match[[2]int{rule, tool}] }
func (p point) Decide(tool int) rules.Verdict    { return p.out[tool] }

func sample() *rules.Audit {
	rs := []rules.Rule{
		{File: "/h/settings.json", Scope: "user", Key: "tools.exclude", Index: 0, Line: 3, Column: 20, Text: "foo__purge", Kind: "tools.exclude", Effect: rules.Restricts},
		{File: "/h/settings.json", Scope: "user", Key: "tools.allowed", Index: 0, Line: 4, Column: 20, Text: "mcp_foo_keep", Kind: "tools.allowed", Effect: rules.Grants},
	}
	tools := []rules.ToolInfo{{Tool: rules.Tool{Server: "foo", Tool: "purge"}, Source: "file"}, {Tool: rules.Tool{Server: "foo", Tool: "keep"}, Source: "file"}}
	now := point{label: "0.61.0", match: map[[2]int]rules.Match{{1, 1}: rules.Matched},
		out: []rules.Verdict{{Name: "mcp_foo_purge", Decision: "default", Rule: -1, Outcome: rules.Ran}, {Name: "mcp_foo_keep", Decision: "allow", Rule: 1, Outcome: rules.Ran}}}
	before := point{label: "0.32.1", match: map[[2]int]rules.Match{{0, 0}: rules.Matched},
		out: []rules.Verdict{{Name: "purge", Decision: "deny", Rule: 0, Outcome: rules.Hidden}, {Name: "keep", Decision: "default", Rule: -1, Outcome: rules.Ran}}}
	return &rules.Audit{ID: "acme", Name: "Acme CLI", Eval: rules.Evaluation{Rules: rs, Tools: tools, Now: now, Before: before,
		Findings: []rules.Finding{{Class: "deprecated", Level: "note", Rule: 0, Tool: -1, Message: "foo__purge is deprecated"}}},
		Words:     rules.Words{Outcome: [5]string{rules.Hidden: "hidden", rules.Block: "denied"}},
		Files:     []rules.File{{Path: "/h/settings.json", Scope: "user", Rules: 2}},
		Inventory: "file inv.json", Facts: []rules.Fact{{Key: "approval_mode", Label: "approval mode", Value: "yolo", Summary: true}}}
}

// TestBuildLostFirst: the lost exclude is the first pair of every document, reported lost with
// the agent's outcome words, the gained allow follows; SARIF has one lost (error), one gained
// (warning) and the finding; FailCounts counts them per class; the summary and the LOST line say
// the numbers and the releases.
func TestBuildLostFirst(t *testing.T) {
	r := Build(sample(), false, time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC), "test")
	require.Len(t, r.Pairs.Rows, 2)
	assert.Equal(t, []string{"/h/settings.json", "user", "tools.exclude", "0", "3", "foo__purge", "tools.exclude", "foo", "purge",
		"mcp_foo_purge", "purge", "no", "match", "lost"}, r.Pairs.Rows[0])
	assert.Equal(t, "gained", r.Pairs.Rows[1][len(PairColumns)-1])
	assert.Equal(t, []string{"foo", "purge", "file", "mcp_foo_purge", "purge", "default", "", "ran", "deny", "foo__purge", "hidden", "", ""}, r.Tools.Rows[0])

	var b bytes.Buffer
	require.NoError(t, reports.WriteJSON(&b, r.Document(json.RawMessage(`[]`))))
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	assert.True(t, strings.HasPrefix(b.String(), "{\n  \"lost_restrictions\": ["), b.String()[:60])
	var lost []DocPair
	require.NoError(t, json.Unmarshal(doc["lost_restrictions"], &lost))
	require.Len(t, lost, 1)
	assert.Equal(t, "foo__purge", lost[0].Rule)
	assert.Equal(t, "restricts", lost[0].Effect)
	assert.JSONEq(t, `{"rules":2,"tools":2,"pairs":2,"lost":1,"lost_restrictions":1,"gained":1,"refused":0,"changed_outcomes":1,"findings":1}`, string(doc["counts"]))
	assert.JSONEq(t, `[]`, string(doc["redispatch"]))

	// The JSON pairs give the SARIF fingerprints (--baseline from either format).
	known, err := ReadBaseline(b.Bytes())
	require.NoError(t, err)
	res := r.SARIF()
	require.Len(t, res, 3)
	assert.Equal(t, "sessionfix/audit/lost", res[0].RuleID)
	assert.Equal(t, "error", res[0].Level)
	assert.Contains(t, res[0].Message, `tools.exclude rule "foo__purge" (user tools.exclude[0]) lost tool purge (server foo): matched it under 0.32.1 (as purge) and matches nothing of it under 0.61.0 (as mcp_foo_purge); outcome now ran, before hidden.`)
	assert.True(t, known.Has(res[0].Fingerprint))
	assert.True(t, known.Has(res[1].Fingerprint))
	assert.Equal(t, "sessionfix/audit/deprecated", res[2].RuleID)
	assert.Equal(t, map[string]int{"lost": 1, "gained": 1, "deprecated": 1}, FailCounts(res))
	ids := []string{}
	for _, x := range r.SARIFRules() {
		ids = append(ids, x.ID)
	}
	assert.Equal(t, []string{"sessionfix/audit/lost", "sessionfix/audit/gained", "sessionfix/audit/refused", "sessionfix/audit/deprecated"}, ids)

	var s bytes.Buffer
	r.Summary(&s)
	assert.Equal(t, "audit: Acme CLI 0.61.0 (before: 0.32.1), approval mode yolo: 2 rules, 2 tools (inventory: file inv.json), 2 pairs listed: 1 lost (1 restriction), 1 gained, 0 refused; 1 tool with another outcome; 1 finding\n", s.String())
	assert.Equal(t, []string{`audit: LOST RESTRICTION: /h/settings.json:3:20 tools.exclude "foo__purge" no longer matches foo/purge (hidden under 0.32.1, ran under 0.61.0)`}, r.LostLines())

	var h bytes.Buffer
	require.NoError(t, reports.WriteHTML(&h, r.Page()))
	assert.Contains(t, h.String(), "Acme CLI 0.61.0 now, 0.32.1 before")
	assert.Contains(t, h.String(), "approval mode: yolo")
	assert.False(t, r.Partial())
}

// TestBuildLayout: an audit with its own layout (rules.Layout) gets its columns, its pair
// order (rule-major: Order{}), its JSON members in its order (facts, tool attributes, verdicts,
// counts of the pairs listed, members left out when empty), its page counts and wording, its
// SARIF words and message, the brief summary after its lead line and no LOST lines.
func TestBuildLayout(t *testing.T) {
	a := sample()
	a.Order = rules.Order{}
	a.Eval.Findings = nil
	a.Eval.Tools[0].Attrs = []rules.Fact{{Key: "aliases", Type: rules.List, List: []string{"p1", "p2"}}, {Key: "trusted", Type: rules.Flag, Flag: true}}
	a.Eval.Rules[1].Server = "foo"
	a.Facts = []rules.Fact{{Key: "mode", Value: "plan"}, {Key: "who", Value: ""}}
	a.Partial = true
	f := func(k string, c rules.Cell) rules.Field { return rules.Field{Key: k, Cell: c} }
	omit := func(k string, c rules.Cell) rules.Field { return rules.Field{Key: k, Cell: c, Omit: true} }
	a.Layout = &rules.Layout{
		PairColumns: []rules.Field{f("rule", rules.CellRule), f("tool", rules.CellTool), f("registered", rules.CellNameNow), f("change", rules.CellChange)},
		ToolColumns: []rules.Field{f("tool", rules.CellTool), f("rule_now", rules.CellRuleOrNoteNow), f("rule_before", rules.CellRuleOrNoteBefore), f("inventory", rules.CellSource)},
		Document: []rules.Field{f("mode", rules.CellFact), omit("who", rules.CellFact), f("counts", rules.CellCounts), f("rules", rules.CellRules),
			f("tools", rules.CellTools), f("errors", rules.CellErrors), f("redispatch", rules.CellRedispatch)},
		Count: []rules.Field{f("listed", rules.CellCountListed), f("refused", rules.CellCountRefused)},
		Rule:  []rules.Field{f("rule", rules.CellRule), omit("server", rules.CellRuleServer)},
		Tool: []rules.Field{f("tool", rules.CellTool), f("aliases", rules.CellAttr), omit("trusted", rules.CellAttr),
			f("now", rules.CellVerdictNow)},
		Verdict: []rules.Field{f("decision", rules.CellDecision), omit("rule_at", rules.CellDecidingRuleSite), omit("note", rules.CellNote)},
		Page: rules.Page{Title: "acme rules", Header: "mode plan", FilesLabel: "Settings", Files: "settings.json (user); extras",
			Counts: []rules.Cell{rules.CellCountRules, rules.CellCountRefused}, PairFacets: []string{"change"}, Notes: []string{"inferred"}},
		SARIF: []rules.SARIFText{{Class: "lost", Short: "a rule lost its tool", Full: "Lost."}},
		Message: func(class string, ru rules.Rule, tool rules.ToolResult, _ rules.Pair) string {
			return class + " " + ru.Text + " " + tool.Now.Name
		},
		Lead: []string{"audit: lead"}, Brief: true, NoLostLines: true,
	}
	r := Build(a, false, time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC), "test")
	assert.Equal(t, []string{"rule", "tool", "registered", "change"}, r.Pairs.Columns)
	assert.Equal(t, [][]string{{"foo__purge", "purge", "mcp_foo_purge", "lost"}, {"mcp_foo_keep", "keep", "mcp_foo_keep", "gained"}}, r.Pairs.Rows,
		"rule-major: the exclude (rule 0) before the allow")
	assert.Equal(t, [][]string{{"purge", "", "foo__purge", "file"}, {"keep", "mcp_foo_keep", "", "file"}}, r.Tools.Rows)

	var b bytes.Buffer
	x, ok := r.JSON(json.RawMessage(`[{"x":1}]`)).(json.Marshaler)
	require.True(t, ok)
	require.NoError(t, reports.WriteJSON(&b, x))
	assert.Equal(t, `{
  "mode": "plan",
  "counts": {
    "listed": 2,
    "refused": 0
  },
  "rules": [
    {
      "rule": "foo__purge"
    },
    {
      "rule": "mcp_foo_keep",
      "server": "foo"
    }
  ],
  "tools": [
    {
      "tool": "purge",
      "aliases": [
        "p1",
        "p2"
      ],
      "trusted": true,
      "now": {
        "decision": "default"
      }
    },
    {
      "tool": "keep",
      "aliases": "",
      "now": {
        "decision": "allow",
        "rule_at": "/h/settings.json:4:20 tools.allowed[0]"
      }
    }
  ],
  "errors": [],
  "redispatch": [
    {
      "x": 1
    }
  ]
}
`, b.String())

	res := r.SARIF()
	require.Len(t, res, 2)
	assert.Equal(t, "lost foo__purge mcp_foo_purge", res[0].Message)
	assert.Equal(t, "user tools.exclude[0] line 3", res[0].Finding.Site)
	assert.Equal(t, "a rule lost its tool", r.SARIFRules()[0].Short)
	assert.Equal(t, "AuditGained", r.SARIFRules()[1].Name)

	var s bytes.Buffer
	r.Summary(&s)
	assert.Equal(t, "audit: lead\naudit: 2 rules, 2 tools (inventory: file inv.json), 2 pairs listed: 1 lost, 1 gained, 0 refused\n", s.String())
	assert.Empty(t, r.LostLines())
	assert.True(t, r.Partial(), "Audit.Partial: an input not read beyond Problems")

	var h bytes.Buffer
	require.NoError(t, reports.WriteHTML(&h, r.Page()))
	page := h.String()
	assert.Contains(t, page, "<title>acme rules</title>")
	assert.Contains(t, page, "by sessionfix test; mode plan")
	assert.Contains(t, page, "Settings: settings.json (user); extras")
	assert.Contains(t, page, "inferred")
	assert.NotContains(t, page, "lost restrictions", "the layout's counts only")
}
