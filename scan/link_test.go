package scan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const rolloutLine = `{"timestamp":"2026-11-30T18:55:07.581Z","type":"session_meta","payload":{"id":"01a22dcf-9134-7922-bfac-658542a5f64b","cli_version":"0.50.0"}}` + "\n"

// TestDiscoverFollowsCodexSessionsLink: a Codex home's sessions/ (or archived_sessions/) that
// is a symbolic link to a directory is walked, once; Lexical maps what was found there back
// through the link; other links stay not followed, and a link into its own parent is a loop,
// not followed.
func TestDiscoverFollowsCodexSessionsLink(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "user-codex")
	disk := filepath.Join(base, "disk2")
	rel := "2026/11/30/rollout-2026-11-30T18-55-07-01a22dcf-9134-7922-bfac-658542a5f64b.jsonl"
	real := write(t, disk, "sessions/"+rel, rolloutLine)
	write(t, disk, "archived/"+rel, rolloutLine)
	require.NoError(t, os.MkdirAll(home, 0o755))
	write(t, home, "config.toml", "")
	require.NoError(t, os.Symlink(filepath.Join(disk, "sessions"), filepath.Join(home, "sessions")))
	require.NoError(t, os.Symlink(filepath.Join(disk, "archived"), filepath.Join(home, "archived_sessions")))
	require.NoError(t, os.Symlink(filepath.Join(disk, "sessions"), filepath.Join(home, "other"))) // not a sessions dir
	loop := filepath.Join(base, "loop")
	require.NoError(t, os.MkdirAll(loop, 0o755))
	write(t, loop, "auth.json", "{}")
	require.NoError(t, os.Symlink(loop, filepath.Join(loop, "sessions")))
	// A sessions link in a directory that is no Codex home (no config.toml, auth.json,
	// history, state or thread-history file) is not followed.
	plain := filepath.Join(base, "plain")
	require.NoError(t, os.MkdirAll(plain, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(disk, "archived"), filepath.Join(plain, "sessions")))

	for _, roots := range [][]string{{home}, {base}, {home, filepath.Join(home, "sessions")}} {
		f := discover(t, roots)
		var paths, lexical []string
		for _, tg := range f.Targets {
			paths = append(paths, tg.Store.Ref().Path)
			lexical = append(lexical, f.Lexical(tg.Store.Ref().Path))
		}
		assert.ElementsMatch(t, []string{real, filepath.Join(disk, "archived", rel)}, paths, "roots %v", roots)
		assert.ElementsMatch(t, []string{filepath.Join(home, "sessions", rel), filepath.Join(home, "archived_sessions", rel)}, lexical, "roots %v", roots)
		var reasons []string
		for _, is := range f.Issues {
			reasons = append(reasons, string(is.Severity)+" "+is.Path+": "+is.Reason)
		}
		assert.Contains(t, reasons, "info "+filepath.Join(home, "sessions")+": symbolic link to "+filepath.Join(disk, "sessions")+": followed (a Codex home's sessions/; links inside it are not)", "roots %v", roots)
		assert.Contains(t, reasons, "info "+filepath.Join(home, "other")+": symbolic link not followed; pass its target to include it", "roots %v", roots)
		assert.Equal(t, 2, f.Roots[0].Stores, "roots %v", roots)
	}
	// A root that is the link: the same lexical names.
	f := discover(t, []string{filepath.Join(home, "sessions")})
	require.Len(t, f.Targets, 1)
	assert.Equal(t, real, f.Targets[0].Store.Ref().Path)
	assert.Equal(t, filepath.Join(home, "sessions", rel), f.Lexical(real))
	assert.Equal(t, "/elsewhere/x.jsonl", f.Lexical("/elsewhere/x.jsonl"))

	// loop/sessions -> loop is not followed (and Lexical does not chase it).
	f = discover(t, []string{base})
	assert.Equal(t, filepath.Join(loop, "x"), f.Lexical(filepath.Join(loop, "x")))
	var loopInfo bool
	for _, is := range f.Issues {
		loopInfo = loopInfo || (is.Path == filepath.Join(loop, "sessions") && is.Reason == "symbolic link not followed; pass its target to include it")
	}
	assert.True(t, loopInfo, "the loop is reported as a link not followed: %v", f.Issues)
	for _, tg := range f.Targets {
		assert.NotEqual(t, filepath.Join(plain, "sessions", rel), f.Lexical(tg.Store.Ref().Path), "plain/sessions is not followed")
	}
	var plainInfo bool
	for _, is := range f.Issues {
		plainInfo = plainInfo || (is.Path == filepath.Join(plain, "sessions") && is.Reason == "symbolic link not followed; pass its target to include it")
	}
	assert.True(t, plainInfo, "plain/sessions: %v", f.Issues)
}

func TestInside(t *testing.T) {
	assert.True(t, inside("/a/b", "/"), "everything is inside /")
	assert.True(t, inside("/a/b", "/a"))
	assert.True(t, inside("/a", "/a"))
	assert.False(t, inside("/ab", "/a"))
	assert.False(t, inside("/a", "/a/b"))
}
