package rulefix

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/store/claude"
)

// A missing rule file is skipped unless it was named explicitly (then it is a problem); a file
// whose rule is in a legacy spelling is planned, with its absolute path as the run's root.
func TestPlanMissingFilesAndALegacyRule(t *testing.T) {
	dir := t.TempDir()
	legacy := filepath.Join(dir, "settings.json")
	require.NoError(t, os.WriteFile(legacy, []byte(`{"permissions":{"deny":["mcp__foo.bar__deploy.prod"]}}`), 0o600))
	var probs []error
	p := Plan(context.Background(), []claude.ClaudeSource{
		{Path: filepath.Join(dir, "none.json"), Scope: permission.ClaudeScopeUser},
		{Path: filepath.Join(dir, "gone.json"), Scope: permission.ClaudeScopeProject, Explicit: true},
		{Path: legacy, Scope: permission.ClaudeScopeLocal},
	}, []mcpname.ClaudeTool{{Server: "foo.bar", Tool: "deploy.prod"}}, permission.ClaudeNewest(), false, func(err error) { probs = append(probs, err) })
	require.Len(t, probs, 1)
	assert.Contains(t, probs[0].Error(), "gone.json")
	assert.Equal(t, []string{legacy}, p.Report.Files)
	require.Len(t, p.Report.Rules, 1)
	assert.Equal(t, "mcp__foo.bar__deploy.prod", p.Report.Rules[0].Old)
	assert.NotEqual(t, p.Report.Rules[0].Old, p.Report.Rules[0].New)
	assert.Equal(t, 1, p.Rewrites)
	assert.Equal(t, []string{legacy}, p.Roots)
	require.Len(t, p.Plan.Stores, 1)
}
