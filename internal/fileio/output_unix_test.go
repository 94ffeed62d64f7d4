//go:build unix

package fileio

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

const report = "server,tool\nlit,literature.search_pubmed\n"

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	return fi.Sys().(*syscall.Stat_t).Ino
}

func TestWriteOutputCharDeviceIsWrittenThrough(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating a character device (mknod) needs root; run as root to cover the /dev/null case")
	}
	dev := filepath.Join(t.TempDir(), "fakenull")
	if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Skipf("mknod c 1 3 refused here (%v): a container without CAP_MKNOD", err)
	}
	require.NoError(t, WriteOutputContext(context.Background(), io.Discard, dev, []byte(report)))
	fi, err := os.Lstat(dev)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeCharDevice, "still a character device, not replaced by a regular file: %v", fi.Mode())
	assert.Equal(t, uint64(unix.Mkdev(1, 3)), uint64(fi.Sys().(*syscall.Stat_t).Rdev))
	ents, err := os.ReadDir(filepath.Dir(dev))
	require.NoError(t, err)
	assert.Len(t, ents, 1, "no temp file left beside the device")
}

func TestWriteOutputFIFOIsWrittenThrough(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "report.fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo) // blocks until the writer opens
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			got <- "read: " + err.Error()
			return
		}
		got <- string(b)
	}()
	require.NoError(t, WriteOutputContext(context.Background(), io.Discard, fifo, []byte(report)))
	assert.Equal(t, report, <-got)
	fi, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeNamedPipe, "still a FIFO: %v", fi.Mode())
}

func TestWriteOutputSymlinkIsFollowedNotReplaced(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.csv")
	require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o640))
	require.NoError(t, os.Symlink("target.csv", filepath.Join(dir, "hop.csv")))
	link := filepath.Join(dir, "link.csv")
	require.NoError(t, os.Symlink("hop.csv", link)) // link → hop → target, both relative

	require.NoError(t, WriteOutputContext(context.Background(), io.Discard, link, []byte(report)))
	for name, want := range map[string]string{"link.csv": "hop.csv", "hop.csv": "target.csv"} {
		to, err := os.Readlink(filepath.Join(dir, name))
		require.NoError(t, err, "%s is still a symbolic link", name)
		assert.Equal(t, want, to)
	}
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, report, string(b))
	fi, err := os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the target keeps its mode")
}

func TestWriteOutputDanglingSymlinkCreatesItsTarget(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link.csv")
	require.NoError(t, os.Symlink("sub-missing.csv", link))
	require.NoError(t, WriteOutputContext(context.Background(), io.Discard, link, []byte(report)))
	to, err := os.Readlink(link)
	require.NoError(t, err)
	assert.Equal(t, "sub-missing.csv", to)
	b, err := os.ReadFile(filepath.Join(dir, "sub-missing.csv"))
	require.NoError(t, err)
	assert.Equal(t, report, string(b))
}

func TestWriteOutputDescriptorLinkIsOpenedThrough(t *testing.T) {
	// /dev/stdout is a link to /proc/self/fd/1, whose target ("pipe:[123]") is no path: the
	// same shape with a pipe of our own, so the test's stdout is left alone.
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd on this system")
	}
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	link := filepath.Join(t.TempDir(), "stdout")
	require.NoError(t, os.Symlink("/proc/self/fd/"+strconv.Itoa(int(w.Fd())), link))
	require.NoError(t, WriteOutputContext(context.Background(), io.Discard, link, []byte(report)))
	require.NoError(t, w.Close())
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, report, string(b))
	_, err = os.Readlink(link)
	assert.NoError(t, err, "the link stays a link")
}

func TestWriteOutputRegularFileIsReplacedAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pairs.csv")
	require.NoError(t, os.WriteFile(path, []byte("an older, longer report\n\n\n"), 0o600))
	before := inode(t, path)
	require.NoError(t, WriteOutputContext(context.Background(), io.Discard, path, []byte(report)))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, report, string(b))
	assert.NotEqual(t, before, inode(t, path), "a new inode renamed over the old one, not written in place")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the replaced file keeps its mode")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, ents, 1, "no temp file left behind")
}

func TestWriteOutputNewFile(t *testing.T) {
	old := unix.Umask(0o022)
	defer unix.Umask(old)
	path := filepath.Join(t.TempDir(), "new.csv")
	require.NoError(t, WriteOutputContext(context.Background(), io.Discard, path, []byte(report)))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, report, string(b))
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular())
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
}

func TestWriteOutputDashIsStdout(t *testing.T) {
	t.Chdir(t.TempDir())
	var out bytes.Buffer
	require.NoError(t, WriteOutputContext(context.Background(), &out, "-", []byte(report)))
	assert.Equal(t, report, out.String())
	_, err := os.Lstat("-")
	assert.ErrorIs(t, err, os.ErrNotExist, "no file named -")
}

func TestWriteOutputRefusesDirectoryAndSocket(t *testing.T) {
	dir := t.TempDir()
	err := WriteOutputContext(context.Background(), io.Discard, dir, []byte(report))
	require.Error(t, err)
	assert.Contains(t, err.Error(), dir+": a directory")

	sock := filepath.Join(dir, "s.sock")
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	require.NoError(t, unix.Bind(fd, &unix.SockaddrUnix{Name: sock}))
	err = WriteOutputContext(context.Background(), io.Discard, sock, []byte(report))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a socket")
	fi, err := os.Lstat(sock)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSocket, "the socket is left as it was")
}

func TestSameOutput(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.csv")
	require.NoError(t, os.WriteFile(a, nil, 0o644))
	require.NoError(t, os.Symlink("a.csv", filepath.Join(dir, "l.csv")))
	fifo := filepath.Join(dir, "f")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	assert.True(t, SameOutput(a, filepath.Join(dir, "l.csv")), "a link to the file")
	assert.True(t, SameOutput(filepath.Join(dir, "new.csv"), filepath.Join(dir, ".", "new.csv")), "one path not created yet")
	assert.False(t, SameOutput(a, filepath.Join(dir, "new.csv")))
	assert.False(t, SameOutput(fifo, fifo), "two writes to one FIFO do not overwrite each other")
	if os.Geteuid() == 0 {
		dev := filepath.Join(dir, "fakenull")
		if unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))) == nil {
			assert.False(t, SameOutput(dev, dev), "nor to one device")
		}
	}
}

func TestWriteOutputDevStdoutGoesThroughStdout(t *testing.T) {
	// /dev/stdout and /dev/fd/1 are this process's fd 1: written through the stdout writer, so
	// a report keeps its order with everything else written there (a shell's "> file" is
	// never overwritten at another offset).
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd on this system")
	}
	for _, p := range []string{"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"} {
		if _, err := os.Lstat(p); err != nil {
			t.Logf("%s: %v (not on this system)", p, err)
			continue
		}
		var out bytes.Buffer
		out.WriteString("before\n")
		require.NoError(t, WriteOutputContext(context.Background(), &out, p, []byte(report)))
		assert.Equal(t, "before\n"+report, out.String(), p)
	}
	link := filepath.Join(t.TempDir(), "out")
	require.NoError(t, os.Symlink("/dev/stdout", link))
	var out bytes.Buffer
	require.NoError(t, WriteOutputContext(context.Background(), &out, link, []byte(report)))
	assert.Equal(t, report, out.String(), "a link to /dev/stdout")
}

func TestWriteOutputRelativeLinkInSymlinkedDirectory(t *testing.T) {
	// root/alias → real/sub; real/sub/link.csv → ../t.csv means root/real/t.csv (the kernel
	// resolves ".." in the link's real directory), not root/t.csv.
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "real", "sub"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join("real", "sub"), filepath.Join(root, "alias")))
	require.NoError(t, os.Symlink("../t.csv", filepath.Join(root, "real", "sub", "link.csv")))
	require.NoError(t, WriteOutputContext(context.Background(), io.Discard, filepath.Join(root, "alias", "link.csv"), []byte(report)))
	b, err := os.ReadFile(filepath.Join(root, "real", "t.csv"))
	require.NoError(t, err)
	assert.Equal(t, report, string(b))
	_, err = os.Lstat(filepath.Join(root, "t.csv"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestWriteOutputFIFOGivesUpWhenCancelled(t *testing.T) {
	// A FIFO nobody reads: opening it waits; a signal (the run's context) must end the wait.
	fifo := filepath.Join(t.TempDir(), "nobody-reads")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := WriteOutputContext(ctx, io.Discard, fifo, []byte(report))
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "write "+fifo+": ")
	fi, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeNamedPipe, "still a FIFO")
}

func TestWriteOutputFullPipeGivesUpWhenCancelled(t *testing.T) {
	// A reader that opened the FIFO but reads nothing: the write fills the pipe and waits; the
	// cancel closes the file, which ends the write.
	fifo := filepath.Join(t.TempDir(), "slow-reader")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	r, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0) // a reader that never reads
	require.NoError(t, err)
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	big := bytes.Repeat([]byte("x"), 4<<20) // far more than a pipe holds
	done := make(chan error, 1)
	go func() { done <- WriteOutputContext(ctx, io.Discard, fifo, big) }()
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}
