package gemini_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sessionfix/sessionfix/agent/gemini"
	"github.com/sessionfix/sessionfix/internal/owner"
)

// TestProjectRootsAsRootDoesNotWaitOnAFIFO: as root (a scan of users' homes from cron), a
// project's .project_root or the home's projects.json that its user replaced with a FIFO gives
// no root and the run goes on; one that is a link to a file another user owns is not read.
// Before, they were read with os.ReadFile: the FIFO's open(2) waited for a writer for ever
// (sessionfix scan of such a ~/.gemini never ended), and the link was followed.
func TestProjectRootsAsRootDoesNotWaitOnAFIFO(t *testing.T) {
	if !owner.AsRoot() {
		t.Skip("as root only: off root a FIFO the user names is theirs to read (process substitution)")
	}
	home := filepath.Join(t.TempDir(), ".gemini")
	ops, lab := filepath.Join(home, "tmp", "ops"), filepath.Join(home, "tmp", "lab")
	for _, d := range []string{ops, lab} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "chats"), 0o755))
	}
	require.NoError(t, unix.Mkfifo(filepath.Join(home, "projects.json"), 0o600))
	require.NoError(t, unix.Mkfifo(filepath.Join(ops, ".project_root"), 0o600))
	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("/root-only\n"), 0o600))
	require.NoError(t, os.Chown(secret, 1234, 1234))
	link := filepath.Join(lab, ".project_root")
	require.NoError(t, os.Symlink(secret, link))
	require.NoError(t, os.Lchown(link, 65534, 65534))
	sessions := []string{filepath.Join(ops, "chats", "session-1.json"), filepath.Join(lab, "chats", "session-2.json")}
	done := make(chan []string, 1)
	go func() { done <- gemini.ProjectRoots(home, sessions) }()
	select {
	case roots := <-done:
		assert.Empty(t, roots)
	case <-time.After(10 * time.Second):
		for _, f := range []string{filepath.Join(home, "projects.json"), filepath.Join(ops, ".project_root")} {
			if w, err := os.OpenFile(f, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
		t.Fatal("ProjectRoots is blocked opening a FIFO")
	}
}
