package fileio

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sessionfix/sessionfix/internal/owner"
)

// withoutProc runs the test t again in a child process of its own mount namespace where /proc
// is unmounted (needs root), and reports whether this is that child: the caller then runs its
// body; in the parent it returns false once the child passed. Skipped off root.
func withoutProc(t *testing.T) bool {
	t.Helper()
	if os.Getenv("SESSIONFIX_TEST_NO_PROC") == t.Name() {
		if err := unix.Unmount("/proc", unix.MNT_DETACH); err != nil {
			t.Fatalf("unmount /proc: %v", err)
		}
		if _, err := os.Stat("/proc/self/fd"); err == nil {
			t.Fatal("/proc/self/fd is still there")
		}
		return true
	}
	if !owner.AsRoot() {
		t.Skip("needs root: unmounts /proc in a mount namespace of its own")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "SESSIONFIX_TEST_NO_PROC="+t.Name())
	cmd.SysProcAttr = &unix.SysProcAttr{Unshareflags: unix.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "%s", out)
	return false
}

// TestRewriteFileDirectorySwappedForALinkWithoutProc: TestRewriteFileDirectorySwappedForALink
// where no /proc is mounted (a container, a chroot): the store's directory is still held open
// and every name looked up through it (the *at system calls need no /proc). Before, nothing was
// pinned without /proc: the temp was created, linked and renamed by path, in the directory the
// link led to.
func TestRewriteFileDirectorySwappedForALinkWithoutProc(t *testing.T) {
	if !withoutProc(t) {
		return
	}
	rewriteWithDirectorySwapped(t, true)
	rewriteWithDirectorySwapped(t, false) // no /proc: a named temp too
}
