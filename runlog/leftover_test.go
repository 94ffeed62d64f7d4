package runlog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 9 (crash leftovers): a SIGKILL can cut a large journal write short. The torn last line
// is cut before anything is appended (an undo's or a cleanup's lines), else it would become a
// damaged line in the middle and the whole run unreadable.
func TestOpenJournalCutsATornLastLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), journalName)
	require.NoError(t, os.WriteFile(p, []byte("{\"event\":\"commit\"}\n{\"event\":\"comm"), 0o600))
	j, err := openJournal(p)
	require.NoError(t, err)
	require.NoError(t, j.append(journalEntry{Event: "abort", Path: "x"}))
	j.close()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	lines := splitLines(b)
	require.Len(t, lines, 2)
	assert.Equal(t, `{"event":"commit"}`, lines[0])
	assert.True(t, json.Valid([]byte(lines[1])), "the appended line is whole: %s", lines[1])
	assert.Contains(t, lines[1], `"event":"abort"`)
}

func splitLines(b []byte) []string {
	var out []string
	start := 0
	for i, c := range b {
		if c == '\n' {
			out = append(out, string(b[start:i]))
			start = i + 1
		}
	}
	return out
}
