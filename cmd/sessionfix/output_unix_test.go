//go:build unix

package main

import (
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestAuditOutputsNeverReplaceDevicesOrLinks is issue 8 item 1: the README's cron example
// (--out /dev/null) run as root replaced the device with a regular file, and a symlinked
// --tools-out was replaced by a file while its target kept the old content.
func TestAuditOutputsNeverReplaceDevicesOrLinks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating a character device (mknod) needs root; run as root to cover --out /dev/null")
	}
	dir := t.TempDir()
	null := filepath.Join(dir, "fakenull")
	if err := unix.Mknod(null, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Skipf("mknod c 1 3 refused here (%v): a container without CAP_MKNOD", err)
	}
	target := filepath.Join(dir, "tools-target.csv")
	require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o644))
	link := filepath.Join(dir, "tools.csv")
	require.NoError(t, os.Symlink(target, link))

	inv := "../../fixtures/qwen-settings/inventory.json"
	r := runCLI(t, testEnv(t), "", "audit", "--settings", "../../fixtures/qwen-settings/settings.json", "--inventory", inv,
		"--fail-on", "lost", "--out", null, "--tools-out", link)
	require.NotEqual(t, exitcode.Usage, r.code, r.err)
	assert.Empty(t, r.out)

	fi, err := os.Lstat(null)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeCharDevice, "--out device still a character device: %v", fi.Mode())
	fi, err = os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSymlink, "--tools-out link still a link: %v", fi.Mode())
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Contains(t, string(b), "server,tool,registered_name", "the link's target got the tools table")

	r = runCLI(t, testEnv(t), "", "audit", "--inventory", inv, "--out", null, "--tools-out", null)
	assert.Equal(t, exitcode.OK, r.code, "two reports to one device do not overwrite each other: %s", r.err)
	fi, err = os.Lstat(null)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeCharDevice)
}
