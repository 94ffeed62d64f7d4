package owner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// MaxConfigSize bounds what ReadFile reads: a config is small, and a file that never ends (a
// device swapped in) must not fill memory.
const MaxConfigSize = 64 << 20

// ReadFile reads the config file at path the way sessionfix reads any file a user may control:
// as root, the links on its way are resolved one by one and each must pass LinkRefusal
// (Resolve), the file they lead to is opened O_NOFOLLOW; always O_NONBLOCK (a FIFO swapped in
// for a config does not block the open), and the descriptor's fstat must show a regular file —
// off root a FIFO or pipe is read as it is (process substitution: --mcp-config <(…)). The
// returned fi is the fstat of the file read: who owns what was read (Untrusted), never a
// second look at the path. /dev/fd/N and /proc/self/fd/N name this process's own descriptors and
// are opened as they are.
func ReadFile(path string) ([]byte, fs.FileInfo, error) {
	target := path
	own := strings.HasPrefix(path, "/dev/fd/") || strings.HasPrefix(path, "/proc/self/fd/")
	flags := syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK
	if AsRoot() && !own {
		real, err := Resolve(path)
		if err != nil {
			return nil, nil, err
		}
		target = real
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(target, flags, 0)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Path = path
		}
		if errors.Is(err, syscall.ELOOP) {
			return nil, nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("a symbolic link was swapped in while it was opened")}
		}
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	switch {
	case fi.Mode().IsRegular():
	case fi.Mode()&fs.ModeNamedPipe != 0 && (!AsRoot() || own):
		// The operator's own pipe: read as it comes (os waits for data in its poller).
	default:
		return nil, nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("not a regular file (%s)", fi.Mode().Type())}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > MaxConfigSize {
		return nil, nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d MiB: not a config", MaxConfigSize>>20)}
	}
	return data, fi, nil
}
