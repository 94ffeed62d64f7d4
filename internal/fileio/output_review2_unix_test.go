//go:build unix

package fileio

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestWriteOutputSaysItWaitsForAFIFOReader: a FIFO nobody reads makes the run wait (silently,
// before OnWait); OnWait is told before the wait, and only when there is no reader. The hook
// itself starts the reader, so the test needs no sleep: had the wait begun before the hook,
// the write would never complete.
func TestWriteOutputSaysItWaitsForAFIFOReader(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pairs.fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	got := make(chan string, 1)
	var waited []string
	err := WriteOutputContext(context.Background(), io.Discard, fifo, []byte(report), OnWait(func(name string) {
		waited = append(waited, name)
		go func() {
			b, _ := os.ReadFile(fifo)
			got <- string(b)
		}()
	}))
	require.NoError(t, err)
	assert.Equal(t, []string{fifo}, waited)
	assert.Equal(t, report, <-got)

	// A reader already there: no wait, no call.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	defer r.Close()
	waited = nil
	require.NoError(t, WriteOutputContext(context.Background(), io.Discard, fifo, []byte(report), OnWait(func(name string) {
		waited = append(waited, name)
	})))
	assert.Empty(t, waited)
	b := make([]byte, len(report)+10)
	n, _ := r.Read(b)
	assert.Equal(t, report, string(b[:n]))
}

// TestWriteOutputErrorsDoNotNameTheTempFile: a report that cannot be written (its directory
// missing, read-only, full) is named in the error with the cause, never by the temp file's
// random name (".x.csv9172705693470836540").
func TestWriteOutputErrorsDoNotNameTheTempFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "nodir", "x.csv")
	err := WriteOutputContext(context.Background(), io.Discard, out, []byte(report))
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Equal(t, "write "+out+": no such file or directory (while writing a temporary file in "+filepath.Join(dir, "nodir")+" to rename over it)", err.Error())
	assert.False(t, strings.Contains(err.Error(), ".x.csv"), err.Error())
}
