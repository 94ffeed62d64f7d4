package runlog

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/fileio"
)

// An anonymous temp's names are announced without a wait (fileio.TempPlanned) and made durable
// by TempLinking, which writes no line: when the change's "commit" line was fsynced after them
// it needs no fsync of its own; with no fsync since (a restore, journaling no commit line) it
// makes one, which covers every planned line. Red before: TempLinking was journaled as a line of
// its own and fsynced (three fsyncs where one serves).
func TestJournalTempLinkingRidesOnTheCommitFsync(t *testing.T) {
	p := filepath.Join(t.TempDir(), journalName)
	var fsyncs atomic.Int32
	defer fileio.SetFaultHook(func(op, path string) error {
		if op == fileio.FaultSync && path == p {
			fsyncs.Add(1)
		}
		return nil
	})()
	j, err := openJournal(p)
	require.NoError(t, err)
	defer j.close()
	require.NoError(t, j.recordTemp(fileio.TempPlanned, "/d/.s.jsonl1", "/d/s.jsonl"))
	require.NoError(t, j.recordTemp(fileio.TempPlanned, "/d/.s.jsonl2", "/d/s.jsonl"))
	assert.Equal(t, int32(0), fsyncs.Load(), "planned: no wait")
	require.NoError(t, j.append(journalEntry{Event: "commit", Path: "/d/s.jsonl"}))
	assert.Equal(t, int32(1), fsyncs.Load())
	require.NoError(t, j.recordTemp(fileio.TempLinking, "/d/.s.jsonl1", "/d/s.jsonl"))
	require.NoError(t, j.recordTemp(fileio.TempLinking, "/d/.s.jsonl2", "/d/s.jsonl"))
	assert.Equal(t, int32(1), fsyncs.Load(), "the commit line's fsync made both durable")

	require.NoError(t, j.recordTemp(fileio.TempPlanned, "/d/.t.jsonl3", "/d/t.jsonl"))
	require.NoError(t, j.recordTemp(fileio.TempPlanned, "/d/.t.jsonl4", "/d/t.jsonl"))
	require.NoError(t, j.recordTemp(fileio.TempLinking, "/d/.t.jsonl3", "/d/t.jsonl"))
	assert.Equal(t, int32(2), fsyncs.Load(), "nothing fsynced it yet: one fsync")
	require.NoError(t, j.recordTemp(fileio.TempLinking, "/d/.t.jsonl4", "/d/t.jsonl"))
	assert.Equal(t, int32(2), fsyncs.Load(), "covered by that fsync")
	assert.Empty(t, j.planned, "nothing kept once linked")

	require.NoError(t, j.recordTemp(fileio.TempPlanned, "/d/.u.jsonl5", "/d/u.jsonl"))
	require.NoError(t, j.recordTemp(fileio.TempGone, "/d/.u.jsonl5", "/d/u.jsonl"))
	assert.Empty(t, j.planned, "a planned name gone is forgotten")

	b, err := os.ReadFile(p)
	require.NoError(t, err)
	lines := splitLines(b)
	require.Len(t, lines, 7, "planned names are journaled as announcements, linking writes nothing: %q", lines)
	for _, i := range []int{0, 1, 3, 4, 5} {
		assert.Contains(t, lines[i], `"event":"temp"`, lines[i])
	}
	assert.Contains(t, lines[6], `"event":"temp-done"`)
}
