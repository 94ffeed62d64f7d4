package rulefix

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/claude"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
)

// A missing rule file is skipped unless it was named explicitly (then it is a problem); a file
// whose rule is in a legacy spelling is planned, with its absolute path as the run's root.
func TestPlanMissingFilesAndALegacyRule(t *testing.T) {
	dir := t.TempDir()
	legacy := filepath.Join(dir, "settings.json")
	require.NoError(t, os.WriteFile(legacy, []byte(`{"permissions":{"deny":["mcp__foo.bar__deploy.prod"]}}`), 0o600))
	var probs []error
	rep, files := claude.PlanRuleFiles(context.Background(), []claude.ClaudeSource{
		{Path: filepath.Join(dir, "none.json"), Scope: permission.ClaudeScopeUser},
		{Path: filepath.Join(dir, "gone.json"), Scope: permission.ClaudeScopeProject, Explicit: true},
		{Path: legacy, Scope: permission.ClaudeScopeLocal},
	}, []mcpname.ClaudeTool{{Server: "foo.bar", Tool: "deploy.prod"}}, permission.ClaudeNewest(), false, func(err error) { probs = append(probs, err) })
	require.Len(t, probs, 1)
	assert.Contains(t, probs[0].Error(), "gone.json")
	assert.Equal(t, []string{legacy}, rep.Files)
	require.Len(t, rep.Rules, 1)
	assert.Equal(t, "mcp__foo.bar__deploy.prod", rep.Rules[0].Old)
	assert.NotEqual(t, rep.Rules[0].Old, rep.Rules[0].New)
	require.Len(t, files, 1)
	// A file without a rewrite is not a store of the plan.
	plans := []RuleFile{{Store: files[0].Store, Snap: files[0].Snap}}
	for _, f := range files {
		plans = append(plans, RuleFile{Store: f.Store, Snap: f.Snap, Decisions: f.Decisions, Rewrites: f.Rewrites})
	}
	p := Plan(plans)
	assert.Equal(t, 1, p.Rewrites)
	assert.Equal(t, []string{legacy}, p.Roots)
	require.Len(t, p.Plan.Stores, 1)
}
