package sqlite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCopyBackupChunks: copyBackup writes every byte of the file, header versions set to 1,
// whatever its size against the chunk and the direct-I/O block: less than a chunk, whole
// chunks, whole blocks past them, a tail that is not a whole block (written through the page
// cache) — with direct I/O (two writers at their own offsets) and without; the hash it
// returns is the backup's.
func TestCopyBackupChunks(t *testing.T) {
	defer SetBackupChunk(4 * directAlign)()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{100, 512, directAlign, 3*directAlign + 512, 4 * directAlign, 8 * directAlign,
		9*directAlign + 1024, 13 * directAlign, 13*directAlign + 100} {
		src := make([]byte, size)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		copy(src, Header)
		src[18], src[19] = 2, 2
		want := bytes.Clone(src)
		want[18], want[19] = 1, 1
		sum := sha256.Sum256(want)
		for _, direct := range []bool{true, false} {
			dir := t.TempDir()
			p := filepath.Join(dir, "db")
			require.NoError(t, os.WriteFile(p, src, 0o600))
			in, err := os.Open(p)
			require.NoError(t, err)
			dst := filepath.Join(dir, "bk", "copy")
			got, err := copyBackup(context.Background(), in, dst, direct)
			in.Close()
			require.NoError(t, err, "size %d direct %v", size, direct)
			b, err := os.ReadFile(dst)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(want, b), "size %d direct %v: %d bytes copied", size, direct, len(b))
			assert.Equal(t, hex.EncodeToString(sum[:]), got, "size %d direct %v", size, direct)
			fi, err := os.Stat(dst)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		}
	}
}

// TestCopyBackupRefusesNonDatabase: a file that is not an SQLite database leaves no backup.
func TestCopyBackupRefusesNonDatabase(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "db")
	require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte("x"), 3*directAlign), 0o600))
	in, err := os.Open(p)
	require.NoError(t, err)
	defer in.Close()
	dst := filepath.Join(dir, "copy")
	_, err = copyBackup(context.Background(), in, dst, true)
	require.ErrorContains(t, err, "not an SQLite database file")
	assert.NoFileExists(t, dst)
}

// TestCopyBackupCancelled: a cancelled copy stops and removes what it wrote.
func TestCopyBackupCancelled(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "db")
	src := make([]byte, 8*directAlign)
	copy(src, Header)
	require.NoError(t, os.WriteFile(p, src, 0o600))
	in, err := os.Open(p)
	require.NoError(t, err)
	defer in.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dst := filepath.Join(dir, "copy")
	_, err = copyBackup(ctx, in, dst, true)
	require.ErrorIs(t, err, context.Canceled)
	assert.NoFileExists(t, dst)
}
