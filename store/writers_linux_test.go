package store

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// holdOpen starts a process that keeps path open with the given shell redirection ("3>>" to
// append, "3<" to read) until the test ends, and waits until /proc shows it.
func holdOpen(t *testing.T, redir, path string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "exec "+redir+"\"$1\"; exec sleep 60", "sh", path)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	fi, err := os.Stat(path)
	require.NoError(t, err)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		procMu.Lock()
		procSnap = nil // force a fresh view
		procMu.Unlock()
		for _, o := range snapshotOpenFiles().files[idOfStat(fi)] {
			if o.pid == cmd.Process.Pid {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the holder process never showed the file open")
}

func TestRewriteFileRefusesAFileHeldOpenForWriting(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	want := stateOf(t, p)

	holdOpen(t, "3<", p) // a reader (tail -f, an editor) does not block the rewrite
	_, err := RewriteFile(context.Background(), p, want, upper, ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1")})
	require.NoError(t, err)

	want = stateOf(t, p)
	holdOpen(t, "3>>", p) // an agent keeping its session open for appending does
	_, err = RewriteFile(context.Background(), p, want, upper, ApplyOptions{BackupPath: filepath.Join(dir, "bk", "2")})
	var iu *InUseError
	require.ErrorAs(t, err, &iu)
	assert.Contains(t, iu.Reason, "held open for writing by pid")
	assert.Regexp(t, `pid [0-9]+ \((sh|sleep)\)`, iu.Reason, "the process is named (sh until it execs sleep)")
	got, _ := os.ReadFile(p)
	assert.Equal(t, "ABC\n", string(got), "left as the first rewrite made it")
}
