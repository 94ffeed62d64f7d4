package claude

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/owner/ownertest"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
)

// TestPlanRuleFilesAsRootRefusesALinkToAnotherUsersFile: as root (fix --rules over users'
// homes), a user's settings.json that is a link to another user's settings is not read, planned
// or rewritten: the link is followed only to what its owner owns (a problem names it). A link
// to a file of the link's owner is still followed (the file rewritten at its target). Before,
// the link was resolved with filepath.EvalSymlinks and the other user's rules were listed and
// rewritten by root (fix --rules --apply: the other user's file changed, in a directory the
// link's owner could not even read).
func TestPlanRuleFilesAsRootRefusesALinkToAnotherUsersFile(t *testing.T) {
	home, victim := ownertest.Homes(t)
	rules := []byte(`{"permissions":{"deny":["mcp__foo.bar__deploy.prod"]}}`)
	theirs := ownertest.File(t, filepath.Join(victim, "settings.json"), rules, 0o600, ownertest.Other)
	mine := ownertest.File(t, filepath.Join(home, "mine.json"), rules, 0o600, ownertest.User)
	link := filepath.Join(home, "settings.json")
	tools := []mcpname.ClaudeTool{{Server: "foo.bar", Tool: "deploy.prod"}}

	for _, tc := range []struct {
		target   string
		followed bool
	}{{theirs, false}, {mine, true}} {
		_ = os.Remove(link)
		ownertest.Link(t, tc.target, link, ownertest.User)
		var probs []error
		rep, files := PlanRuleFiles(context.Background(), []ClaudeSource{{Path: link, Scope: permission.ClaudeScopeUser}},
			tools, permission.ClaudeNewest(), false, func(err error) { probs = append(probs, err) })
		if tc.followed {
			require.Empty(t, probs)
			assert.Equal(t, []string{mine}, rep.Files, "a link to its owner's file is followed")
			require.Len(t, files, 1)
			assert.Equal(t, 1, files[0].Rewrites)
			continue
		}
		require.Len(t, probs, 1)
		assert.Contains(t, probs[0].Error(), link)
		assert.Contains(t, probs[0].Error(), "not followed")
		assert.Empty(t, rep.Files, "the other user's file is not read")
		assert.Empty(t, files, "nor planned")
	}
}
