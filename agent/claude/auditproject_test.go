package claude

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/permission"
)

// TestResolveHomeIsNoProject (issue 23 item 3): run from the home (a cron job), the audit reads
// ~/.claude/settings.json once, as the user scope — not again as an untrusted project's — and
// says so; --project none reads no project from anywhere; a project directory is read as one.
func TestResolveHomeIsNoProject(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".claude"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"permissions":{"allow":["mcp__lit"]}}`), 0o644))
	lab := filepath.Join(home, "src", "lab")
	require.NoError(t, os.MkdirAll(filepath.Join(lab, ".claude"), 0o755))
	getenv := func(string) string { return "" }
	resolve := func(project, cwd string) ([]ClaudeSource, *ClaudeLoaded, []string) {
		var l ClaudeLoaded
		var notes []string
		h := ClaudeHooks{Problem: func(err error) { t.Fatal(err) }, Note: func(s string) { notes = append(notes, s) }, Warn: func(string) {}}
		srcs, _, err := l.Resolve(ClaudeInputs{Project: project, Cwd: cwd, Getenv: getenv, Home: home, Command: "audit"}, h)
		require.NoError(t, err)
		return srcs, &l, notes
	}
	scopes := func(srcs []ClaudeSource) map[permission.ClaudeScope][]string {
		out := map[permission.ClaudeScope][]string{}
		for _, s := range srcs {
			if s.Scope != permission.ClaudeScopeManaged {
				out[s.Scope] = append(out[s.Scope], s.Path)
			}
		}
		return out
	}
	user := map[permission.ClaudeScope][]string{permission.ClaudeScopeUser: {filepath.Join(home, ".claude", "settings.json")}}

	srcs, l, notes := resolve("", home)
	assert.Equal(t, user, scopes(srcs))
	assert.Empty(t, l.Project)
	assert.Contains(t, notes, "the working directory "+home+" is the home, not a project: its .claude/settings.json is read once, as the user scope, and no project's rules are read (give --project DIR to audit a project's, or --project none to say there is none)")

	srcs, l, _ = resolve(NoProject, lab)
	assert.Equal(t, user, scopes(srcs))
	assert.Empty(t, l.Project)

	srcs, l, notes = resolve("", lab)
	assert.Equal(t, []string{filepath.Join(lab, ".claude", "settings.json")}, scopes(srcs)[permission.ClaudeScopeProject])
	assert.Equal(t, []string{filepath.Join(lab, ".claude", "settings.local.json")}, scopes(srcs)[permission.ClaudeScopeLocal])
	assert.Equal(t, lab, l.Project)
	assert.NotContains(t, notes, "the working directory "+lab+" is the home, not a project")
}
