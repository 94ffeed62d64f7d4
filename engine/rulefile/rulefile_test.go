package rulefile_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/rulefile"
	"github.com/sessionfix/sessionfix/store"
)

// A TOML policy with comments, CRLF line ends and a string the edits do not touch.
const policy = "# deny the wipe\r\n[[rule]]\r\ntoolName = \"foo.bar__wipe\" # old spelling\r\ndecision = \"deny\"\r\npriority = 500\r\n"

func write(t *testing.T, data string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "d1.toml")
	require.NoError(t, os.WriteFile(p, []byte(data), mode))
	require.NoError(t, os.Chmod(p, mode))
	old := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	require.NoError(t, os.Chtimes(p, old, old))
	return p
}

// plan scans path and makes the store edits of fes (what rewrite.Apply hands a Writer).
func plan(t *testing.T, path string, fes []store.FileEdit) (*rulefile.Store, *store.Snapshot, []store.Edit, error) {
	t.Helper()
	st := rulefile.Open(path)
	snap, err := st.Scan(context.Background(), store.ScanOptions{Hash: true})
	require.NoError(t, err)
	sites, err := rulefile.Sites(snap, fes, func(i int) string { return fmt.Sprintf("edit %d", i) })
	if err != nil {
		return st, snap, nil, err
	}
	var edits []store.Edit
	for i, s := range sites {
		edits = append(edits, store.Edit{Site: s, New: fes[i].New})
	}
	return st, snap, edits, nil
}

// The edits of d1's rule as permission/gemini plans them: an mcpName line inserted before
// toolName, and the toolName string replaced.
func d1Edits() []store.FileEdit {
	at := int64(len("# deny the wipe\r\n[[rule]]\r\n"))
	val := at + int64(len("toolName = "))
	return []store.FileEdit{{At: at, New: "mcpName = \"foo.bar\"\r\n"}, {At: val, Old: `"foo.bar__wipe"`, New: `"wipe"`}}
}

// TestApplyByteExact: only the edited byte ranges change (comments, CRLF and every other byte
// kept), the mode and mtime stay, the change records the edits at offsets of the new content,
// and Restore puts the original bytes back (red before: the engine did not exist; the rule
// fix wrote JSON strings only).
func TestApplyByteExact(t *testing.T) {
	p := write(t, policy, 0o640)
	before, err := os.Stat(p)
	require.NoError(t, err)
	st, snap, edits, err := plan(t, p, d1Edits())
	require.NoError(t, err)
	ch, err := st.Apply(context.Background(), snap, edits, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.NoError(t, err)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "# deny the wipe\r\n[[rule]]\r\nmcpName = \"foo.bar\"\r\ntoolName = \"wipe\" # old spelling\r\ndecision = \"deny\"\r\npriority = 500\r\n", string(got))
	after, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), after.Mode().Perm())
	assert.True(t, after.ModTime().Equal(before.ModTime()))
	assert.Equal(t, rulefile.Kind, ch.Ref.Kind)
	assert.Equal(t, 2, ch.Edits)
	require.Len(t, ch.Sites, 2)
	assert.Equal(t, store.ByteEdit{At: 27, Old: "", New: "mcpName = \"foo.bar\"\r\n"}, ch.Sites[0])
	assert.Equal(t, store.ByteEdit{At: 27 + 21 + 11, Old: `"foo.bar__wipe"`, New: `"wipe"`}, ch.Sites[1])
	assert.Equal(t, `"wipe"`, string(got[ch.Sites[1].At:ch.Sites[1].At+6]))

	require.NoError(t, rulefile.Open(p).Restore(context.Background(), ch, false))
	got, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, policy, string(got))
}

// TestSitesRefuseOtherBytes: a plan made on other bytes (the old bytes not at the offset, or
// overlapping edits) makes no sites.
func TestSitesRefuseOtherBytes(t *testing.T) {
	p := write(t, policy, 0o600)
	_, _, _, err := plan(t, p, []store.FileEdit{{At: 5, Old: `"foo.bar__wipe"`, New: `"wipe"`}})
	require.Error(t, err)
	assert.True(t, errors.Is(err, store.ErrTokenMismatch), "%v", err)
	assert.Contains(t, err.Error(), "the file changed since the rule was read")
	e := d1Edits()[1]
	_, _, _, err = plan(t, p, []store.FileEdit{e, {At: e.At + 1, Old: `foo`, New: `x`}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "overlaps")
	_, _, _, err = plan(t, p, []store.FileEdit{{At: 3, New: "a"}, {At: 3, New: "b"}})
	require.Error(t, err, "two insertions at one offset")
}

// TestApplyRefusesAChangedFile: a file written to between the plan and the apply is refused as
// in use, and left as it is.
func TestApplyRefusesAChangedFile(t *testing.T) {
	p := write(t, policy, 0o600)
	st, snap, edits, err := plan(t, p, d1Edits())
	require.NoError(t, err)
	changed := []byte(policy[:len(policy)-5] + "900\r\n")
	require.NoError(t, os.WriteFile(p, changed, 0o600))
	_, err = st.Apply(context.Background(), snap, edits, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.Error(t, err)
	assert.True(t, errors.Is(err, store.ErrInUse), "%v", err)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, string(changed), string(got))
}

// TestScanRefusesASwappedFile: a rule file is opened as every store is: pinned to the file it
// was found as, a path swapped for another file since is refused.
func TestScanRefusesASwappedFile(t *testing.T) {
	p := write(t, policy, 0o600)
	st := rulefile.Open(p)
	snap, err := st.Scan(context.Background(), store.ScanOptions{})
	require.NoError(t, err)
	st.Pin(snap.State.ID)
	other := filepath.Join(filepath.Dir(p), "other")
	require.NoError(t, os.WriteFile(other, []byte(policy), 0o600))
	require.NoError(t, os.Rename(other, p))
	_, err = st.Scan(context.Background(), store.ScanOptions{})
	require.Error(t, err, "the path now names another file")
}
