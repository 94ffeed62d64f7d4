package gemini

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/permission/rules"
)

// TestAuditEvaluationDenyLost: the recording's deny case (yolo, headless) on the shared layer,
// 0.61.0 now and 0.32.1 before: every (rule, tool) the recording saw restrict on 0.32.1 and run
// on 0.61.0 is a lost restriction, listed first; the tools' outcomes are the recording's.
func TestAuditEvaluationDenyLost(t *testing.T) {
	c := caseConfig(t, rulesDir+"deny")
	c.Mode = ModeYolo
	res := rules.Evaluate(AuditEvaluation(c, Latest, MustRelease("0.32.1")), rules.LostFirst)
	var lost []string
	for _, p := range res.LostRestrictions() {
		lost = append(lost, fmt.Sprintf("%s -> %s", res.Rules[p.Rule].Text, res.Tools[p.Tool].Tool))
	}
	t.Log(lost)
	// Rows of outcomes.json (case deny) restricted on 0.32.1 and ran on 0.61.0.
	want := map[string]bool{}
	for _, row := range readOutcomes(t) {
		if row.Case != "deny" || row.Outcome["0.32.1"] == nil || row.Outcome["0.61.0"] == nil {
			continue
		}
		if *row.Outcome["0.32.1"] != "ran" && *row.Outcome["0.61.0"] == "ran" {
			want[row.Server+"/"+row.Tool] = true
		}
	}
	got := map[string]bool{}
	for _, p := range res.LostRestrictions() {
		got[res.Tools[p.Tool].Tool.String()] = true
		assert.Equal(t, rules.Ran, res.Tools[p.Tool].Now.Outcome)
		assert.NotEqual(t, rules.Ran, res.Tools[p.Tool].Before.Outcome)
	}
	assert.Equal(t, want, got)
	require.NotEmpty(t, res.Pairs)
	assert.Equal(t, permission.ChangeLost, res.Pairs[0].Change)
	assert.Equal(t, "0.61.0", res.Now)
	assert.Equal(t, "0.32.1", res.Before)
	assert.Equal(t, len(got), res.Counts.LostRestrictions-dupLost(res))
}

// dupLost counts lost restrictions beyond the first per tool (two rules lost on one tool).
func dupLost(res *rules.Result) int {
	seen := map[int]bool{}
	n := 0
	for _, p := range res.LostRestrictions() {
		if seen[p.Tool] {
			n++
		}
		seen[p.Tool] = true
	}
	return n
}

// TestAuditEvaluationRewrites: every lost restriction of the deny case gets a "rewrite" finding
// with the spelling PlanMigration gives; applying those edits (ApplyEdits) to the files and
// auditing again loses nothing: the rules restrict under 0.61.0 what they restricted under 0.32.1.
func TestAuditEvaluationRewrites(t *testing.T) {
	c := caseConfig(t, rulesDir+"deny")
	c.Mode = ModeYolo
	res := rules.Evaluate(AuditEvaluation(c, Latest, MustRelease("0.32.1")), rules.LostFirst)
	rewritten := map[int]bool{}
	for _, f := range res.Findings {
		if f.Class == "rewrite" {
			rewritten[f.Rule] = true
			assert.Contains(t, f.Message, "when written")
		}
	}
	require.NotEmpty(t, res.LostRestrictions())
	for _, p := range res.LostRestrictions() {
		assert.True(t, rewritten[p.Rule], "lost %s has a rewrite finding", res.Rules[p.Rule].Text)
	}
	plan := PlanMigration(Migration{From: MustRelease("0.32.1"), To: Latest, Mode: ModeYolo, Settings: c.Settings, Policies: c.Policies, Tools: c.Tools})
	edits := map[string][]Edit{}
	for _, rw := range plan {
		if !rw.Held {
			edits[rw.File] = append(edits[rw.File], rw.Edits...)
		}
	}
	require.NotEmpty(t, edits)
	apply := func(path string, data []byte) []byte {
		if e := edits[path]; len(e) > 0 {
			out, err := ApplyEdits(data, e)
			require.NoError(t, err)
			return out
		}
		return data
	}
	after := Config{Mode: ModeYolo, Tools: c.Tools}
	for _, sf := range c.Settings {
		nf, err := ParseSettings(sf.Path, apply(sf.Path, sf.Data), sf.Scope)
		require.NoError(t, err)
		after.Settings = append(after.Settings, nf)
	}
	for _, pf := range c.Policies {
		after.Policies = append(after.Policies, ParsePolicy(pf.Path, apply(pf.Path, pf.Data), pf.Scope))
	}
	res2 := rules.Evaluate(AuditEvaluation(after, Latest, MustRelease("0.32.1")), rules.LostFirst)
	assert.Zero(t, res2.Counts.LostRestrictions, "after the migration nothing is lost")
	for _, tr := range res2.Tools {
		if tr.Before.Outcome != rules.Ran {
			assert.NotEqual(t, rules.Ran, tr.Now.Outcome, "%s restricted under 0.32.1 is restricted under 0.61.0", tr.Tool)
		}
	}
}
