package rewrite

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
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
