package runlog

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/google/renameio/v2"

	"github.com/sessionfix/sessionfix/internal/fileio"
)

// CheckStateDir makes sure runs can be recorded under dir before anything is rewritten,
// without creating anything: the nearest existing directory on the way to <dir>/runs must be
// a writable, searchable directory. The error names dir and the path that failed and says
// nothing was changed.
func CheckStateDir(dir string) error {
	p := filepath.Join(dir, "runs")
	for {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("state directory %s is not usable (nothing was changed): %s is not a directory", dir, p)
			}
			if err := syscall.Access(p, 0x2|0x1); err != nil { // W_OK|X_OK
				return fmt.Errorf("state directory %s is not writable (nothing was changed): %s: %w", dir, p, err)
			}
			return nil
		}
		parent := filepath.Dir(p)
		if parent == p {
			return fmt.Errorf("state directory %s is not usable (nothing was changed): %w", dir, err)
		}
		p = parent
	}
}

// replaceStateFile replaces path, one of a run's own state files (manifest.json), so that a
// crash at any instant leaves the old file or the new one, never neither, and the new one
// stays once this returned nil: a temp sibling (renameio's ".<name><digits>", which
// CleanLeftovers recognises) is filled by write, fsynced, renamed over path, and the directory
// is fsynced (only then is the rename itself durable). The file gets mode 0600, or the mode
// of the file it replaces.
func replaceStateFile(path string, write func(*renameio.PendingFile) error) error {
	dir := filepath.Dir(path)
	pf, err := renameio.NewPendingFile(path, renameio.WithTempDir(dir), renameio.WithPermissions(0o600), renameio.WithExistingPermissions())
	if err != nil {
		return err
	}
	defer pf.Cleanup()
	if err := write(pf); err != nil {
		return err
	}
	if err := pf.CloseAtomicallyReplace(); err != nil {
		return err
	}
	return fileio.SyncDir(dir)
}

// mkdirDurable is os.MkdirAll(dir, perm) whose new directories are durable entries of their
// parents: the parent of each directory it created is fsynced, deepest first.
func mkdirDurable(dir string, perm os.FileMode) error {
	var created []string
	for p := dir; ; {
		if _, err := os.Lstat(p); err == nil {
			break
		}
		created = append(created, p)
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	for _, p := range created {
		if err := fileio.SyncDir(filepath.Dir(p)); err != nil {
			return err
		}
	}
	return nil
}
