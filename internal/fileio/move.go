package fileio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/store"
)

// Move is one file MoveFile moved: where from and to, the directories it created for to
// (outermost first), and the file's identity and state when it was moved (UnmoveFile's "is it
// still the file the run moved, unchanged" test). Units: Size bytes; Dev/Ino the file
// system's numbers (0 where unknown).
type Move struct {
	From  string          `json:"from"`
	To    string          `json:"to"`
	Made  []string        `json:"made_dirs,omitempty"`
	Dev   uint64          `json:"dev,omitempty"`
	Ino   uint64          `json:"ino,omitempty"`
	State store.FileState `json:"state"`
}

// ErrTargetExists means a move would replace a file at its target.
var ErrTargetExists = errors.New("a file is already there")

// MoveFile moves the regular file at from to to, durably and without ever replacing a file:
// to must not exist (ErrTargetExists, wrapped); its missing parent directories are created
// (mode 0700; as root, given the owner and group of the directory each is made in:
// giveMadeDirs) and recorded in Move.Made. The file is opened without following a link
// (O_NOFOLLOW: a symbolic link at from is refused) and refused with an *store.InUseError when
// another process holds it open for writing (a read lease, else /proc). The move is a hard link
// at to, the directories fsynced, then the name from removed and its directory fsynced: a crash
// leaves the file under from, or under both names (one inode), never under neither. Both names
// must be on one file system (the same home): a link across file systems fails (EXDEV).
func MoveFile(ctx context.Context, from, to string) (Move, error) {
	m := Move{From: from, To: to}
	if err := ctx.Err(); err != nil {
		return m, err
	}
	if err := Fault("move", from); err != nil {
		return m, err
	}
	f, err := openNoFollow(from)
	if err != nil {
		return m, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return m, err
	}
	if !fi.Mode().IsRegular() {
		return m, fmt.Errorf("%s: not a regular file (%s)", from, fi.Mode().Type())
	}
	if w := openWritersFresh(f, fi); len(w) > 0 {
		return m, &store.InUseError{Path: from, Reason: "open for writing by " + strings.Join(w, ", ")}
	}
	if _, err := os.Lstat(to); err == nil {
		return m, fmt.Errorf("%s: %w", to, ErrTargetExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return m, err
	}
	m.Dev, m.Ino = devIno(fi)
	m.State = store.FileState{Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime()}
	// Create the missing parents of to, outermost first.
	var missing []string
	for d := filepath.Dir(to); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return m, err
		}
		missing = append([]string{d}, missing...)
		if filepath.Dir(d) == d {
			break
		}
	}
	for _, d := range missing {
		if err := os.Mkdir(d, 0o700); err != nil {
			return m, err
		}
		m.Made = append(m.Made, d)
	}
	if err := giveMadeDirs(m.Made); err != nil {
		removeMade(m.Made)
		m.Made = nil
		return m, err
	}
	if err := os.Link(from, to); err != nil {
		removeMade(m.Made)
		m.Made = nil
		if errors.Is(err, fs.ErrExist) {
			return m, fmt.Errorf("%s: %w", to, ErrTargetExists)
		}
		return m, err
	}
	if err := syncMoveDirs(to, m.Made); err != nil {
		return m, err
	}
	if err := Fault("move-unlink", from); err != nil {
		return m, err
	}
	if err := os.Remove(from); err != nil {
		return m, err
	}
	return m, SyncDir(filepath.Dir(from))
}

// syncMoveDirs fsyncs the directory holding to and, for each directory made, its parent.
func syncMoveDirs(to string, made []string) error {
	dirs := []string{filepath.Dir(to)}
	for _, d := range made {
		dirs = append(dirs, filepath.Dir(d))
	}
	for _, d := range dirs {
		if err := SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// removeMade removes the directories of made that are empty, innermost first.
func removeMade(made []string) {
	for i := len(made) - 1; i >= 0; i-- {
		if os.Remove(made[i]) != nil {
			return
		}
		_ = SyncDir(filepath.Dir(made[i]))
	}
}

// UnmoveFile moves a file MoveFile moved back: the file at m.To must be a regular file, the
// same inode (Dev/Ino, where recorded) and, unless force, of the recorded size and mtime — an
// agent may have appended to it since (a *store.ChangedError says so); m.From must not exist
// (ErrTargetExists) unless it is the same inode (a crash of MoveFile between link and
// unlink: only the name at m.To is removed). Nothing at m.To and a regular file at m.From is a
// move never made (or made undone): nil. The directories the move made are removed when
// empty. Same durability as MoveFile.
func UnmoveFile(ctx context.Context, m Move, force bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := openNoFollow(m.To)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if fi, ferr := os.Lstat(m.From); ferr == nil && fi.Mode().IsRegular() {
				removeMade(m.Made)
				return nil // never moved (a run killed before the link), or moved back already
			}
			return &store.ChangedError{Path: m.To, Reason: "no file is there any more"}
		}
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s)", m.To, fi.Mode().Type())
	}
	if dev, ino := devIno(fi); m.Ino != 0 && (dev != m.Dev || ino != m.Ino) {
		return &store.ChangedError{Path: m.To, Reason: "another file is there now (not the one the run moved)"}
	}
	if !force && (fi.Size() != m.State.Size || !fi.ModTime().Equal(m.State.ModTime)) {
		return &store.ChangedError{Path: m.To, Reason: fmt.Sprintf("written to since the run (size %d→%d): resumed at its new place", m.State.Size, fi.Size())}
	}
	if w := openWritersFresh(f, fi); len(w) > 0 {
		return &store.InUseError{Path: m.To, Reason: "open for writing by " + strings.Join(w, ", ")}
	}
	if cur, err := os.Lstat(m.From); err == nil {
		if !os.SameFile(cur, fi) {
			return fmt.Errorf("%s: %w", m.From, ErrTargetExists)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	} else if err := os.Link(m.To, m.From); err != nil {
		return err
	}
	if err := SyncDir(filepath.Dir(m.From)); err != nil {
		return err
	}
	if err := os.Remove(m.To); err != nil {
		return err
	}
	if err := SyncDir(filepath.Dir(m.To)); err != nil {
		return err
	}
	removeMade(m.Made)
	return nil
}
