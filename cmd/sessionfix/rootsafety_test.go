package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The tests of issue 30 (root over untrusted homes) that need no second user.

// TestUndoForceSaysWhereTheChangesWent (issue 30 finding 8): undo --force over a session that
// changed since the run (a line added at the top, not an append: the edits cannot be reversed in
// place) restores the backup, and says where what the session held before the undo is kept —
// the "<backup>.before-undo" file holding that added line — in text and in JSON ("kept"). A
// store that had not changed names no such file.
func TestUndoForceSaysWhereTheChangesWent(t *testing.T) {
	for _, format := range []string{"table", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := fixtureCopy(t)
			state := filepath.Join(t.TempDir(), "S")
			env := testEnv(t)
			r := runCLI(t, env, "", "fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir)
			require.Equal(t, exitOK, r.code, r.err)
			f := filepath.Join(dir, "projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl")
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			edited := append([]byte("{\"type\":\"edited-by-hand\"}\n"), b...)
			require.NoError(t, os.WriteFile(f, edited, 0o640))

			r = runCLI(t, env, "", "undo", "--last", "--force", "--yes", "--format", format, "--state-dir", state)
			require.Equal(t, exitOK, r.code, r.err)
			var kept string
			if format == "json" {
				var rep undoReport
				require.NoError(t, json.Unmarshal([]byte(r.out), &rep))
				for _, file := range rep.Files {
					if file.Path == f {
						kept = file.Kept
					} else {
						assert.Empty(t, file.Kept, "%s had not changed", file.Path)
					}
				}
			} else {
				var line string
				for _, l := range strings.Split(r.out, "\n") {
					if strings.Contains(l, f) {
						line = l
					} else {
						assert.NotContains(t, l, "kept at", "only the changed store names a kept file")
					}
				}
				before, after, ok := strings.Cut(line, "; it had changed since the run: what it held before this undo is kept at ")
				require.True(t, ok, r.out)
				assert.Equal(t, "  restored "+f+" (15 names)", before)
				kept = after
			}
			require.NotEmpty(t, kept, r.out)
			assert.True(t, strings.HasSuffix(kept, ".before-undo"), kept)
			got, err := os.ReadFile(kept)
			require.NoError(t, err)
			assert.Equal(t, string(edited), string(got), "the kept file holds what the session held before the undo")
		})
	}
}

// TestSignalEndsABlockedRun (issue 30 finding 5): a run blocked where no context reaches — here
// opening an --inventory FIFO nobody writes, which blocks the thread in open(2) — still ends on
// one SIGTERM: after stopGrace it exits 143 and says so. Before, a cron job's SIGTERM was
// ignored until a second signal (the real command: this test binary running main).
func TestSignalEndsABlockedRun(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "tools.json")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	cmd := exec.Command(exe, "scan", "--inventory", fifo, fixtureCopy(t))
	cmd.Env = append(os.Environ(), fakeMCPEnv+"=main")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	// Wait until it is blocked in the open: the FIFO then has a reader.
	deadline := time.Now().Add(10 * time.Second)
	for !fifoHasReader(t, cmd.Process.Pid, fifo) {
		require.True(t, time.Now().Before(deadline), "the run never opened the FIFO")
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("still running 10 s after SIGTERM: %s", stderr.String())
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, stderr.String())
	assert.Equal(t, exitTerminated, ee.ExitCode(), stderr.String())
	assert.Contains(t, stderr.String(), "sessionfix: SIGTERM: stopping at the next safe point")
	assert.Contains(t, stderr.String(), "sessionfix: SIGTERM: the run did not stop within 900ms: exiting now")
}

// fifoHasReader reports whether process pid has fifo open (its /proc fd links).
func fifoHasReader(t *testing.T, pid int, fifo string) bool {
	fi, err := os.Stat(fifo)
	require.NoError(t, err)
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if st, err := os.Stat(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && os.SameFile(st, fi) {
			return true
		}
	}
	// A thread blocked in open(2) has no descriptor yet: its syscall says where it is.
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
	if strings.Contains(string(b), "fifo") {
		return true
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/wchan", pid, task.Name()))
		if strings.Contains(string(b), "fifo") || strings.Contains(string(b), "pipe") || strings.Contains(string(b), "partner") {
			return true
		}
	}
	return false
}
