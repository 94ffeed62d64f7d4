package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/owner"
)

// TestFixRefusesAFileNotYoursOrReadOnly (issue 23 item 8): a user's fix --apply over a session
// another user owns took it over silently (the rename leaves the new file the user's), and a
// read-only file was rewritten without a word. Now both are said in the plan (dry run and before
// the question), refused without --force (names kept, named on stderr, exit 3, the files
// untouched) and rewritten with --force (a warning; the read-only file stays read-only). The
// user is another uid than the files' owner (owner.Euid), so it runs as root and off root; the
// real take-over by a user (chown refused) is testdata/script/issue23-08-not-yours.txtar's.
func TestFixRefusesAFileNotYoursOrReadOnly(t *testing.T) {
	dir := fixtureCopy(t)
	env := testEnv(t)
	state := filepath.Join(t.TempDir(), "S")
	me := os.Geteuid() + 1 // not the files' owner, not root
	saved := owner.Euid
	owner.Euid = func() int { return me }
	t.Cleanup(func() { owner.Euid = saved })

	usage := filepath.Join(dir, "usage_record.jsonl")
	require.NoError(t, os.Chmod(usage, 0o444))
	orig := snapshotTree(t, dir)

	r := runCLI(t, env, "", "fix", "--state-dir", state, dir)
	assert.Equal(t, exitcode.Partial, r.code, r.err)
	notYours := ": error: refused: you (uid "                 // then "N) do not own it: it belongs to uid M…"
	assert.Equal(t, 3, strings.Count(r.err, notYours), r.err) // the two sessions and the usage record
	assert.Contains(t, r.err, usage+": error: refused: you (uid ")
	assert.Contains(t, r.err, "; and it is read-only (mode 0444); its names are kept (--force rewrites it all the same)")
	assert.Contains(t, r.out, "not rewritten: you (uid ")
	assert.Equal(t, orig, snapshotTree(t, dir), "a dry run writes nothing")

	// Before the [y/N] question: every refused file is named (here nothing is left to ask).
	tty := *env
	tty.InTerminal = true
	chat := filepath.Join(dir, "projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl")
	require.NoError(t, os.Chmod(chat, 0o644))
	owner.Euid = saved
	require.NoError(t, os.Chmod(chat, 0o444))
	r = runCLI(t, &tty, "n\n", "fix", "--apply", "--state-dir", state, dir)
	assert.Equal(t, exitcode.Declined, r.code, r.err)
	before, _, ok := strings.Cut(r.err, "[y/N]")
	require.True(t, ok, r.err)
	assert.Contains(t, before, usage+": error: refused: it is read-only (mode 0444)")
	assert.Contains(t, before, chat+": error: refused: it is read-only (mode 0444)")
	assert.Contains(t, before, "Rewrite 15 names in 1 file?")
	require.NoError(t, os.Chmod(chat, 0o644))
	owner.Euid = func() int { return me }
	orig = snapshotTree(t, dir)

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	assert.Equal(t, exitcode.Partial, r.code, r.err)
	assert.Equal(t, 3, strings.Count(r.err, notYours), r.err)
	assert.Contains(t, r.out, "nothing to change")
	assert.Equal(t, orig, snapshotTree(t, dir), "nothing was written")

	// The user's own files (owner.Euid is the real user again) but one read-only: only that one
	// is refused.
	owner.Euid = saved
	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	assert.Equal(t, exitcode.Partial, r.code, r.err)
	assert.Contains(t, r.err, usage+": error: refused: it is read-only (mode 0444); its names are kept (--force rewrites it all the same)")
	assert.NotContains(t, r.err, notYours)
	assert.Contains(t, r.out, "rewrote 30 names in 2 files")
	b, err := os.ReadFile(usage)
	require.NoError(t, err)
	assert.Contains(t, string(b), "mcp__foo.bar__get_data", "the read-only file is not rewritten")

	// --force: rewritten, said as a warning, and it stays read-only.
	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--force", "--state-dir", state, dir)
	assert.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.err, usage+": warning: it is read-only (mode 0444): rewritten all the same (--force); the new file keeps the mode")
	assert.Contains(t, r.out, "rewrote 5 names in 1 file")
	fi, err := os.Stat(usage)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o444), fi.Mode().Perm())

	// --force with --rules is refused (the rule migration does not take it).
	r = runCLI(t, env, "", "fix", "--rules", "--force", dir)
	assert.Equal(t, exitcode.Usage, r.code, r.err)
}
