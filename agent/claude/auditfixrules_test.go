package claude

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/permission"
)

// PlanRuleFiles gives one plan per rule file read, in source order: a legacy-spelled rule is a
// rewrite decision at its string token with now's spelling; a file whose rules are already in
// now's spelling is read (listed in Files) and plans nothing.
func TestPlanRuleFiles(t *testing.T) {
	dir := t.TempDir()
	legacy, current := filepath.Join(dir, "legacy.json"), filepath.Join(dir, "current.json")
	require.NoError(t, os.WriteFile(legacy, []byte(`{"permissions":{"deny":["mcp__foo.bar__deploy.prod"]}}`), 0o600))
	require.NoError(t, os.WriteFile(current, []byte(`{"permissions":{"deny":["mcp__foo_bar__deploy_prod"]}}`), 0o600))
	var probs []error
	rep, files := PlanRuleFiles(context.Background(), []ClaudeSource{
		{Path: current, Scope: permission.ClaudeScopeUser},
		{Path: legacy, Scope: permission.ClaudeScopeLocal},
	}, []mcpname.ClaudeTool{{Server: "foo.bar", Tool: "deploy.prod"}}, permission.ClaudeNewest(), false, func(err error) { probs = append(probs, err) })
	require.Empty(t, probs)
	assert.Equal(t, []string{current, legacy}, rep.Files)
	require.Len(t, files, 2)
	assert.Equal(t, current, files[0].Store.Ref().Path)
	assert.Zero(t, files[0].Rewrites)
	assert.Empty(t, files[0].Decisions)
	require.Len(t, files[1].Decisions, 1)
	d := files[1].Decisions[0]
	assert.Equal(t, 1, files[1].Rewrites)
	assert.Equal(t, naming.ActRewrite, d.Action)
	assert.Equal(t, "mcp__foo_bar__deploy_prod", d.New)
	assert.Equal(t, `"mcp__foo.bar__deploy.prod"`, string(d.Site.Raw))
	assert.Equal(t, ClassClaudeLegacyRule, d.Class)
	require.Len(t, rep.Rules, 1)
	assert.Equal(t, "mcp__foo.bar__deploy.prod", rep.Rules[0].Old)
}
