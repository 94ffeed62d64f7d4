package fileio

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
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
		for _, o := range snapshotOpenFilesAt(false).files[idOfStat(fi)] {
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
	_, err := RewriteFile(context.Background(), p, want, upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1")})
	require.NoError(t, err)

	want = stateOf(t, p)
	holdOpen(t, "3>>", p) // an agent keeping its session open for appending does
	_, err = RewriteFile(context.Background(), p, want, upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "2")})
	var iu *store.InUseError
	require.ErrorAs(t, err, &iu)
	assert.Contains(t, iu.Reason, "held open for writing by pid")
	assert.Regexp(t, `pid [0-9]+ \((sh|sleep)\)`, iu.Reason, "the process is named (sh until it execs sleep)")
	got, _ := os.ReadFile(p)
	assert.Equal(t, "ABC\n", string(got), "left as the first rewrite made it")
}

// startWriter starts a process that opens path O_WRONLY|O_APPEND (as an agent resuming its
// session does), writes line when told (a byte on its stdin), and exits; it returns once
// /proc shows the descriptor, looked up directly (the shared /proc view is left as it is).
func startWriter(t *testing.T, path, line string) (write func()) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `exec 3>>"$1"; read x; printf '%s' "$2" >&3`, "sh", path, line)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	fi, err := os.Stat(path)
	require.NoError(t, err)
	fd := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "fd", "3")
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if st, err := os.Stat(fd); err == nil && os.SameFile(st, fi) {
			return func() {
				_, _ = in.Write([]byte("\n"))
				_ = in.Close()
				_ = cmd.Wait()
			}
		}
	}
	t.Fatal("the writer never opened the file")
	return nil
}

// Issue 9 finding 1: an agent that opens its session while fix is copying it (after the first
// in-use check) is seen by the final check, which takes a fresh view of /proc: the file is
// refused, and the line it writes later lands in the session.
func TestRewriteFileSeesAWriterThatOpenedDuringTheCopy(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	var write func()
	opened := func(dst io.Writer, src io.Reader) error {
		write = startWriter(t, p, "late\n")
		return upper(dst, src)
	}
	_, err := RewriteFile(context.Background(), p, stateOf(t, p), opened, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1")})
	var iu *store.InUseError
	require.ErrorAs(t, err, &iu)
	assert.Contains(t, iu.Reason, "held open for writing by pid")
	write()
	got, _ := os.ReadFile(p)
	assert.Equal(t, "abc\nlate\n", string(got), "the agent's line is in the session")
}

// Issue 9 finding 1: an agent that opens its session between the final check and the rename
// holds the old inode: the rename is rolled back, the file refused as in use, and what the
// agent writes afterwards is in the session.
func TestRewriteFileRollsBackWhenAWriterHoldsTheOldInode(t *testing.T) {
	for _, crossFS := range []bool{false, true} {
		t.Run(map[bool]string{false: "linked backup", true: "copied backup"}[crossFS], func(t *testing.T) {
			dir := t.TempDir()
			bkDir := filepath.Join(dir, "bk")
			if crossFS {
				shm, err := os.MkdirTemp("/dev/shm", "sessionfix-test-")
				if err != nil {
					t.Skip("no /dev/shm for a backup on another file system:", err)
				}
				t.Cleanup(func() { os.RemoveAll(shm) })
				bkDir = shm
			}
			p := filepath.Join(dir, "s.jsonl")
			require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
			orig, err := os.Stat(p)
			require.NoError(t, err)
			var write func()
			testHookBeforeRename = func(path string) { write = startWriter(t, path, "late\n") }
			defer func() { testHookBeforeRename = nil }()
			ch, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(bkDir, "1")})
			assert.Nil(t, ch, "nothing to record: the change was rolled back")
			var iu *store.InUseError
			require.ErrorAs(t, err, &iu)
			assert.Contains(t, iu.Reason, "rolled back")
			now, err := os.Stat(p)
			require.NoError(t, err)
			if bfi, err := os.Stat(filepath.Join(bkDir, "1")); err == nil && !crossFS {
				t.Errorf("the backup of a rolled-back change is left: %v", bfi.Name())
			}
			assert.True(t, os.SameFile(orig, now), "the original inode is back at the path")
			write()
			got, _ := os.ReadFile(p)
			assert.Equal(t, "abc\nlate\n", string(got), "the agent's line is in the session")
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				assert.False(t, strings.HasPrefix(e.Name(), "."), "temp file left behind: %s", e.Name())
			}
		})
	}
}

// Undo is guarded the same way: a process that opens the session between undo's last check
// and its rename is seen, the restore is rolled back and refused as in use, and its line stays.
func TestRestoreFileRollsBackWhenAWriterHoldsTheOldInode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	ch, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1")})
	require.NoError(t, err)
	var write func()
	testHookBeforeRename = func(path string) { write = startWriter(t, path, "late\n") }
	defer func() { testHookBeforeRename = nil }()
	err = RestoreFile(context.Background(), p, ch, false)
	var iu *store.InUseError
	require.ErrorAs(t, err, &iu)
	assert.Contains(t, iu.Reason, "rolled back")
	write()
	got, _ := os.ReadFile(p)
	assert.Equal(t, "ABC\nlate\n", string(got), "left as the run wrote it, with the agent's line")
}

// noWriterOpen answers from the kernel's count of writable opens: a reader does not count, a
// writer of another process does, so does one of ours; once it is gone the answer is yes again.
func TestNoWriterOpenCountsEveryWritableOpen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o600))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	if !noWriterOpen(f) {
		t.Skip("file leases are not available here (fcntl F_SETLEASE): /proc answers alone")
	}
	holdOpen(t, "3<", p)
	assert.True(t, noWriterOpen(f), "a reader is not a writer")

	w, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	assert.False(t, noWriterOpen(f), "our own writable descriptor counts")
	w.Close()
	assert.True(t, noWriterOpen(f))

	p2 := filepath.Join(dir, "t.jsonl")
	require.NoError(t, os.WriteFile(p2, []byte("{}\n"), 0o600))
	f2, err := os.Open(p2)
	require.NoError(t, err)
	defer f2.Close()
	holdOpen(t, "3>>", p2)
	assert.False(t, noWriterOpen(f2), "another process's writer counts")
	fi, err := f2.Stat()
	require.NoError(t, err)
	assert.Len(t, openWritersFresh(f2, fi), 1, "and /proc names it")
}

// A writer the kernel counts but /proc does not show (here: a descriptor of this very process,
// which the /proc walk leaves out like another user's process seen without privileges) refuses
// the file, without a name: replacing it would lose that writer's next writes.
func TestRewriteFileRefusesAWriterProcCannotName(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	probe, err := os.Open(p)
	require.NoError(t, err)
	ok := noWriterOpen(probe)
	probe.Close()
	if !ok {
		t.Skip("file leases are not available here (fcntl F_SETLEASE): an unnamed writer cannot be told")
	}
	w, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	want := stateOf(t, p)
	_, err = RewriteFile(context.Background(), p, want, upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1")})
	var iu *store.InUseError
	require.ErrorAs(t, err, &iu)
	assert.Contains(t, iu.Reason, "held open for writing by a process sessionfix cannot name")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "abc\n", string(b), "the file is left as it was")

	require.NoError(t, w.Close())
	_, err = RewriteFile(context.Background(), p, want, upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "2")})
	require.NoError(t, err, "once the writer is gone the file is rewritten")
	b, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "ABC\n", string(b))
}

// noWriterOpen reports whether the kernel counts no writable open of f's inode (leaseProbe).
func noWriterOpen(f *os.File) bool { return leaseProbe(f) == leaseNoWriter }
