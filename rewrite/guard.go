package rewrite

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// FileGuard is what fix checks of a store's file before rewriting it (issue 23 item 8): a file
// the user running sessionfix does not own (not root: the rewrite is a rename of a new file, which
// only root can give back to its owner, so the user would take the file over), and a read-only
// file (its owner's write bit clear: whoever made it so did not want it written). Without Force
// such a store is not rewritten: its names are kept, saying why, and it is an error of the run
// (exit 3, "some stores could not be rewritten"); with Force it is rewritten and the same facts
// are a warning. Either way they are said before the [y/N] question (in the plan the question
// follows) and in a dry run. Root's rules are issue 30's (links followed only to what their
// owner owns, fileio.OpenStore): root gives every file its owner back, so "not yours" does not
// apply to root; "read-only" does.
type FileGuard struct {
	Force bool
}

// fileFacts says why the file at path is not one to rewrite without --force: "" when it is
// (or when it is not a regular file on this system: a PostgreSQL reference, a file that is gone
// — the rewrite's own checks report those).
func fileFacts(path string) string {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return factsOf(fi)
}

// factsOf is fileFacts of fi.
func factsOf(fi fs.FileInfo) string {
	var why string
	if uid, ok := owner.UID(fi); ok && !owner.AsRoot() && uid != uint32(owner.Euid()) {
		why = fmt.Sprintf("you (%s) do not own it: it belongs to %s, and a rewrite would give it to you (only root can give it back)",
			owner.Describe(uint32(owner.Euid())), owner.Describe(uid))
	}
	if fi.Mode().Perm()&0o200 == 0 {
		if why != "" {
			why += "; and "
		}
		why += fmt.Sprintf("it is read-only (mode %04o)", fi.Mode().Perm())
	}
	return why
}

// guard applies g to a store's plan sp (a whole store, or one batch of it: the facts are
// taken once per store, by facts): with names to rewrite and a file that is not the user's or
// is read-only, the rewrites are held (without Force) or the plan says it (with Force). It
// returns the problem to report for the store (once; the zero Problem when none).
func (g *FileGuard) guard(sp *StorePlan, facts func() string) (store.Problem, bool) {
	if g == nil || sp.Count(naming.ActRewrite) == 0 || sp.Snap.NotWritable != "" {
		return store.Problem{}, false
	}
	why := facts()
	if why == "" {
		return store.Problem{}, false
	}
	if g.Force {
		return store.Problem{Severity: store.SevWarning, Reason: why + ": rewritten all the same (--force); the new file keeps the mode"}, true
	}
	holdRewrites(sp, why+"; --force rewrites it")
	return store.Problem{Severity: store.SevError, Reason: "refused: " + why + "; its names are kept (--force rewrites it all the same)"}, true
}

// storeFacts caches fileFacts of one store's path.
func storeFacts(path string) func() string {
	done, why := false, ""
	return func() string {
		if !done {
			done, why = true, fileFacts(path)
		}
		return why
	}
}
