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
	"github.com/sessionfix/sessionfix/internal/owner/ownertest"
)

// TestRuleFixAsRootRefusesALinkToAnotherUsersFile: as root, a user's ~/.gemini/settings.json
// linked to another user's settings is not read nor planned for rewriting (a problem names the
// refused link); before, root resolved the link with filepath.EvalSymlinks and planned (and
// with --apply made) the rewrite of the other user's file.
func TestRuleFixAsRootRefusesALinkToAnotherUsersFile(t *testing.T) {
	home, victim := ownertest.Homes(t)
	g := filepath.Join(home, ".gemini")
	ownertest.Dir(t, g, ownertest.User)
	rules, err := os.ReadFile(fx + "rules/deny/settings.json")
	require.NoError(t, err)
	theirs := ownertest.File(t, filepath.Join(victim, "settings.json"), rules, 0o600, ownertest.Other)
	link := ownertest.Link(t, theirs, filepath.Join(g, "settings.json"), ownertest.User)
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
