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
	d := &discovery{ctx: ctx, f: &Found{}, seen: map[string]bool{}, opt: opt}
	for _, x := range opt.Exclude {
		if a, err := filepath.Abs(x); err == nil {
			d.excluded = append(d.excluded, a)
			if r, err := filepath.EvalSymlinks(a); err == nil && r != a {
				d.excluded = append(d.excluded, r)
			}
		}
	}
	f := d.f
	for _, given := range roots {
		if err := ctx.Err(); err != nil {
			return f, err
		}
		if store.IsReference(given) {
			d.reference(given)
			continue
		}
		if err := d.root(given); err != nil {
			return f, err
		}
	}
	sort.Slice(f.Targets, func(i, j int) bool { return f.Targets[i].Store.Ref().Path < f.Targets[j].Store.Ref().Path })
	f.countStores()
	sort.SliceStable(f.Issues, func(i, j int) bool { return f.Issues[i].Path < f.Issues[j].Path })
	return f, ctx.Err()
}

// discovery is one DiscoverWith run: what it found so far, the stores already added (by
// absolute path), the excluded directories (absolute, and their link targets).
type discovery struct {
	ctx      context.Context
	f        *Found
	seen     map[string]bool
	excluded []string
	opt      DiscoverOptions
}

// isExcluded says whether p is an excluded directory or under one.
func (d *discovery) isExcluded(p string) bool {
	for _, x := range d.excluded {
		if p == x || strings.HasPrefix(p, x+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// issue records an issue of path.
func (d *discovery) issue(path string, sev store.Severity, reason string) {
	d.f.Issues = append(d.f.Issues, Issue{Path: path, Severity: sev, Reason: reason})
}

// reference adds the database a reference (postgres://…) names: no file to walk. Its Ref and
// every reason hold the reference without its password.
func (d *discovery) reference(given string) {
	f := d.f
	red := store.Redact(given)
	f.Roots = append(f.Roots, Root{Path: red, Abs: red})
	ri := &f.Roots[len(f.Roots)-1]
	det := all.DetectReference(d.ctx, given, d.opt.Backend)
	switch {
	case det.Store != nil:
		if det.Warning != "" {
			d.issue(red, store.SevWarning, det.Warning)
		}
		if !d.seen[red] {
			d.seen[red] = true
			f.Targets = append(f.Targets, Target{Store: det.Store})
		}
	case det.Unreadable != "":
		ri.Err = errors.New(det.Unreadable)
		d.issue(red, store.SevError, det.Unreadable)
	case det.Warning != "":
		d.issue(red, store.SevWarning, det.Warning)
	default:
		d.issue(red, store.SevError, det.NotStore)
	}
}

// root adds the stores of one root given as a path: a file, or a directory walked. It returns
// an error only when the context is done.
func (d *discovery) root(given string) error {
	f := d.f
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
		d.issue(root, store.SevError, describe(err))
		return nil
	}
	ri.Dir = fi.IsDir()
	if !fi.IsDir() {
		d.file(root, real, fi)
		return nil
	}
	if real != root {
		// A symlinked root directory (~/.agent -> /data/agent): walk its target; a walk
		// would stop at the link. Links inside the tree stay not followed.
		d.issue(root, store.SevInfo, "symbolic link to "+real+": followed (links inside it are not)")
		f.links = append(f.links, link{real: real, lexical: root})
		ri.LinkTarget, ri.Abs = real, real
		root = real
	}
	w := &walker{d: d, root: root, ri: ri, followed: map[string]bool{root: true}}
	if err := walkDir(root, fi, w.visit); err != nil {
		if cerr := d.ctx.Err(); cerr != nil {
			return cerr
		}
		d.issue(root, store.SevError, describe(err))
	}
	return nil
}

// file adds a root that is one file (real: the root with its links resolved), or says why not.
func (d *discovery) file(root, real string, fi os.FileInfo) {
	switch {
	case !fi.Mode().IsRegular():
		d.issue(root, store.SevError, "not a regular file ("+fi.Mode().Type().String()+")")
	case d.isExcluded(real):
		d.issue(root, store.SevError, "inside sessionfix's state directory: backups are never read as stores")
	case !d.f.addFile(d.ctx, real, d.seen, d.opt):
		if why := all.KnownFile(real); why != "" {
			d.issue(root, store.SevInfo, why)
			return
		}
		d.issue(root, store.SevError, "not a known session, usage, checkpoint or settings store")
	}
}

// walker walks one root directory: ri is its Root, followed the directories already walked
// (the root and the targets of links followed).
type walker struct {
	d        *discovery
	root     string
	ri       *Root
	followed map[string]bool
}

// visit is the fs.WalkDirFunc of a root's walk.
func (w *walker) visit(path string, de fs.DirEntry, err error) error {
	d := w.d
	if cerr := d.ctx.Err(); cerr != nil {
		return cerr
	}
	if err != nil {
		if path == w.root {
			w.ri.Err = err // the root directory itself cannot be listed
		}
		d.issue(path, store.SevError, describe(err))
		if de != nil && de.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	switch {
	case de.Type()&fs.ModeSymlink != 0:
		return w.link(path)
	case de.IsDir():
		if d.isExcluded(path) {
			d.issue(path, store.SevInfo, "sessionfix's state directory (runs and backups): not read")
			return fs.SkipDir
		}
		if path != w.root && skipDir(de.Name()) {
			return fs.SkipDir
		}
	case de.Type().IsRegular():
		w.regular(path, de)
	default:
		d.issue(path, store.SevInfo, "not a regular file ("+de.Type().String()+"): not read")
	}
	return nil
}

// link handles a symbolic link met in a walk. An agent home's directory moved to another disk
// and linked back is the home's history: walked (once), links inside it are not followed.
func (w *walker) link(path string) error {
	d := w.d
	real, rfi, why, refused, ok := followedLink(path)
	if refused != nil {
		// A link the walk would follow, but not as root: an error, so the run says it left
		// that history out (exit 3), not an info line.
		d.issue(path, store.SevError, refused.Error()+" ("+why+"); its stores are not read")
		return nil
	}
	if !ok || w.followed[real] {
		d.issue(path, store.SevInfo, "symbolic link not followed; pass its target to include it")
		return nil
	}
	w.followed[real] = true
	d.issue(path, store.SevInfo, "symbolic link to "+real+": followed ("+why+"; links inside it are not)")
	d.f.links = append(d.f.links, link{real: real, lexical: path})
	if err := walkDir(real, rfi, w.visit); err != nil {
		if cerr := d.ctx.Err(); cerr != nil {
			return cerr
		}
		d.issue(path, store.SevError, describe(err))
	}
	return nil
}

// regular adds a regular file met in a walk when it is a store, counts and lists it as
// ignored when not, and warns of a temp file an interrupted run left.
func (w *walker) regular(path string, de fs.DirEntry) {
	d, f := w.d, w.d.f
	if tempOf := leftoverTemp(path, de.Name()); tempOf != "" {
		d.issue(path, store.SevWarning, "left over by an interrupted sessionfix run (a temp copy of "+tempOf+"); the next fix --apply or undo removes it when its run's journal names it, else delete it once no sessionfix run is going on")
		return
	}
	info, err := de.Info()
	if errors.Is(err, fs.ErrNotExist) {
		// Removed since the directory was listed (a SQLite -journal deleted at commit or
		// rolled back by detection, a temp file renamed): not there.
		return
	}
	if err != nil {
		d.issue(path, store.SevError, describe(err))
		return
	}
	if f.notOwned(path, info, d.opt) {
		return
	}
	if sqliteSidecar(path) || !f.add(d.ctx, path, info.Size(), fileio.IDOf(info), d.seen, false, d.opt.Backend) {
		f.Ignored++
		if len(f.IgnoredPaths) < maxIgnoredListed {
			f.IgnoredPaths = append(f.IgnoredPaths, path)
		}
	}
}

// sqliteSidecar says whether the file at path is one of SQLite's own files beside a database:
// its name is a file's name beside it followed by "-wal", "-shm" or "-journal". Such a file is
// never a store and is not opened: an agent's SQLite deletes and recreates its -wal and -shm
// (the last connection's close), which made a walk that opened them report "another file than
// the one found there" (exit 3) while the agent ran, and closing a descriptor of a file drops
// every POSIX lock this process holds on it, SQLite's own locks on its -shm included
// (https://sqlite.org/howtocorrupt.html, 2.2.1). It only looks (Lstat) at the database's name.
func sqliteSidecar(path string) bool {
	for _, ext := range []string{"-wal", "-shm", "-journal"} {
		if base, ok := strings.CutSuffix(path, ext); ok && base != "" && !strings.HasSuffix(base, string(filepath.Separator)) {
			fi, err := os.Lstat(base)
			return err == nil && fi.Mode().IsRegular()
		}
	}
	return false
}

// countStores sets each readable root directory's Stores: the targets under it (or under the
// link it was reached by).
func (f *Found) countStores() {
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
