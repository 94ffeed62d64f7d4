package runlog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/owner/ownertest"
)

// TestRemoveStoreTempsAsRootRefusesALinkOnTheWay: as root, a user whose run was killed swaps
// the directory of an announced temp (home/p) for a link to another user's directory holding a
// file of the same name (and a store of the temp's store's name): cleanup removes nothing
// there, and does not journal the temp gone (it is still to be removed once reachable). By
// path, the removal followed the link and removed the other user's file.
func TestRemoveStoreTempsAsRootRefusesALinkOnTheWay(t *testing.T) {
	home, victim := ownertest.Homes(t)
	p := filepath.Join(home, "p")
	ownertest.Dir(t, p, ownertest.User)
	store := ownertest.File(t, filepath.Join(p, "s.jsonl"), []byte("{}\n"), 0o600, ownertest.User)
	tmp := ownertest.File(t, filepath.Join(p, ".s.jsonl123"), []byte("x"), 0o600, ownertest.User)
	ownertest.File(t, filepath.Join(victim, "s.jsonl"), []byte("{}\n"), 0o600, ownertest.Other)
	theirs := ownertest.File(t, filepath.Join(victim, ".s.jsonl123"), []byte("theirs"), 0o600, ownertest.Other)

	require.NoError(t, os.Rename(p, p+".away"))
	ownertest.Link(t, victim, p, ownertest.User)

	out, gone, unlock := removeStoreTemps(nil, "r1", []string{tmp}, map[string]string{tmp: store})
	unlock()
	b, err := os.ReadFile(theirs)
	require.NoError(t, err, "the other user's file is still there")
	assert.Equal(t, "theirs", string(b))
	assert.Empty(t, gone, "nothing journaled gone")
	require.Len(t, out, 1, "the refusal is reported")
	assert.Equal(t, tmp, out[0].Path)
	require.Error(t, out[0].Err)
	assert.Contains(t, out[0].Err.Error(), "not followed")
}

// TestRemoveStoreTempsAsRootFollowsTheUsersOwnLink: as root, a link the user made to a
// directory of their own is followed (owner.LinkRefusal passes it): the announced temp there
// is removed and journaled gone, the store is left as it is.
func TestRemoveStoreTempsAsRootFollowsTheUsersOwnLink(t *testing.T) {
	home, _ := ownertest.Homes(t)
	real := filepath.Join(home, "real")
	ownertest.Dir(t, real, ownertest.User)
	ownertest.File(t, filepath.Join(real, "s.jsonl"), []byte("{}\n"), 0o600, ownertest.User)
	ownertest.File(t, filepath.Join(real, ".s.jsonl123"), []byte("x"), 0o600, ownertest.User)
	p := ownertest.Link(t, real, filepath.Join(home, "p"), ownertest.User)
	store, tmp := filepath.Join(p, "s.jsonl"), filepath.Join(p, ".s.jsonl123")

	out, gone, unlock := removeStoreTemps(nil, "r1", []string{tmp}, map[string]string{tmp: store})
	unlock()
	assert.NoFileExists(t, filepath.Join(real, ".s.jsonl123"))
	assert.FileExists(t, filepath.Join(real, "s.jsonl"))
	require.Len(t, out, 1)
	assert.NoError(t, out[0].Err)
	require.Len(t, gone, 1)
	assert.Equal(t, "removed by cleanup", gone[0].Reason)
}
