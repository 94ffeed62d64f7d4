package gemini_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/gemini"
	"github.com/sessionfix/sessionfix/internal/owner"
)

// TestRuleFixAsRootRefusesALinkToAnotherUsersFile: as root, a user's ~/.gemini/settings.json
// linked to another user's settings is not read nor planned for rewriting (a problem names the
// refused link); before, root resolved the link with filepath.EvalSymlinks and planned (and
// with --apply made) the rewrite of the other user's file.
func TestRuleFixAsRootRefusesALinkToAnotherUsersFile(t *testing.T) {
	if !owner.AsRoot() {
		t.Skip("needs root: the link rule applies as root, and the test gives files to other users")
	}
	const user, other = 65534, 1234
	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o755))
	home, victim := filepath.Join(root, "home"), filepath.Join(root, "victim")
	g := filepath.Join(home, ".gemini")
	for _, d := range []string{home, g, victim} {
		require.NoError(t, os.Mkdir(d, 0o700))
		require.NoError(t, os.Chown(d, user, user))
	}
	require.NoError(t, os.Chown(victim, other, other))
	theirs := filepath.Join(victim, "settings.json")
	copyFile(t, fx+"rules/deny/settings.json", theirs)
	require.NoError(t, os.Chown(theirs, other, other))
	link := filepath.Join(g, "settings.json")
	require.NoError(t, os.Symlink(theirs, link))
	require.NoError(t, os.Lchown(link, user, user))
	inv := filepath.Join(t.TempDir(), "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers": {"foo.bar": {"tools": ["deploy.prod", "purge"]}}}`), 0o600))

	in := ruleFixInput(t, home, inv, agent.Values{gemini.BeforeOption: {"0.32.1"}})
	var probs []string
	in.Problem = func(err error) { probs = append(probs, err.Error()) }
	p, err := gemini.RuleFix.Plan(context.Background(), in)
	require.NoError(t, err)
	require.Len(t, probs, 1, "%v", probs)
	assert.True(t, strings.HasPrefix(probs[0], link+": "), probs[0])
	assert.Contains(t, probs[0], "not followed")
	for _, f := range p.Edits {
		assert.NotEqual(t, theirs, f.Path, "the other user's file is not planned")
	}
	assert.Empty(t, p.Edits)
}
