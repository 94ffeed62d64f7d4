//go:build linux

package fileio

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestWriteOutputFIFONoEOFBeforeTheReport: the check for a reader (OnWait) must not leave the
// FIFO without writers before the report is in it: a close that drops the last writer is an end
// of file for a reader already waiting in read() (`cat fifo > got` exits with nothing) and the
// report written through the next open is lost while the run exits 0 (review5: `cat p > got &
// sessionfix audit --out p` left got empty about one run in three). inotify shows the writers'
// opens and closes in order: no close may come before the last open.
func TestWriteOutputFIFONoEOFBeforeTheReport(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pairs.fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	defer r.Close()
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	require.NoError(t, err)
	defer unix.Close(in)
	_, err = unix.InotifyAddWatch(in, fifo, unix.IN_OPEN|unix.IN_CLOSE_WRITE)
	require.NoError(t, err)

	require.NoError(t, WriteOutputContext(context.Background(), io.Discard, fifo, []byte(report), OnWait(func(string) {
		t.Error("a reader is there: no wait")
	})))
	var events []string
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(in, buf)
		if err != nil || n <= 0 {
			break
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			switch {
			case ev.Mask&unix.IN_OPEN != 0:
				events = append(events, "open")
			case ev.Mask&unix.IN_CLOSE_WRITE != 0:
				events = append(events, "close")
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
	// inotify merges two identical events in a row: "open", "close" is one or more opens, then
	// one or more closes.
	assert.Equal(t, []string{"open", "close"}, events, "the writers' opens and closes of the FIFO")
	b := make([]byte, len(report)+10)
	n, _ := r.Read(b)
	assert.Equal(t, report, string(b[:n]))
}
