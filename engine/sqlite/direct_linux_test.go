//go:build linux

package sqlite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestCopyBackupDirectOnAFullDisk: a direct copy that runs out of space (a 256 KiB tmpfs, a
// 1 MiB database, chunks of 16 KiB: two writers in flight when the space ends) fails with the
// file system's ENOSPC, removes what it wrote and leaves no writer behind; the same copy with
// room succeeds with every byte. Needs to mount a tmpfs (root): skipped otherwise.
func TestCopyBackupDirectOnAFullDisk(t *testing.T) {
	defer SetBackupChunk(4 * directAlign)()
	src := make([]byte, 1<<20)
	for i := range src {
		src[i] = byte(i * 7)
	}
	copy(src, Header)
	p := filepath.Join(t.TempDir(), "db")
	require.NoError(t, os.WriteFile(p, src, 0o600))
	for _, tc := range []struct {
		size string
		full bool
	}{{"256k", true}, {"4m", false}} {
		dir := t.TempDir()
		if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+tc.size); err != nil {
			t.Skipf("cannot mount a tmpfs (%v): needs root", err)
		}
		t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
		in, err := os.Open(p)
		require.NoError(t, err)
		dst := filepath.Join(dir, "bk", "copy")
		_, err = copyBackup(context.Background(), in, dst, true)
		in.Close()
		if tc.full {
			require.ErrorIs(t, err, syscall.ENOSPC)
			assert.NoFileExists(t, dst)
			continue
		}
		require.NoError(t, err)
		b, err := os.ReadFile(dst)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(src, b), "%d bytes copied", len(b))
	}
}

// TestExtractReadsNothingPastAValueAtAPageEnd: the extractor's 16-byte string loop reads
// nothing past a value's last byte: values (whole, or a string cut short, 0-40 bytes of body,
// plain or with an escape near the end) that end on the last byte of a page followed by an
// inaccessible page are read without a fault, with the result of the same value elsewhere.
func TestExtractReadsNothingPastAValueAtAPageEnd(t *testing.T) {
	page := os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	require.NoError(t, err)
	defer unix.Munmap(mem)
	require.NoError(t, unix.Mprotect(mem[page:], unix.PROT_NONE))
	spec := specOf([]string{"$.tool", "$.type"})
	for body := 0; body <= 40; body++ {
		s := bytes.Repeat([]byte("a"), body)
		for _, v := range [][]byte{
			[]byte(`{"type":"t","tool":"` + string(s) + `"}`),
			[]byte(`{"type":"t","tool":"` + string(s)),
			[]byte(`{"type":"t","tool":"` + string(s) + `\`),
			[]byte(`{"type":"t","tool":"` + string(s) + `\u00`),
			[]byte(`{"tool":"` + string(s) + `\n"}`),
		} {
			one := newRowBatch(2, 1)
			one.buf = append(make([]byte, 0, len(v)+1), v...)
			one.n = 1
			one.cols[1].kind = kindText
			setNum(&one.cols[1].n, len(v))
			require.NoError(t, extractRows(one, spec))
			want := append([]int64(nil), one.ext...)

			edge := newRowBatch(2, 1)
			off := page - len(v)
			copy(mem[off:page], v)
			edge.buf = mem[:page:page]
			edge.n = 1
			edge.cols[1].kind = kindText
			setNum(&edge.cols[1].off, off)
			setNum(&edge.cols[1].n, len(v))
			require.NoError(t, extractRows(edge, spec))
			require.Equal(t, want, edge.ext, "%q at the end of a page", v)
		}
	}
}
