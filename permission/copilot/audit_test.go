package copilot

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/permission/rules"
)

// TestAuditEvaluationDenyRaw: the recording's deny-raw case on the shared layer, 1.0.102 now and
// 1.0.39 before. rules.tsv: 1.0.39 denied literature.search_pubmed, get+data and 搜索文献 of lit
// and deploy.prod of foo.bar (matched; a call reached none of them: 1.0.39's dispatch rewrite);
// 1.0.102 ran all four (the deny compares the raw tool part with the sanitized one). The four
// are the lost restrictions, listed first, each also a never-matches finding; every 1.0.102
// outcome is the recording's.
func TestAuditEvaluationDenyRaw(t *testing.T) {
	var flags string
	for _, c := range readMatrix(t) {
		if c.name == "deny-raw" {
			flags = c.flags
		}
	}
	require.NotEmpty(t, flags)
	s, _ := setupOf(t, flags)
	res := rules.Evaluate(AuditEvaluation(AuditInput{Tools: s.Tools, Rules: s.Rules, AllowAll: s.AllowAll},
		mustRelease(t, "1.0.102"), mustRelease(t, "1.0.39")), rules.LostFirst)
	var lost []string
	for _, p := range res.LostRestrictions() {
		tr := res.Tools[p.Tool]
		lost = append(lost, fmt.Sprintf("%s %s %s->%s", res.Rules[p.Rule].Text, tr.Tool, Words.OfOutcome(tr.Before.Outcome), Words.OfOutcome(tr.Now.Outcome)))
	}
	sort.Strings(lost)
	assert.Equal(t, []string{
		"foo.bar(deploy.prod) foo.bar/deploy.prod denied->ran",
		"lit(get+data) lit/get+data denied->ran",
		"lit(literature.search_pubmed) lit/literature.search_pubmed denied->ran",
		"lit(搜索文献) lit/搜索文献 denied->ran",
	}, lost)
	assert.Equal(t, permission.ChangeLost, res.Pairs[0].Change)
	assert.Equal(t, 4, res.Counts.LostRestrictions)
	var never []string
	for _, f := range res.Findings {
		if f.Class == "never-matches" {
			never = append(never, res.Rules[f.Rule].Text)
		}
	}
	sort.Strings(never)
	assert.Equal(t, []string{"foo.bar(deploy.prod)", "lit(get+data)", "lit(literature.search_pubmed)", "lit(搜索文献)"}, never)
	// The recorded 1.0.102 outcome of every called tool is the verdict's word.
	checked := 0
	got := map[string]string{}
	for _, tr := range res.Tools {
		got[tr.Tool.String()] = Words.OfOutcome(tr.Now.Outcome)
	}
	for _, c := range readMatrix(t) {
		if c.name != "deny-raw" || c.release != "1.0.102" {
			continue
		}
		for _, row := range c.rows {
			f := strings.Split(row, "\t")
			if w, ok := got[f[0]+"/"+f[1]]; ok {
				assert.Equal(t, f[3], w, row)
				checked++
			}
		}
	}
	assert.Equal(t, 11, checked)
}

func mustRelease(t *testing.T, v string) Release {
	t.Helper()
	r, err := ReleaseOf(v)
	require.NoError(t, err)
	return r
}

// TestAuditEvaluationPerRun: each copilot command line is its own run. A script whose first line
// denies lit(ok_tool) without allowing every tool and whose second line allows every tool
// without that deny runs ok_tool on its second line, under both releases: the audit says so (ran,
// in the run at ci.sh:3:1). Taken together (the old evaluation) the deny of the first line and
// the --allow-all-tools of the second made it "denied", an outcome of no run that lets it run.
// Red before: both outcomes were denied.
func TestAuditEvaluationPerRun(t *testing.T) {
	src := []byte("#!/bin/sh\ncopilot -p x --deny-tool 'lit(ok_tool)'\ncopilot -p y --allow-all-tools\n")
	invs, problems := ExtractShell("ci.sh", src)
	require.Empty(t, problems)
	require.Len(t, invs, 2)
	in := AuditInput{Tools: []Tool{{Server: "lit", Tool: "ok_tool"}, {Server: "lit", Tool: "fetch"}}}
	var runs []Run
	for k, iv := range invs {
		in.Rules = append(in.Rules, iv.Rules...)
		in.AllowAll = in.AllowAll || iv.AllowAll
		runs = append(runs, Run{Key: InvocationKey("ci.sh", k), AllowAll: iv.AllowAll, Where: iv.Pos.String()})
	}
	in.Runs = RunsOf(in.Rules, runs, false)
	assert.Equal(t, []Run{{Rules: []int{0}, Where: "ci.sh:2:1", Key: "ci.sh#0"}, {AllowAll: true, Where: "ci.sh:3:1", Key: "ci.sh#1"}}, in.Runs)
	res := rules.Evaluate(AuditEvaluation(in, mustRelease(t, "1.0.102"), mustRelease(t, "1.0.39")), rules.LostFirst)
	for _, tr := range res.Tools {
		assert.Equal(t, "ran->ran", Words.OfOutcome(tr.Before.Outcome)+"->"+Words.OfOutcome(tr.Now.Outcome), tr.Tool)
		assert.Contains(t, tr.Now.Note, "in the run at ci.sh:3:1")
	}
	// Without the runs (every rule together, as before): denied.
	in.Runs = nil
	res = rules.Evaluate(AuditEvaluation(in, mustRelease(t, "1.0.102"), mustRelease(t, "1.0.39")), rules.LostFirst)
	assert.Equal(t, "denied->denied", Words.OfOutcome(res.Tools[0].Before.Outcome)+"->"+Words.OfOutcome(res.Tools[0].Now.Outcome))
}
