package fileio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/store"
)

// NotTheFileError is a store path that, when it was opened, did not hold the regular file
// discovery found there: a symbolic link, a FIFO, a device or socket, or another file (another
// device and inode) — swapped in since by whoever can write its directory, or a link as root
// that leads out of its owner's reach. Nothing of it was read. Reason says what it held.
type NotTheFileError struct {
	Path   string
	Reason string
}

// Error is "not read: <Reason>" (the problem line it ends up in names the path).
func (e *NotTheFileError) Error() string { return "not read: " + e.Reason }

// ErrNotTheFile is what errors.Is finds in a *NotTheFileError.
var ErrNotTheFile = errors.New("not the file found")

// Is makes errors.Is(err, ErrNotTheFile) true.
func (e *NotTheFileError) Is(target error) bool { return target == ErrNotTheFile }

// IDOf is the device and inode of fi (the zero FileID where the platform does not say).
func IDOf(fi fs.FileInfo) store.FileID {
	if fi == nil {
		return store.FileID{}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return store.FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
	}
	return store.FileID{}
}

// OpenStore opens the store file at path for reading, the way every store is opened (issue 30
// finding 5): O_RDONLY|O_NOFOLLOW|O_NONBLOCK — a symbolic link is not followed, and a FIFO or
// device swapped in does not block the open (a thread blocked in open(2) ignores every signal
// and cancellation) — then fstat must show a regular file and, when want is known, want's
// device and inode: the file discovery found at path, not one swapped in since, by whoever can
// write a directory on its way, as a link, a FIFO or another file. When want is not known (a
// file undo or an agent room reads that no walk found), the links on path's way are resolved
// first (owner.Resolve: as root each must pass owner.LinkRefusal) and the file they lead to is
// opened the same way, and as root must still be what the path resolves to once open. Any of
// these is a *NotTheFileError, with nothing read. The returned file is in blocking mode; fi is
// its fstat.
func OpenStore(path string, want store.FileID) (f *os.File, fi os.FileInfo, err error) {
	target := path
	if !want.Known() {
		real, err := owner.Resolve(path)
		var le *owner.LinkError
		if errors.As(err, &le) {
			return nil, nil, &NotTheFileError{Path: path, Reason: le.Error()}
		}
		if err != nil {
			return nil, nil, err
		}
		target = real
	}
	f, err = openNonBlocking(target)
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) {
		return nil, nil, &NotTheFileError{Path: path, Reason: "it is now a symbolic link (not followed: replaced since it was found)"}
	}
	if err != nil {
		var pe *fs.PathError
		if target != path && errors.As(err, &pe) {
			return nil, nil, &fs.PathError{Op: pe.Op, Path: path, Err: pe.Err} // named as the caller named it
		}
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
			f = nil
		}
	}()
	if fi, err = f.Stat(); err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &NotTheFileError{Path: path, Reason: "it is " + typeName(fi.Mode()) + ", not a regular file (reading it could block the run)"}
	}
	switch {
	case want.Known():
		if got := IDOf(fi); got != want {
			return nil, nil, &NotTheFileError{Path: path, Reason: fmt.Sprintf(
				"it is another file than the one found there (device %d inode %d, found as device %d inode %d): replaced since, or reached through a directory swapped for a link",
				got.Dev, got.Ino, want.Dev, want.Ino)}
		}
	case owner.AsRoot():
		// A directory on the way swapped for a link between the resolution and the open.
		real, err := owner.Resolve(path)
		if rfi, lerr := os.Lstat(real); err != nil || real != target || lerr != nil || !os.SameFile(rfi, fi) {
			return nil, nil, &NotTheFileError{Path: path, Reason: "it changed while it was opened (a directory on its way swapped for a link?)"}
		}
	}
	if err := setBlocking(f); err != nil {
		return nil, nil, err
	}
	return f, fi, nil
}

// OpenRegular opens path read-only with O_NOFOLLOW|O_NONBLOCK and returns it (in blocking
// mode) only when fstat shows a regular file: a symbolic link, FIFO, device or socket at path is
// a *NotTheFileError. For a file beside a store (a SQLite journal) whose name, not a walk, says
// where it is.
func OpenRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := openNonBlocking(path)
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) {
		return nil, nil, &NotTheFileError{Path: path, Reason: "it is a symbolic link (not followed)"}
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotTheFileError{Path: path, Reason: "it is " + typeName(fi.Mode()) + ", not a regular file"}
	}
	if err == nil {
		err = setBlocking(f)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// typeName says what kind of file a mode is: "a FIFO (named pipe)", "a directory", …
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a " + m.Type().String() + " file"
}
