// Package scan finds stores (discovery): it walks the roots, detects each file's store
// (agent/all) and records, per path, what it could not use and why. It never writes and never
// reads a store's content past detection; stores are read by rewrite.Process (the one worker
// pool). Targets come back sorted by path so every report is deterministic.
package scan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/store"
)

// Env is what discovery reads from the environment; inject it for tests.
type Env struct {
	Getenv func(string) string
	Home   string
}

// Target is one store found by discovery.
type Target struct {
	Store store.Store
	Size  int64
}

// Issue is a path discovery could not use, with why.
type Issue struct {
	Path     string
	Severity store.Severity
	Reason   string
}

// Root is what discovery made of one root, in the order given.
type Root struct {
	// Path is the root as given; Abs is its absolute form (the link's target when Path is a
	// followed symbolic link).
	Path, Abs string
	// Err is why the root could not be read at all (it does not exist, cannot be stat'ed);
	// nil otherwise.
	Err error
	// LinkTarget is set when Path is a symbolic link to a directory: the directory it names,
	// which was walked instead.
	LinkTarget string
	// Dir says the root is a directory; Stores counts the stores found under it (a store
	// also under an earlier root counts for both).
	Dir    bool
	Stores int
}

// Found is the result of Discover.
type Found struct {
	Targets []Target
	Issues  []Issue
	// Roots has one entry per root given.
	Roots []Root
	// Ignored counts regular files under the roots that are not stores.
	Ignored int
	// IgnoredPaths lists them (the first 1000).
	IgnoredPaths []string
	// links maps each followed symbolic link's target directory to the link's path (a
	// symlinked root, an agent home's linked directory), for Lexical.
	links []link
}

// link is one followed symbolic link to a directory: the directory walked (real) and the
// link's absolute path (lexical).
type link struct{ real, lexical string }

// Lexical returns path as reached through the symbolic link it was found under: a store at
// /data/sessions/2026/x.jsonl found through ~/.agent/sessions -> /data/sessions is
// ~/.agent/sessions/2026/x.jsonl. Stores are named by their real path (Target, manifests);
// this is for what depends on where the user put the link, such as the agent home a session
// belongs to (agent.Agent.HomeOf). A path under no followed link is returned as it is.
func (f *Found) Lexical(path string) string {
	best := -1
	for i, l := range f.links {
		if (path == l.real || strings.HasPrefix(path, l.real+string(filepath.Separator))) &&
			(best < 0 || len(l.real) > len(f.links[best].real)) {
			best = i
		}
	}
	if best < 0 {
		return path
	}
	l := f.links[best]
	return f.Lexical(l.lexical) + path[len(l.real):]
}

// LinkTargets returns the directories walked through followed symbolic links (a symlinked
// root, an agent home's linked directory), in the order followed: stores found there live outside
// the paths given, so a run that rewrites them counts these among its roots (undo restores only
// under a run's roots).
func (f *Found) LinkTargets() []string {
	out := make([]string, 0, len(f.links))
	for _, l := range f.links {
		out = append(out, l.real)
	}
	return out
}

// inside reports whether path is dir or below it; dir may be the root directory.
func inside(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// followedLink reports whether the symbolic link at path is one an agent's home keeps as a
// directory of its own (all.FollowLink: a session directory moved to another disk and
// linked back) pointing to a directory: such a link is followed in a walk. It returns the
// link's target (and its stat) and the agent's words for it. A link root must not follow
// (owner.Resolve: as root, a link is followed only to what its owner owns) is refused: ok is
// false and refused says why.
func followedLink(path string) (real string, fi os.FileInfo, why string, refused error, ok bool) {
	if why = all.FollowLink(path); why == "" {
		return "", nil, "", nil, false
	}
	real, err := owner.Resolve(path)
	var le *owner.LinkError
	if errors.As(err, &le) {
		return "", nil, why, le, false
	}
	if err != nil {
		return "", nil, "", nil, false
	}
	if abs, err := filepath.Abs(path); err != nil || inside(abs, real) {
		return "", nil, "", nil, false // a link to a directory holding it (up to /): a loop
	}
	fi, err = os.Lstat(real)
	return real, fi, why, nil, err == nil && fi.IsDir()
}

// TotalSize is the byte size of all targets.
func (f *Found) TotalSize() int64 {
	var n int64
	for _, t := range f.Targets {
		n += t.Size
	}
	return n
}

// Discover walks the roots (directories are walked recursively; a file is taken as it is) and
// returns every store found. A root may be an agent's runtime directory, a project's chats/
// directory or one file. Every path is made absolute (a run manifest must name stores wherever
// undo runs from), so a tree given twice is read once. An explicit file that is not a known
// store, or not a regular file, is an error Issue; files found by a walk that are not stores are
// counted and listed (Found.IgnoredPaths). Symbolic links inside a walk are not followed
// (reported as info); a root that is a symbolic link is followed (a symlinked ~/.agent ->
// /data/agent is walked as /data/agent, with an info Issue saying so) and an explicit symlinked
// file is resolved to its target. Found.Roots says, per root, whether it could be read and how
// many stores it held. Discover fails only when ctx is cancelled (its error; the walk stops at
// the next file, and a SQLite database being detected stops waiting for its lock).
func Discover(ctx context.Context, roots []string) (*Found, error) {
	return DiscoverWith(ctx, roots, DiscoverOptions{})
}

// DiscoverAs is Discover restricted to one agent's stores (all.DetectAs: the agent's own
// reading of a forced --agent; "" detects by name and content).
func DiscoverAs(ctx context.Context, roots []string, agent store.AgentID) (*Found, error) {
	return DiscoverWith(ctx, roots, DiscoverOptions{Backend: all.Options{Agent: agent}})
}

// DiscoverOptions tunes DiscoverWith.
type DiscoverOptions struct {
	// Backend are the agent/all options (agent, SQLite busy timeout and profile).
	Backend all.Options
	// Exclude lists directories never read (sessionfix's own state directory: its backups
	// are copies of stores and must never be rewritten).
	Exclude []string
	// OwnedBy, when set, is the only owner a store may have: a file another user owns is an
	// error naming both (a plan another user wrote, applied as root: issue 30 finding 2).
	OwnedBy *uint32
}

// maxIgnoredListed bounds Found.IgnoredPaths.
const maxIgnoredListed = 1000

// DiscoverWith is Discover with options.
func DiscoverWith(ctx context.Context, roots []string, opt DiscoverOptions) (*Found, error) {
	f := &Found{}
	seen := map[string]bool{}
	var excluded []string
	for _, x := range opt.Exclude {
		if a, err := filepath.Abs(x); err == nil {
			excluded = append(excluded, a)
			if r, err := filepath.EvalSymlinks(a); err == nil && r != a {
				excluded = append(excluded, r)
			}
		}
	}
	isExcluded := func(p string) bool {
		for _, x := range excluded {
			if p == x || strings.HasPrefix(p, x+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
	for _, given := range roots {
		if err := ctx.Err(); err != nil {
			return f, err
		}
		if store.IsReference(given) {
			// A database named by a reference (postgres://…): no file to walk. Its Ref and
			// every reason hold the reference without its password.
			red := store.Redact(given)
			f.Roots = append(f.Roots, Root{Path: red, Abs: red})
			ri := &f.Roots[len(f.Roots)-1]
			d := all.DetectReference(ctx, given, opt.Backend)
			switch {
			case d.Store != nil:
				if d.Warning != "" {
					f.Issues = append(f.Issues, Issue{Path: red, Severity: store.SevWarning, Reason: d.Warning})
				}
				if !seen[red] {
					seen[red] = true
					f.Targets = append(f.Targets, Target{Store: d.Store})
				}
			case d.Unreadable != "":
				ri.Err = errors.New(d.Unreadable)
				f.Issues = append(f.Issues, Issue{Path: red, Severity: store.SevError, Reason: d.Unreadable})
			case d.Warning != "":
				f.Issues = append(f.Issues, Issue{Path: red, Severity: store.SevWarning, Reason: d.Warning})
			default:
				f.Issues = append(f.Issues, Issue{Path: red, Severity: store.SevError, Reason: d.NotStore})
			}
			continue
		}
		root := given
		if a, err := filepath.Abs(root); err == nil {
			root = a
		}
		f.Roots = append(f.Roots, Root{Path: given, Abs: root})
		ri := &f.Roots[len(f.Roots)-1]
		// The links on the root's way are resolved here (as root, each must lead only to what
		// its owner owns: owner.Resolve, issue 30 finding 3); what they lead to is walked.
		real, err := owner.Resolve(root)
		var fi os.FileInfo
		if err == nil {
			// Lstat: what real names now is what is walked or read (a link swapped in since
			// is not followed); reported as a stat, as the root named.
			if fi, err = os.Lstat(real); err != nil {
				var pe *fs.PathError
				if errors.As(err, &pe) {
					pe.Op = "stat"
				}
			}
		}
		if err != nil {
			ri.Err = err
			f.Issues = append(f.Issues, Issue{Path: root, Severity: store.SevError, Reason: describe(err)})
			continue
		}
		ri.Dir = fi.IsDir()
		if real != root && fi.IsDir() {
			// A symlinked root directory (~/.agent -> /data/agent): walk its target; a walk
			// would stop at the link. Links inside the tree stay not followed.
			f.Issues = append(f.Issues, Issue{Path: root, Severity: store.SevInfo, Reason: "symbolic link to " + real + ": followed (links inside it are not)"})
			f.links = append(f.links, link{real: real, lexical: root})
			ri.LinkTarget, ri.Abs = real, real
			root = real
		}
		if !fi.IsDir() {
			switch {
			case !fi.Mode().IsRegular():
				f.Issues = append(f.Issues, Issue{Path: root, Severity: store.SevError, Reason: "not a regular file (" + fi.Mode().Type().String() + ")"})
			case isExcluded(real):
				f.Issues = append(f.Issues, Issue{Path: root, Severity: store.SevError, Reason: "inside sessionfix's state directory: backups are never read as stores"})
			case !f.addFile(ctx, real, seen, opt):
				if why := all.KnownFile(real); why != "" {
					f.Issues = append(f.Issues, Issue{Path: root, Severity: store.SevInfo, Reason: why})
					break
				}
				f.Issues = append(f.Issues, Issue{Path: root, Severity: store.SevError, Reason: "not a known session, usage, checkpoint or settings store"})
			}
			continue
		}
		followed := map[string]bool{root: true}
		var walk fs.WalkDirFunc
		walk = func(path string, d fs.DirEntry, err error) error {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if err != nil {
				if path == root {
					ri.Err = err // the root directory itself cannot be listed
				}
				f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevError, Reason: describe(err)})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				// An agent home's directory moved to another disk and linked back is the
				// home's history: walked (once), links inside it are not followed.
				real, rfi, why, refused, ok := followedLink(path)
				if refused != nil {
					// A link the walk would follow, but not as root: an error, so the run
					// says it left that history out (exit 3), not an info line.
					f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevError, Reason: refused.Error() + " (" + why + "); its stores are not read"})
					return nil
				}
				if ok && !followed[real] {
					followed[real] = true
					f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevInfo, Reason: "symbolic link to " + real + ": followed (" + why + "; links inside it are not)"})
					f.links = append(f.links, link{real: real, lexical: path})
					if err := walkDir(real, rfi, walk); err != nil {
						if cerr := ctx.Err(); cerr != nil {
							return cerr
						}
						f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevError, Reason: describe(err)})
					}
					return nil
				}
				f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevInfo, Reason: "symbolic link not followed; pass its target to include it"})
			case d.IsDir():
				if isExcluded(path) {
					f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevInfo, Reason: "sessionfix's state directory (runs and backups): not read"})
					return fs.SkipDir
				}
				if path != root && skipDir(d.Name()) {
					return fs.SkipDir
				}
			case d.Type().IsRegular():
				if tempOf := leftoverTemp(path, d.Name()); tempOf != "" {
					f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevWarning,
						Reason: "left over by an interrupted sessionfix run (a temp copy of " + tempOf + "); the next fix --apply or undo removes it when its run's journal names it, else delete it once no sessionfix run is going on"})
					return nil
				}
				info, err := d.Info()
				if errors.Is(err, fs.ErrNotExist) {
					// Removed since the directory was listed (a SQLite -journal deleted at
					// commit or rolled back by detection, a temp file renamed): not there.
					return nil
				}
				if err != nil {
					f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevError, Reason: describe(err)})
					return nil
				}
				if f.notOwned(path, info, opt) {
					return nil
				}
				if !f.add(ctx, path, info.Size(), fileio.IDOf(info), seen, false, opt.Backend) {
					f.Ignored++
					if len(f.IgnoredPaths) < maxIgnoredListed {
						f.IgnoredPaths = append(f.IgnoredPaths, path)
					}
				}
			default:
				f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevInfo, Reason: "not a regular file (" + d.Type().String() + "): not read"})
			}
			return nil
		}
		if err := walkDir(root, fi, walk); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return f, cerr
			}
			f.Issues = append(f.Issues, Issue{Path: root, Severity: store.SevError, Reason: describe(err)})
		}
	}
	sort.Slice(f.Targets, func(i, j int) bool { return f.Targets[i].Store.Ref().Path < f.Targets[j].Store.Ref().Path })
	for i := range f.Roots {
		ri := &f.Roots[i]
		if ri.Err != nil || !ri.Dir {
			continue
		}
		under := func(p string) bool { return p == ri.Abs || strings.HasPrefix(p, ri.Abs+string(filepath.Separator)) }
		for _, t := range f.Targets {
			if p := t.Store.Ref().Path; under(p) || under(f.Lexical(p)) {
				ri.Stores++
			}
		}
	}
	sort.SliceStable(f.Issues, func(i, j int) bool { return f.Issues[i].Path < f.Issues[j].Path })
	return f, ctx.Err()
}

// leftoverTemp recognises the temp file a rewrite creates beside a store (renameio:
// "." + name + random digits) when the store itself is there; it returns the store's name.
func leftoverTemp(path, name string) string {
	if len(name) < 3 || name[0] != '.' {
		return ""
	}
	i := len(name)
	for i > 1 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == len(name) || i <= 1 {
		return ""
	}
	base := name[1:i]
	if !strings.HasSuffix(base, ".jsonl") && !strings.HasSuffix(base, ".json") {
		return ""
	}
	if st, err := os.Stat(filepath.Join(filepath.Dir(path), base)); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return base
}

// skipDir names directories that never hold stores (and can be huge).
func skipDir(name string) bool {
	switch name {
	case ".git", "node_modules", "tool-results", "debug":
		return true
	}
	return false
}

// addFile is add for a file given as a root (its links resolved): it is opened as every store
// is (fileio.OpenStore, which as root checks again the links on its way), and pinned to the
// file opened.
func (f *Found) addFile(ctx context.Context, path string, seen map[string]bool, opt DiscoverOptions) bool {
	if seen[path] {
		return true
	}
	fd, fi, err := fileio.OpenStore(path, store.FileID{})
	if err != nil {
		f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevError, Reason: describe(err)})
		return true
	}
	fd.Close()
	if f.notOwned(path, fi, opt) {
		return true
	}
	return f.add(ctx, path, fi.Size(), fileio.IDOf(fi), seen, true, opt.Backend)
}

// notOwned reports (as an error Issue) a file fi at path that opt.OwnedBy refuses.
func (f *Found) notOwned(path string, fi os.FileInfo, opt DiscoverOptions) bool {
	if opt.OwnedBy == nil {
		return false
	}
	uid, ok := owner.UID(fi)
	if !ok || uid == *opt.OwnedBy {
		return false
	}
	f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevError, Reason: fmt.Sprintf(
		"refused: it belongs to %s, not to %s, who wrote the plan: a plan another user wrote is applied only to that user's files; not read",
		owner.Describe(uid), owner.Describe(*opt.OwnedBy))})
	return true
}

// add detects the store at path, the file id (its device and inode, as discovery found it:
// every later open of the store must find it there); it reports whether path is a store (or an
// unsupported one).
func (f *Found) add(ctx context.Context, path string, size int64, id store.FileID, seen map[string]bool, explicit bool, opt all.Options) bool {
	if seen[path] {
		return true
	}
	opt.Pin = id
	head, err := all.ReadHeadPinned(path, id)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		// Removed since the directory was listed (a SQLite -journal deleted at commit or rolled
		// back by detection, a temp file renamed): not there.
		return true
	}
	if err != nil {
		f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevError, Reason: describe(err)})
		return true
	}
	d := all.DetectWith(ctx, path, head, opt)
	switch {
	case d.Unreadable != "":
		f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevError, Reason: d.Unreadable})
		return true
	case d.Unsupported != "":
		f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevWarning, Reason: d.Unsupported})
		return true
	case d.NotStore != "" && explicit:
		if why := all.KnownFile(path); why != "" && d.Warning == "" {
			// An agent's own database that holds no store (a search index, a job queue).
			f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevInfo, Reason: why})
			return true
		}
		f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevError, Reason: d.NotStore})
		return true
	case d.Store == nil && d.Warning != "":
		f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevWarning, Reason: d.Warning})
		return true
	case d.Store == nil:
		return false
	}
	if d.Warning != "" {
		f.Issues = append(f.Issues, Issue{Path: path, Severity: store.SevWarning, Reason: d.Warning})
	}
	seen[path] = true
	f.Targets = append(f.Targets, Target{Store: d.Store, Size: size})
	return true
}

func describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: %v", pe.Op, pe.Err)
	}
	return err.Error()
}
