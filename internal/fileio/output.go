package fileio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/google/renameio/v2"
)

// maxLinkHops bounds how many symbolic links WriteOutputContext follows (Linux's own limit, ELOOP).
const maxLinkHops = 40

// OutputOption tunes WriteOutputContext.
type OutputOption func(*outputConfig)

type outputConfig struct {
	onWait func(name string)
}

// OnWait has WriteOutputContext call f (with the path as the user gave it, and its target
// when a link led there) before it waits for a FIFO that has no reader yet, so the caller can
// say why the run seems to hang (an `audit --out fifo` nobody reads).
func OnWait(f func(name string)) OutputOption {
	return func(c *outputConfig) { c.onWait = f }
}

// WriteOutputContext writes data to the output path a user named (a report, a table, a plan):
//
//   - "-" is stdout;
//   - a symbolic link is followed, hop by hop (a relative target against the link's real
//     directory, as the kernel does), and its final target is written by the rules below: the link itself is never
//     replaced;
//   - a link into this process's descriptor table (/dev/stdout, /dev/stderr: /proc/self/fd/N,
//     /dev/fd/N) writes to that descriptor itself, fd 1 through stdout (so the bytes keep
//     their order with everything else written there, and a file behind it is never
//     truncated or overwritten at another offset); another process's (/proc/PID/fd/N) is
//     opened and appended to;
//   - a regular file, or a path that does not exist yet, is written crash-safely: a temp file
//     in the same directory, fsync, rename over it, directory fsync (a reader never sees half a
//     report); an existing file keeps its permission bits and, best effort, its owner; a new one
//     is created 0644 less the umask;
//   - a character device (/dev/null, a terminal) or a FIFO is written through: opened O_WRONLY,
//     never created, truncated or renamed over (opening a FIFO waits for its reader);
//   - anything else (a directory, a block device, a socket) is refused with an error naming
//     the path and its type.
//
// It gives up when ctx ends (a signal) while it waits to open a FIFO nobody reads yet or for a
// reader to drain it: the error then wraps ctx.Err(). Errors name the path as the user gave it
// (and its resolved target when they differ).
func WriteOutputContext(ctx context.Context, stdout io.Writer, path string, data []byte, options ...OutputOption) error {
	var cfg outputConfig
	for _, o := range options {
		o(&cfg)
	}
	if path == "-" {
		_, err := stdout.Write(data)
		return err
	}
	target, fi, err := resolveOutput(path)
	if err != nil {
		return err
	}
	name := path
	if target != path {
		name = fmt.Sprintf("%s (→ %s)", path, target)
	}
	switch {
	case fi == nil:
		return replaceOutput(target, name, data, nil)
	case fi.Mode()&os.ModeSymlink != 0:
		// A descriptor link (resolveOutput stops only at those).
		if fd, own := ownDescriptor(target); own {
			if fd == 1 {
				_, err := stdout.Write(data)
				return err
			}
			if err := writeFD(fd, data); err != nil {
				return fmt.Errorf("write %s: %w", name, err)
			}
			return nil
		}
		return writeThrough(ctx, target, name, data, os.O_WRONLY|os.O_APPEND)
	case fi.Mode().IsRegular():
		return replaceOutput(target, name, data, fi)
	case fi.Mode()&os.ModeNamedPipe != 0:
		if cfg.onWait != nil {
			probe, ready := fifoHasReader(target)
			if probe != nil {
				// Held open until the report is written: its close alone would be an end of
				// file for a reader already waiting in read(), which then misses the report.
				defer probe.Close()
			}
			if !ready {
				cfg.onWait(name)
			}
		}
		return writeThrough(ctx, target, name, data, os.O_WRONLY)
	case fi.Mode()&os.ModeCharDevice != 0:
		return writeThrough(ctx, target, name, data, os.O_WRONLY)
	default:
		return fmt.Errorf("write %s: %s, not a file, device or FIFO: refusing to write a report there", name, fileKind(fi.Mode()))
	}
}

// resolveOutput follows the symbolic links of path to the file that would be written. fi is
// nil when that file does not exist yet (its directory must), the descriptor link itself when
// the chain reaches a process's descriptor table, else the target's Lstat.
func resolveOutput(path string) (string, os.FileInfo, error) {
	cur := path
	for hop := 0; ; hop++ {
		fi, err := os.Lstat(cur)
		if errors.Is(err, os.ErrNotExist) {
			return cur, nil, nil
		}
		if err != nil {
			return "", nil, fmt.Errorf("write %s: %w", path, err)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return cur, fi, nil
		}
		if isDescriptorLink(cur) {
			return cur, fi, nil
		}
		if hop == maxLinkHops {
			return "", nil, fmt.Errorf("write %s: more than %d symbolic links", path, maxLinkHops)
		}
		to, err := os.Readlink(cur)
		if err != nil {
			return "", nil, fmt.Errorf("write %s: %w", path, err)
		}
		if !filepath.IsAbs(to) {
			// Relative to the link's real directory, as the kernel resolves it: lexically
			// joining would take ".." across a symlinked directory the wrong way.
			dir, err := filepath.EvalSymlinks(filepath.Dir(cur))
			if err != nil {
				return "", nil, fmt.Errorf("write %s: %w", path, err)
			}
			to = filepath.Join(dir, to)
		}
		cur = to
	}
}

// isDescriptorLink reports whether p is an entry of a descriptor table: /proc/self/fd/N,
// /proc/thread-self/fd/N, /proc/PID/fd/N or /dev/fd/N. Their targets ("pipe:[123]", a deleted
// file) are not paths to follow; opening the link itself reaches the open file.
func isDescriptorLink(p string) bool {
	dir := filepath.Dir(filepath.Clean(p))
	if dir == "/dev/fd" {
		return true
	}
	return strings.HasPrefix(dir, "/proc/") && filepath.Base(dir) == "fd"
}

// ownDescriptor returns N when p is /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N or
// /proc/<this pid>/fd/N.
func ownDescriptor(p string) (int, bool) {
	p = filepath.Clean(p)
	fd, err := strconv.Atoi(filepath.Base(p))
	if err != nil || fd < 0 {
		return 0, false
	}
	switch dir := filepath.Dir(p); dir {
	case "/dev/fd", "/proc/self/fd", "/proc/thread-self/fd", "/proc/" + strconv.Itoa(os.Getpid()) + "/fd":
		return fd, true
	}
	return 0, false
}

// fifoHasReader reports whether the FIFO at path has a reader now: a non-blocking open for
// writing fails with ENXIO when it has none (fifo(7)). Any other outcome counts as a reader
// (the blocking open that follows reports a real error). When the open succeeded, probe is
// that open file: the caller closes it only after writing through its own open, since a
// close that leaves the FIFO without writers is an end of file for a waiting reader (a
// `cat fifo > got` started before the run exited with nothing and the report was lost, exit 0;
// review5).
func fifoHasReader(path string) (probe *os.File, ready bool) {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, !errors.Is(err, syscall.ENXIO)
	}
	return f, true
}

// writeThrough opens an existing device, FIFO or descriptor link and writes data to it. The
// open (a FIFO's waits for a reader) and the write (a full pipe waits for the reader) give up
// when ctx ends; a file opened after that is closed at once.
func writeThrough(ctx context.Context, target, name string, data []byte, flag int) error {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(target, flag, 0)
		ch <- opened{f, err}
	}()
	var f *os.File
	select {
	case o := <-ch:
		if o.err != nil {
			return fmt.Errorf("write %s: %w", name, o.err)
		}
		f = o.f
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return fmt.Errorf("write %s: %w", name, ctx.Err())
	}
	stop := context.AfterFunc(ctx, func() { f.Close() }) // unblocks a Write to a full pipe
	_, werr := f.Write(data)
	if !stop() {
		return fmt.Errorf("write %s: %w", name, ctx.Err())
	}
	cerr := f.Close()
	if werr != nil {
		return fmt.Errorf("write %s: %w", name, werr)
	}
	if cerr != nil {
		return fmt.Errorf("write %s: %w", name, cerr)
	}
	return nil
}

// replaceOutput writes data to a temp sibling of target and renames it over target (old is
// target's current FileInfo, nil when it does not exist).
func replaceOutput(target, name string, data []byte, old os.FileInfo) error {
	dir := filepath.Dir(target)
	opts := []renameio.Option{renameio.WithTempDir(dir), renameio.WithPermissions(0o644)}
	if old != nil {
		opts = []renameio.Option{renameio.WithTempDir(dir), renameio.WithStaticPermissions(modeBits(old.Mode()))}
	}
	pf, err := renameio.NewPendingFile(target, opts...)
	if err != nil {
		return tempError(name, dir, err)
	}
	defer pf.Cleanup()
	if old != nil {
		chownLike(pf.File, old)
	}
	if _, err := pf.Write(data); err != nil {
		return tempError(name, dir, err)
	}
	if err := pf.CloseAtomicallyReplace(); err != nil {
		return tempError(name, dir, err)
	}
	return SyncDir(dir)
}

// tempError words a failure of the temp file replaceOutput writes in dir: the temp's random
// name ("open out/.x.csv9172705693470836540: read-only file system") means nothing to the
// user, so the error names the output, the cause and the directory the temp was written in
// (the cause stays wrapped for errors.Is).
func tempError(name, dir string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return fmt.Errorf("write %s: %w (while writing a temporary file in %s to rename over it)", name, err, dir)
}

// fileKind names a file type for an error message.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSocket != 0:
		return "a socket"
	default:
		return "a special file (" + m.Type().String() + ")"
	}
}

// SameOutput reports whether two output paths (neither "-") would overwrite each other: they
// resolve (through symbolic links) to the same regular file, or to the same path that does not
// exist yet. Two writes to one device or FIFO do not overwrite each other.
func SameOutput(a, b string) bool {
	ta, fa, erra := resolveOutput(a)
	tb, fb, errb := resolveOutput(b)
	if erra != nil || errb != nil {
		return false
	}
	switch {
	case fa == nil && fb == nil:
		aa, _ := filepath.Abs(ta)
		ab, _ := filepath.Abs(tb)
		return aa == ab
	case fa == nil || fb == nil:
		return false
	case fa.Mode().IsRegular() && fb.Mode().IsRegular():
		return os.SameFile(fa, fb)
	}
	return false
}
