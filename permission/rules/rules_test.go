package rules

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/permission"
)

// table is a Semantics given as data: match[rule][tool] and verdicts per tool.
type table struct {
	label    string
	match    [][]Match
	verdicts []Verdict
	calls    int
}

func (t *table) Label() string              { return t.label }
func (t *table) Match(rule, tool int) Match { t.calls++; return t.match[rule][tool] }
func (t *table) Decide(tool int) Verdict    { return t.verdicts[tool] }

// TestEvaluateLostFirst: a deny that matched before and no longer does is the first pair; an
// allow lost follows; a gained pair next; a refused (NotApplied) grant counts as not matching
// and as refused; counts and changed outcomes are real values.
func TestEvaluateLostFirst(t *testing.T) {
	e := Evaluation{
		Rules: []Rule{
			{Text: "allow-x", Effect: Grants},
			{Text: "deny-y", Effect: Restricts},
			{Text: "allow-z", Effect: Grants},
		},
		Tools: []ToolInfo{{Tool: Tool{"s", "x"}}, {Tool: Tool{"s", "y"}}, {Tool: Tool{"s", "z"}}},
	}
	now := &table{label: "2", match: [][]Match{
		{No, No, No},
		{No, No, No},
		{No, No, NotApplied},
	}, verdicts: []Verdict{{Rule: -1, Outcome: Ask}, {Rule: -1, Outcome: Ran}, {Rule: -1, Outcome: Ask}}}
	before := &table{label: "1", match: [][]Match{
		{Matched, No, No},
		{No, Matched, No},
		{No, No, No},
	}, verdicts: []Verdict{{Rule: 0, Outcome: Ran}, {Rule: 1, Outcome: Hidden}, {Rule: -1, Outcome: Ask}}}
	e.Now, e.Before = now, before
	res := Evaluate(e, LostFirst)
	require.Len(t, res.Pairs, 9)
	assert.Equal(t, Pair{Rule: 1, Tool: 1, Now: No, Before: Matched, Change: permission.ChangeLost}, res.Pairs[0])
	assert.Equal(t, Pair{Rule: 0, Tool: 0, Now: No, Before: Matched, Change: permission.ChangeLost}, res.Pairs[1])
	assert.Equal(t, Pair{Rule: 2, Tool: 2, Now: NotApplied, Before: No, Change: permission.ChangeSame}, res.Visible(false)[2])
	assert.Equal(t, Counts{Rules: 3, Tools: 3, Pairs: 3, Lost: 2, LostRestrictions: 1, NotApplied: 1, Changed: 2}, res.Counts)
	assert.Equal(t, []Pair{res.Pairs[0]}, res.LostRestrictions())
	assert.Len(t, res.Visible(false), 3)
	assert.Len(t, res.Visible(true), 9)
	assert.Equal(t, 9, now.calls, "Match once per pair and point")
	assert.Equal(t, "2", res.Now)
	assert.Equal(t, "1", res.Before)

	// Gained: only now matches.
	now.match[0][0], before.match[0][0] = Matched, No
	res = Evaluate(e, LostFirst)
	assert.Equal(t, permission.ChangeGained, res.Pairs[1].Change)
	assert.Equal(t, 1, res.Counts.Gained)
	// nil order: rule-major.
	res = Evaluate(e, nil)
	assert.Equal(t, 0, res.Pairs[0].Rule)
}

func TestWords(t *testing.T) {
	w := Words{Outcome: [5]string{Hidden: "hidden"}}
	assert.Equal(t, "hidden", w.OfOutcome(Hidden))
	assert.Equal(t, "block", w.OfOutcome(Block))
	assert.Equal(t, "refused", w.OfMatch(NotApplied))
}
