package rewrite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/store"
)

// TestRunRecordsTheOriginalOwner: a run records each rewritten file's owner and group when it
// took the backup (original_owner, in the journal's commit line and the manifest), read back
// by ReadRun: undo --force of a file removed since the run gives it back (as root) even when its
// backup is a copy. Runs recorded before it (the v3/v4 golden runs) have none and are still
// undone.
func TestRunRecordsTheOriginalOwner(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("x", "mcp__a.b__c"))
	fi, err := os.Stat(a)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	state := filepath.Join(t.TempDir(), "state")
	res, err := Apply(context.Background(), Build(scanned(t, a), naming.Policy{}), ApplyOptions{StateDir: state, Now: time.Now})
	require.NoError(t, err)
	for _, n := range []string{manifestName, journalName} {
		b, err := os.ReadFile(filepath.Join(res.Dir, n))
		require.NoError(t, err)
		assert.True(t, strings.Contains(string(b), `"original_owner"`), "%s records the owner", n)
	}
	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	require.NoError(t, runlog.CheckRun(res.Dir, m))
	e, err := m.Entry(0)
	require.NoError(t, err)
	assert.Equal(t, &store.FileOwner{UID: st.Uid, GID: st.Gid}, e.OriginalOwner)
}
