package fileio

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// The backup undo copies is the one it checked: a backup truncated or rewritten after
// RestoreFile hashed it (here: while the copy runs, at the first write of the temp file) is
// refused, and the file keeps the run's content — for a file that is there (the copy goes
// through rewriteFile) and for one that was removed since the run. Before, the copy ended at
// the truncated backup's end and the session was "restored" short.
func TestRestoreFileRefusesABackupChangedAfterTheCheck(t *testing.T) {
	for _, removed := range []bool{false, true} {
		t.Run(map[bool]string{false: "file there", true: "file removed"}[removed], func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "s.jsonl")
			orig := bytes.Repeat([]byte("abcdefghij\n"), 100_000) // 1.1 MB: several copy buffers
			require.NoError(t, os.WriteFile(p, orig, 0o600))
			ch, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1")})
			require.NoError(t, err)
			after, _ := os.ReadFile(p)
			if removed {
				require.NoError(t, os.Remove(p))
			}
			var once sync.Once
			defer SetFaultHook(func(op, path string) error {
				if op == FaultWrite && strings.HasPrefix(filepath.Base(path), ".s.jsonl") {
					once.Do(func() { require.NoError(t, os.Truncate(ch.Backup, 300_000)) })
				}
				return nil
			})()
			err = RestoreFile(context.Background(), p, ch, true)
			require.Error(t, err)
			assert.Contains(t, err.Error(), ch.Backup)
			got, rerr := os.ReadFile(p)
			if removed {
				assert.ErrorIs(t, rerr, os.ErrNotExist, "nothing put in place")
			} else {
				assert.Equal(t, len(after), len(got), "the file keeps the run's content")
				assert.True(t, bytes.Equal(after, got))
			}
		})
	}
}
