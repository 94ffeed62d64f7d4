package scan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/store"
)

// TestRootFollowsALinkOnlyToItsOwnersFiles (issue 30 finding 3): as root, over a home another
// user (nobody) owns, a root given as PATH that is that user's link (~/.qwen ->), and a Codex
// home's sessions/ that is that user's link, are followed to a directory the user owns, and
// refused — an error naming the link, its target and both owners, no store found there — when
// they lead to a directory root owns. Before, both were followed with an info line only, and
// root rewrote 35 and 4 names there. Needs root (chown).
func TestRootFollowsALinkOnlyToItsOwnersFiles(t *testing.T) {
	if !owner.AsRoot() {
		t.Skip("needs root: the link rule applies as root, and the test gives files to another user")
	}
	const user = 65534 // nobody
	chown := func(p string) {
		require.NoError(t, filepath.Walk(p, func(q string, _ os.FileInfo, err error) error {
			require.NoError(t, err)
			return os.Lchown(q, user, user)
		}))
	}
	base := t.TempDir()
	require.NoError(t, os.Chmod(base, 0o755))
	home := filepath.Join(base, "home")
	rootQwen := filepath.Join(base, "root-qwen")
	userQwen := filepath.Join(base, "user-qwen")
	const rel = "projects/-home-a/chats/0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl"
	write(t, rootQwen, rel, sessionLine)
	write(t, userQwen, rel, sessionLine)
	chown(userQwen)
	rootCodex := filepath.Join(base, "root-sessions")
	const rollout = "2026/11/30/rollout-2026-11-30T18-55-07-01a22dcf-9134-7922-bfac-658542a5f64b.jsonl"
	write(t, rootCodex, rollout, rolloutLine)
	write(t, home, ".codex/config.toml", "")
	require.NoError(t, os.Symlink(rootCodex, filepath.Join(home, ".codex/sessions")))
	require.NoError(t, os.Symlink(rootQwen, filepath.Join(home, ".qwen")))
	require.NoError(t, os.Symlink(userQwen, filepath.Join(home, ".qwen-mine")))
	chown(home)

	f := discover(t, []string{filepath.Join(home, ".qwen"), filepath.Join(home, ".codex"), filepath.Join(home, ".qwen-mine")})
	var paths []string
	for _, tg := range f.Targets {
		paths = append(paths, tg.Store.Ref().Path)
	}
	assert.Equal(t, []string{filepath.Join(userQwen, rel)}, paths, "only the user's own directory is read")
	errs := map[string]string{}
	for _, is := range f.Issues {
		if is.Severity == store.SevError {
			errs[is.Path] = is.Reason
		}
	}
	for link, target := range map[string]string{filepath.Join(home, ".qwen"): rootQwen, filepath.Join(home, ".codex/sessions"): rootCodex} {
		reason := errs[link]
		assert.True(t, strings.HasPrefix(reason, "symbolic link "+link+" -> "+target+" not followed: the link belongs to uid 65534"), "%s: %q", link, reason)
		assert.Contains(t, reason, "belongs to uid 0 (root): as root, a link is followed only to what its owner owns")
	}
	assert.Contains(t, errs[filepath.Join(home, ".codex/sessions")], "(a Codex home's sessions/); its stores are not read")
	assert.Len(t, errs, 2, "%v", errs)
	assert.Equal(t, filepath.Join(home, ".qwen"), f.Roots[0].Path)
	assert.Error(t, f.Roots[0].Err, "the refused root cannot be read")
}
