//go:build !linux

package fileio

import "os"

// openDirPath: directories are held open and files named through their descriptor on Linux
// only; elsewhere a rewrite names files by path (no dirPin: its methods take the path).
func openDirPath(string) (*os.File, string, error) { return nil, "", nil }

// The *at methods are not reached here: no dirPin is made.

func (d *dirPin) lstatAt(p string) (os.FileInfo, error) { return os.Lstat(p) }

func linkAt(_ *dirPin, old string, _ *dirPin, new string) error { return os.Link(old, new) }

func (d *dirPin) renameAt(old, new string) error { return os.Rename(old, new) }

func (d *dirPin) unlinkAt(p string, _ bool) error { return os.Remove(p) }

func (d *dirPin) openAt(p string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(p, flag, perm)
}

func (d *dirPin) subAt(p string) (*dirPin, os.FileInfo, error) { return (*dirPin)(nil).sub(p) }

func (d *dirPin) mkdirAt(p string, perm os.FileMode) error { return os.Mkdir(p, perm) }

func (d *dirPin) chownSelf(int, int) error { return nil }

func (d *dirPin) holdAt() (*dirPin, error) { return nil, nil }

func (d *dirPin) mkdirAsAt(p string, perm os.FileMode, _, _ int) error { return d.mkdir(p, perm) }
