package pipeline

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An undo stopped by an error after trying some stores says how far it got and what to do; a
// full state disk (undo journals and backs up there) names where to free space.
func TestUndoStoppedSaysHowFarAndWhatToDo(t *testing.T) {
	tally := &UndoTally{Restored: 1, Failed: 3}
	full := fmt.Errorf("write manifest: %w", &os.PathError{Op: "write", Path: "/st/runs/r1/.manifest.json1", Err: syscall.ENOSPC})
	err := undoStopped(full, tally, 4, "/st/runs/r1", "r1")
	require.ErrorIs(t, err, syscall.ENOSPC, "the cause stays visible to errors.Is")
	assert.Equal(t, "write manifest: write /st/runs/r1/.manifest.json1: no space left on device; restored 1 of 4 files of run r1, "+
		"the others are as the run left them: free space on the disk of the state directory (/st/runs/r1) and undo the same run again", err.Error())

	other := errors.New("write manifest: input/output error")
	assert.Equal(t, "write manifest: input/output error; restored 1 of 4 files of run r1, the others are as the run left them: fix the cause and undo the same run again",
		undoStopped(other, tally, 4, "/st/runs/r1", "r1").Error())
	assert.Same(t, other, undoStopped(other, &UndoTally{}, 0, "/st/runs/r1", "r1"), "nothing tried: the error as it is")
}
