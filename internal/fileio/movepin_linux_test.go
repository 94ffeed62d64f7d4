package fileio

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/owner"
)

// TestMoveFileDirectorySwappedForALink: as root, fix --apply --move-legacy moves a user's flat
// Copilot session session-state/<id>.jsonl to session-state/<id>/events.jsonl. The user renames
// session-state away and puts a link to a root-owned directory in its place at each step of the
// move (its directory held open; the directory made; the link made, before the old name is
// removed). Every step goes through the directories held open: the move is made in the
// directory renamed away, and nothing is made, linked or removed in the root-owned directory.
// Before, MoveFile made the directory, the link and the unlink by path: root made <id>/ in the
// root-owned directory, linked that directory's <id>.jsonl into it, and removed that root file.
func TestMoveFileDirectorySwappedForALink(t *testing.T) {
	if !owner.AsRoot() {
		t.Skip("needs root: the link rule applies as root, and the test gives files to another user")
	}
	for _, step := range []string{"pinned", "made", "linked"} {
		t.Run(step, func(t *testing.T) {
			home, state, etc, from, to := flatSession(t)
			// A root file of the name the move removes, in the directory the link leads to.
			require.NoError(t, os.WriteFile(filepath.Join(etc, "id1.jsonl"), []byte("root\n"), 0o600))

			moved := filepath.Join(home, "moved")
			swapped := false
			defer func() { testHookMove = nil }()
			testHookMove = func(s, _ string) {
				if s != step {
					return
				}
				require.NoError(t, os.Rename(state, moved))
				require.NoError(t, os.Symlink(etc, state))
				require.NoError(t, os.Lchown(state, nobody, nobody))
				swapped = true
			}
			m, err := MoveFile(context.Background(), from, to)
			require.True(t, swapped)
			require.NoError(t, err)
			assert.Equal(t, []string{filepath.Join(state, "id1")}, m.Made)

			ents, err := os.ReadDir(etc)
			require.NoError(t, err)
			require.Len(t, ents, 1, "nothing made or linked in the root-owned directory")
			b, err := os.ReadFile(filepath.Join(etc, "id1.jsonl"))
			require.NoError(t, err, "the root file is not removed")
			assert.Equal(t, "root\n", string(b))

			b, err = os.ReadFile(filepath.Join(moved, "id1", "events.jsonl"))
			require.NoError(t, err, "moved in the directory it was in")
			assert.Equal(t, "session\n", string(b))
			assert.NoFileExists(t, filepath.Join(moved, "id1.jsonl"))
			fi, err := os.Lstat(filepath.Join(moved, "id1"))
			require.NoError(t, err)
			assert.Equal(t, uint32(nobody), ownerOf(fi).UID, "the directory made is the user's")
		})
	}
}

// TestUnmoveFileRefusesALinkOnTheWay: as root, undo of a move whose directories its user
// swapped for links since: session-state/ for a link to a root-owned directory holding files of
// the moved file's names. Undo follows no such link (owner.LinkRefusal: the user's link to a
// root directory), so it neither links into nor removes anything from that directory; with the
// made directory <id>/ swapped for a link (session-state itself the user's), it refuses too.
func TestUnmoveFileRefusesALinkOnTheWay(t *testing.T) {
	if !owner.AsRoot() {
		t.Skip("needs root: the link rule applies as root, and the test gives files to another user")
	}
	for _, swap := range []string{"session-state", "id1"} {
		t.Run(swap, func(t *testing.T) {
			_, state, etc, from, to := flatSession(t)
			m, err := MoveFile(context.Background(), from, to)
			require.NoError(t, err)

			// The root directory holds <id>/events.jsonl, a hard link to the moved file (as a
			// root process could have made): reached through the links, it passes undo's
			// check that the file at the new name is the one moved.
			require.NoError(t, os.Mkdir(filepath.Join(etc, "id1"), 0o755))
			require.NoError(t, os.Link(to, filepath.Join(etc, "id1", "events.jsonl")))
			sw, target := state, etc
			if swap == "id1" {
				sw, target = filepath.Join(state, "id1"), filepath.Join(etc, "id1")
			}
			require.NoError(t, os.Rename(sw, sw+".away"))
			require.NoError(t, os.Symlink(target, sw))
			require.NoError(t, os.Lchown(sw, nobody, nobody))

			err = UnmoveFile(context.Background(), m, true)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "not followed")
			assert.FileExists(t, filepath.Join(etc, "id1", "events.jsonl"), "nothing removed in the root-owned directory")
			assert.DirExists(t, filepath.Join(etc, "id1"))
			assert.NoFileExists(t, filepath.Join(etc, "id1.jsonl"), "nothing linked into it")
		})
	}
}

// nobody is the uid (and gid) of the home the move tests make.
const nobody = 65534

// flatSession makes, in a new temp directory every user may pass through, nobody's home with a
// flat Copilot session home/session-state/id1.jsonl ("session\n", nobody's, 0600) and a root
// directory etc beside it; it returns the three directories, the session and where a move puts
// it (session-state/id1/events.jsonl).
func flatSession(t *testing.T) (home, state, etc, from, to string) {
	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o755))
	home, etc = filepath.Join(root, "home"), filepath.Join(root, "etc")
	state = filepath.Join(home, "session-state")
	for _, d := range []string{home, state, etc} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	require.NoError(t, os.Chown(home, nobody, nobody))
	require.NoError(t, os.Chown(state, nobody, nobody))
	from, to = filepath.Join(state, "id1.jsonl"), filepath.Join(state, "id1", "events.jsonl")
	require.NoError(t, os.WriteFile(from, []byte("session\n"), 0o600))
	require.NoError(t, os.Chown(from, nobody, nobody))
	return home, state, etc, from, to
}

// TestMoveFileMakesTheDirectoryTheUsers: as root, the directory a move makes in a user's home
// (session-state/<id>/) is the user's (owner and group of the directory it is made in) from
// the instant it exists, so a run killed right after making it leaves no root-owned 0700
// directory in the user's way (the agent could neither enter it nor put its session there).
// Before, it was made root's and given to the user by a second call (fchownat): a kill between
// the two left it root's.
func TestMoveFileMakesTheDirectoryTheUsers(t *testing.T) {
	if !owner.AsRoot() {
		t.Skip("needs root: the test gives files to another user")
	}
	_, state, _, from, to := flatSession(t)
	var at []string
	defer func() { testHookMove = nil }()
	testHookMove = func(s, p string) {
		if s != "mkdir" {
			return
		}
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		o := ownerOf(fi)
		at = append(at, p)
		assert.Equal(t, uint32(nobody), o.UID, "the directory is the user's as soon as it is made")
		assert.Equal(t, uint32(nobody), o.GID)
	}
	m, err := MoveFile(context.Background(), from, to)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(state, "id1")}, at)
	assert.Equal(t, []string{filepath.Join(state, "id1")}, m.Made)
	fi, err := os.Lstat(filepath.Join(state, "id1"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	assert.Equal(t, uint32(nobody), ownerOf(fi).UID)
}
