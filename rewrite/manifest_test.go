package rewrite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/runlog"
)

// A "done" line the journal could not take (a full disk) keeps its entry in memory: the
// manifest still records the store.
func TestManifestRecordsAStoreWhoseDoneLineFailed(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("1", "mcp__a.b__c"))
	state := filepath.Join(t.TempDir(), "state")
	renamed, failed := false, 0
	defer fileio.SetFaultHook(func(op, path string) error {
		if op == fileio.FaultRename && path == a {
			renamed = true
		}
		// Every journal write after the rename fails: the "done" line (and the temp-gone
		// lines, which are best effort).
		if renamed && op == fileio.FaultWrite && filepath.Base(path) == journalName {
			failed++
			return fmt.Errorf("no space left on device")
		}
		return nil
	})()
	res, err := Apply(context.Background(), Build(scanned(t, a), naming.Policy{}), ApplyOptions{StateDir: state, Workers: 1})
	require.NoError(t, err)
	require.Equal(t, 1, res.Files)
	assert.Positive(t, failed)
	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	assert.Equal(t, runlog.StateApplied, m.State)
	require.Len(t, m.Files, 1)
	assert.Equal(t, a, m.Files[0].Ref.Path)
	e, err := m.Entry(0)
	require.NoError(t, err)
	assert.NotEmpty(t, e.SiteData)
}
