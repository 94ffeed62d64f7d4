package claude

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/owner"
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
	if !owner.AsRoot() {
		t.Skip("needs root: the link rule applies as root, and the test gives files to other users")
	}
	const user, other = 65534, 1234
	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o755))
	home, victim := filepath.Join(root, "home"), filepath.Join(root, "victim")
	for _, d := range []string{home, victim} {
		require.NoError(t, os.Mkdir(d, 0o700))
	}
	require.NoError(t, os.Chown(home, user, user))
	require.NoError(t, os.Chown(victim, other, other))
	rules := []byte(`{"permissions":{"deny":["mcp__foo.bar__deploy.prod"]}}`)
	theirs, mine := filepath.Join(victim, "settings.json"), filepath.Join(home, "mine.json")
	require.NoError(t, os.WriteFile(theirs, rules, 0o600))
	require.NoError(t, os.Chown(theirs, other, other))
	require.NoError(t, os.WriteFile(mine, rules, 0o600))
	require.NoError(t, os.Chown(mine, user, user))
	link := filepath.Join(home, "settings.json")
	tools := []mcpname.ClaudeTool{{Server: "foo.bar", Tool: "deploy.prod"}}

	for _, tc := range []struct {
		target   string
		followed bool
	}{{theirs, false}, {mine, true}} {
		_ = os.Remove(link)
		require.NoError(t, os.Symlink(tc.target, link))
		require.NoError(t, os.Lchown(link, user, user))
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
