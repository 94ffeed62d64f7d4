//go:build unix

package fileio

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFileModeIsOsMapping: FileMode maps a raw st_mode as os does for its own stats: a file,
// a directory with the setgid and sticky bits, a FIFO, a symbolic link and a setuid file.
func TestFileModeIsOsMapping(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o640))
	sub := filepath.Join(dir, "d")
	require.NoError(t, os.Mkdir(sub, 0o755))
	require.NoError(t, os.Chmod(sub, 0o755|os.ModeSetgid|os.ModeSticky))
	fifo := filepath.Join(dir, "p")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	link := filepath.Join(dir, "l")
	require.NoError(t, os.Symlink(file, link))
	suid := filepath.Join(dir, "s")
	require.NoError(t, os.WriteFile(suid, nil, 0o700))
	require.NoError(t, os.Chmod(suid, 0o755|os.ModeSetuid))
	for _, p := range []string{file, sub, fifo, link, suid} {
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		var st syscall.Stat_t
		require.NoError(t, syscall.Lstat(p, &st))
		assert.Equal(t, fi.Mode(), FileMode(uint32(st.Mode)), p)
	}
}
