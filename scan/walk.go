package scan

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// walkDir is filepath.WalkDir(root, fn) — the same calls of fn, in the same (lexical) order,
// the same fs.SkipDir — with every directory opened relative to its parent's descriptor
// (os.Root) instead of by path, and every entry's FileInfo (DirEntry.Info) read by fstatat on
// that descriptor: a directory of the tree that its owner swaps for a symbolic link while it is
// walked leads the walk nowhere outside the tree (os.Root refuses a link out of it), and the
// device and inode a file is pinned to (store.Pinner) are those of the file in the tree, not
// of whatever a path through a swapped directory reaches (issue 30 findings 5 and 6). root must
// be a directory; want, when not nil, is what root was when it was resolved: a root directory
// opened as another (a component of its path swapped since) is an error of the walk.
func walkDir(root string, want os.FileInfo, fn fs.WalkDirFunc) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return fn(root, nil, err)
	}
	defer r.Close()
	fi, err := r.Stat(".")
	if err == nil && want != nil && !os.SameFile(fi, want) {
		err = &fs.PathError{Op: "open", Path: root, Err: errRootMoved}
	}
	if err != nil {
		return fn(root, nil, err)
	}
	err = walkIn(r, root, fs.FileInfoToDirEntry(fi), fn)
	if err == fs.SkipDir || err == fs.SkipAll {
		return nil
	}
	return err
}

// errRootMoved: the directory opened is not the one the root resolved to.
var errRootMoved = &rootMoved{}

type rootMoved struct{}

func (*rootMoved) Error() string {
	return "changed while it was opened (a directory on its way swapped for a link?): not walked"
}

// walkIn calls fn for the directory r (at path, entry d), then walks its entries.
func walkIn(r *os.Root, path string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(path, d, nil); err != nil {
		return err
	}
	f, err := r.Open(".")
	var ents []fs.DirEntry
	if err == nil {
		ents, err = f.ReadDir(-1) // in an os.Root: each entry's Info is an fstatat of f
		f.Close()
	}
	if err != nil {
		if err := fn(path, d, err); err != nil {
			return err
		}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		p := filepath.Join(path, e.Name())
		if !e.IsDir() {
			if err := fn(p, e, nil); err != nil {
				if err == fs.SkipDir {
					return nil // the rest of this directory
				}
				return err
			}
			continue
		}
		sub, err := r.OpenRoot(e.Name())
		if err != nil {
			// As WalkDir: the directory is reported, then its error.
			if err := fn(p, e, nil); err != nil {
				if err == fs.SkipDir {
					continue
				}
				return err
			}
			if err := fn(p, e, err); err != nil && err != fs.SkipDir {
				return err
			}
			continue
		}
		err = walkIn(sub, p, e, fn)
		sub.Close()
		if err == fs.SkipDir {
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}
