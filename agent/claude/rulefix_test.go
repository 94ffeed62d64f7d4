package claude

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/usage"
)

// TestRuleFixPlan: the room's fix --rules hook on the fixture's user and lab rule files plans
// the three legacy-spelled rules (neutral rows: where, old → new, kept or rewritten, what each
// matched), hands out the rule files with their edits, and builds the JSON report with the
// mode, run, outcomes and problems fix gives it; a bad --claude-version is a usage error.
func TestRuleFixPlan(t *testing.T) {
	in := agent.RuleFixInput{Env: agent.Env{Getenv: func(string) string { return "" }, Home: t.TempDir()},
		Inventory: "../../fixtures/claude-audit/inventory.json", Paths: []string{claudeReal + "dot-claude", claudeReal + "project-settings/lab"},
		Cwd: t.TempDir(), Options: agent.Values{ProjectKeyOption: {"/home/demo/src/lab"}},
		Problem: func(err error) { t.Errorf("problem: %v", err) }, Note: func(string) {}, Warn: func(string) {}}
	p, err := Agent.(agent.RuleFixer).RuleFix().Plan(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, "2.1.332", p.Version)
	require.Len(t, p.Changes, 3)
	c := p.Changes[0]
	assert.Equal(t, []any{4, 14, "user", "permissions.deny", 0, "mcp__foo.bar__deploy.prod", "mcp__foo_bar__deploy_prod", true, "raw"},
		[]any{c.Line, c.Column, c.Scope, c.Key, c.Index, c.Old, c.New, c.Rewrite, c.WrittenFor})
	assert.Equal(t, []string{"foo.bar/deploy.prod"}, c.Before)
	assert.Len(t, c.Overrides, 1)
	rewrites := 0
	for _, f := range p.Files {
		rewrites += f.Rewrites
	}
	assert.Equal(t, 3, rewrites)
	b, err := json.Marshal(p.Report("apply", "RUN", []agent.RuleOutcome{{File: "f", Status: "rewritten", Rules: 2}}, []string{"bad file"}))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"claude_version":"2.1.332"`)
	assert.Contains(t, string(b), `"mode":"apply","run":"RUN","outcomes":[{"file":"f","status":"rewritten","rules":2}],"errors":["bad file"]}`)

	in.Options = agent.Values{VersionOption: {"x"}}
	_, err = Agent.(agent.RuleFixer).RuleFix().Plan(context.Background(), in)
	require.Error(t, err)
	assert.True(t, errors.As(err, new(*usage.Error)), "%v", err)
	assert.Contains(t, err.Error(), "--claude-version: ")
}
