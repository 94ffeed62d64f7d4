package copilot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/owner/ownertest"
)

// TestRuleFixAsRootRefusesALinkToAnotherUsersFile: as root, a rule file reached through a
// user's link to another user's file (here a --rules-from script in the user's home) is not
// read nor planned for rewriting: a problem names the refused link. Before, the link was
// resolved with filepath.EvalSymlinks and root planned (and with --apply made) the rewrite of
// the other user's script.
func TestRuleFixAsRootRefusesALinkToAnotherUsersFile(t *testing.T) {
	home, victim := ownertest.Homes(t)
	theirs := ownertest.File(t, filepath.Join(victim, "ci.sh"), []byte(ciScript), 0o700, ownertest.Other)
	link := ownertest.Link(t, theirs, filepath.Join(home, "ci.sh"), ownertest.User)
	inv := filepath.Join(t.TempDir(), "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers": {"lit": {"tools": ["literature.search_pubmed", "get+data"]}, "foo.bar": {"tools": ["deploy.prod"]}}}`), 0o600))

	in := ruleFixIn(t, inv, link)
	var probs []string
	in.Problem = func(err error) { probs = append(probs, err.Error()) }
	plan, err := Agent.(agent.RuleFixer).RuleFix().Plan(context.Background(), in)
	require.NoError(t, err)
	require.Len(t, probs, 1, "%v", probs)
	assert.True(t, strings.HasPrefix(probs[0], link+": "), probs[0])
	assert.Contains(t, probs[0], "not followed")
	assert.Empty(t, plan.Edits, "the other user's script is not planned")
}
