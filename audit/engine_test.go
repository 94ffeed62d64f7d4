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
