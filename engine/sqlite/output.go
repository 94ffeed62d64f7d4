package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/store"
)

// Output is a SQLite database an operator named as an output file (the fleet findings database
// of --format sqlite, engine/sqlite/fleetdb): opened by OpenOutput with one connection, pinned
// to the file that was checked, and written in BEGIN IMMEDIATE transactions (Begin, Commit).
type Output struct {
	// Path is the path as the operator gave it (errors name it so).
	Path string
	// Created is true when OpenOutput created the file (it was missing): an empty file, which
	// SQLite takes for a new database.
	Created bool
	h       *handle
	conn    *sqlx.Conn
	busy    time.Duration
	pin     store.FileID
}

// NotSQLiteError is an output path holding a file that is neither empty nor a SQLite database
// (its first 16 bytes are not Header): nothing is written into it.
type NotSQLiteError struct{ Path string }

func (e *NotSQLiteError) Error() string {
	return fmt.Sprintf("%s is not a SQLite database (its first bytes are not %q): refusing to write into it", e.Path, bytes.TrimRight(Header, "\x00"))
}

// OpenOutput opens the SQLite database at path for writing, creating it when missing. A missing
// file is created empty with O_CREAT|O_EXCL|O_NOFOLLOW (mode 0644 less the umask; its directory
// fsynced): a link or file put there meanwhile is never written through, it is opened as an
// existing file is. An existing file is opened as every store is (fileio.OpenStore: links
// resolved first, as root each only to what its owner owns (owner.Resolve); O_NOFOLLOW|
// O_NONBLOCK; a regular file, never a FIFO or device), must be empty or start with Header
// (else a *NotSQLiteError), and SQLite's own open is pinned to that file (the open guard: a
// file swapped in since, a FIFO, or a journal with other hard links is refused, a
// *fileio.NotTheFileError). busy is how long Begin waits for another writer's lock (another
// host writing the same shared file) before refusing with a *store.InUseError.
func OpenOutput(ctx context.Context, path string, busy time.Duration) (*Output, error) {
	if guardErr != nil {
		return nil, fmt.Errorf("open %s: %w", path, guardErr)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	o := &Output{Path: path, busy: busy}
	real := abs
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	switch {
	case err == nil:
		fi, serr := f.Stat()
		f.Close()
		if serr != nil {
			return nil, fmt.Errorf("open %s: %w", path, serr)
		}
		o.Created, o.pin = true, fileio.IDOf(fi)
		if err := fileio.SyncDir(filepath.Dir(abs)); err != nil {
			o.removeCreated()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	case errors.Is(err, fs.ErrExist):
		if r, rerr := owner.Resolve(abs); rerr == nil {
			real = r
		}
		f, fi, err := fileio.OpenStore(abs, store.FileID{})
		if err != nil {
			if errors.Is(err, fileio.ErrNotTheFile) {
				return nil, err
			}
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		var hdr [16]byte
		n, rerr := io.ReadFull(f, hdr[:])
		f.Close()
		if rerr != nil && !errors.Is(rerr, io.EOF) && !errors.Is(rerr, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("read %s: %w", path, rerr)
		}
		if n > 0 && !bytes.Equal(hdr[:n], Header[:n]) || n > 0 && n < len(hdr) {
			return nil, &NotSQLiteError{Path: path}
		}
		o.pin = fileio.IDOf(fi)
	default:
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	h, err := openHeldDB(real, modeRW, busy, o.pin)
	if err != nil {
		o.removeCreated()
		return nil, err
	}
	conn, err := h.Connx(ctx)
	if err != nil {
		h.Close()
		o.removeCreated()
		return nil, err
	}
	o.h, o.conn = h, conn
	return o, nil
}

// Begin starts a write transaction (BEGIN IMMEDIATE), waiting up to the busy timeout for
// another connection's write lock; a lock held longer is a *store.InUseError.
func (o *Output) Begin(ctx context.Context) (*sqlx.Tx, error) {
	return beginWrite(ctx, o.conn, o.Path, o.busy)
}

// Commit commits tx (a COMMIT kept busy past the timeout: a *store.InUseError, rolled back).
func (o *Output) Commit(tx *sqlx.Tx) error { return commit(tx, o.Path, o.busy) }

// Close closes the connection. With discard, a file OpenOutput created is removed again (when
// the path still names it): a run that committed nothing leaves no empty database behind.
func (o *Output) Close(discard bool) error {
	var err error
	if o.conn != nil {
		err = o.conn.Close()
	}
	if o.h != nil {
		if cerr := o.h.Close(); err == nil {
			err = cerr
		}
	}
	if discard {
		o.removeCreated()
	}
	return err
}

// removeCreated removes the file OpenOutput created, if the path still names that file.
func (o *Output) removeCreated() {
	if !o.Created {
		return
	}
	if fi, err := os.Lstat(o.Path); err == nil && fi.Mode().IsRegular() && fileio.IDOf(fi) == o.pin {
		_ = os.Remove(o.Path)
	}
}
