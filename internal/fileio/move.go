package fileio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/internal/owner"
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
// (mode 0700; as root, with the owner and group of the directory each is made in from the
// instant it exists), each announced first to the context's MadeDirRecorder
// (WithMadeDirRecorder), and recorded in Move.Made. The file is opened as a store is (OpenStore: no link followed at its
// name, as root none out of its owner's reach on the way, no FIFO waited on; anything but a
// regular file is a *NotTheFileError, wrapped) and refused with an *store.InUseError when
// another process holds it open for writing (a read lease, else /proc). The move is a hard link at to, the directories
// fsynced, then the name from removed and its directory fsynced: a crash leaves the file under
// from, or under both names (one inode), never under neither. Both names must be on one file
// system (the same home): a link across file systems fails (EXDEV).
//
// Every step goes through directories held open (see dirPin), never a path looked up again:
// from's directory, checked to hold the file opened; and each directory on the way to to's,
// opened (or made, then opened) one at a time from the one before without following a link (a
// link on the way is refused, as undo refuses one: runlog.CheckRun), and, as root, refused when
// it belongs to neither root nor the file's owner. The link, the checks that from and to name
// the file, the unlink, the removal of directories made when the move fails (rmdir, never an
// unlink) and the fsyncs all name files through them: the file's owner renaming a directory
// away and putting a link in its place meanwhile cannot make a root run link, create or remove
// anything elsewhere.
func MoveFile(ctx context.Context, from, to string) (Move, error) {
	m := Move{From: from, To: to}
	if err := ctx.Err(); err != nil {
		return m, err
	}
	if err := Fault("move", from); err != nil {
		return m, err
	}
	if li, err := os.Lstat(from); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		return m, fmt.Errorf("move %s: %w", from, &NotTheFileError{Path: from, Reason: "it is a symbolic link (not followed)"})
	}
	// A link swapped in after this is followed by OpenStore (as root only to what the link's
	// owner owns), and then refused by pinDir: the name is not the file opened.
	f, fi, err := OpenStore(from, store.FileID{})
	if errors.Is(err, ErrNotTheFile) {
		return m, fmt.Errorf("move %s: %w", from, err)
	}
	if err != nil {
		return m, err
	}
	defer f.Close()
	if w := openWritersFresh(f, fi); len(w) > 0 {
		return m, &store.InUseError{Path: from, Reason: "open for writing by " + strings.Join(w, ", ")}
	}
	src, err := pinDir(from, fi)
	if errors.Is(err, errDirMoved) {
		return m, &store.InUseError{Path: from, Reason: "replaced since it was opened: " + err.Error()}
	} else if err != nil {
		return m, fmt.Errorf("open directory of %s: %w", from, err)
	}
	defer src.close()
	m.Dev, m.Ino = devIno(fi)
	m.State = store.FileState{Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime()}
	moveHook("pinned", from)
	w, err := walkDirs(src, filepath.Dir(from), filepath.Dir(to), fi, madeDirRecorderOf(ctx))
	if err != nil {
		return m, err
	}
	defer w.close()
	dst := w.last()
	fail := func(err error) (Move, error) {
		w.removeMade()
		return m, err
	}
	if _, err := dst.lstat(to); err == nil {
		return fail(fmt.Errorf("%s: %w", to, ErrTargetExists))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}
	moveHook("made", from)
	if err := linkPinned(src, from, dst, to); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fail(fmt.Errorf("%s: %w", to, ErrTargetExists))
		}
		return fail(err)
	}
	if lfi, err := dst.lstat(to); err != nil || !sameFile(lfi, fi) {
		_ = dst.remove(to)
		return fail(&store.InUseError{Path: from, Reason: "replaced by another process while it was being moved"})
	}
	m.Made = w.madePaths()
	// Until from is removed a failure takes the new name back (and the directories made): the
	// move did not happen. Where even that fails the file is under both names: a *MovedError,
	// so that the move is recorded and undo removes the new name.
	takeBack := func(err error) (Move, error) {
		if rerr := dst.remove(to); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return m, &MovedError{Err: fmt.Errorf("%w; taking the new name back: %w", err, rerr)}
		}
		_ = syncDirAt(filepath.Dir(to), dst)
		w.removeMade()
		m.Made = nil
		return m, err
	}
	if err := w.sync(); err != nil {
		return takeBack(err)
	}
	if err := Fault("move-unlink", from); err != nil {
		return takeBack(err)
	}
	moveHook("linked", from)
	if cur, err := src.lstat(from); err != nil || !sameFile(cur, fi) {
		// Not the file moved any more: its name is left alone, the new one taken back.
		return takeBack(&store.InUseError{Path: from, Reason: "replaced by another process while it was being moved"})
	}
	if err := src.remove(from); err != nil {
		return takeBack(err)
	}
	if err := syncDirAt(filepath.Dir(from), src); err != nil {
		return m, &MovedError{Err: err}
	}
	return m, nil
}

// MovedError is an error of MoveFile after the file was moved (or is under both names): the
// move is made and must be recorded (undo moves it back), but a power loss may undo part of it.
type MovedError struct{ Err error }

func (e *MovedError) Error() string { return e.Err.Error() + " (the file was moved)" }

// Unwrap returns Err.
func (e *MovedError) Unwrap() error { return e.Err }

// MadeDirRecorder journals that MoveFile is about to make the directory dir (absolute, the
// path as the move names it) on the way to its target: a run killed after the mkdir and before
// the move is recorded as made (Move.Made) still lets undo know the directory is the move's (it
// removes it when empty). An error keeps the directory from being made (the move fails).
type MadeDirRecorder func(dir string) error

type madeDirRecorderKey struct{}

// WithMadeDirRecorder returns a context whose moves (MoveFile) announce each directory they
// make to rec, durably, before making it.
func WithMadeDirRecorder(ctx context.Context, rec MadeDirRecorder) context.Context {
	return context.WithValue(ctx, madeDirRecorderKey{}, rec)
}

// madeDirRecorderOf is the context's MadeDirRecorder, or one that records nothing.
func madeDirRecorderOf(ctx context.Context) MadeDirRecorder {
	if rec, ok := ctx.Value(madeDirRecorderKey{}).(MadeDirRecorder); ok && rec != nil {
		return rec
	}
	return func(string) error { return nil }
}

// testHookMove runs at the named steps of MoveFile ("pinned": from's directory held open;
// "mkdir": a directory on the way to to made (with its path), before anything else is done to
// it; "made": the directories on the way to to held open or made; "linked": the link at to made
// and fsynced, before from is removed) (tests only).
var testHookMove func(step, from string)

func moveHook(step, from string) {
	if testHookMove != nil {
		testHookMove(step, from)
	}
}

// dirWalk is a directory held open and the directories below it on the way to another, each
// held open (nil pins where none is: systems other than Linux, paths then), with which of them
// the walk made.
type dirWalk struct {
	pins  []*dirPin
	paths []string
	made  []bool
	own0  bool // pins[0] is the walk's own (closed with it)
}

// walkDirs holds open the directories from base (the directory at basePath, held open by the
// caller; nil: by path) down to dir, one at a time, each opened from the one before without
// following a link (O_PATH|O_DIRECTORY|O_NOFOLLOW): a symbolic link or another file on the way
// is refused. A dir not at or below basePath is reached from its nearest existing ancestor,
// opened as a gone store's directory is (pinGoneStoreDir: as root, each link on the way to it
// must pass owner.LinkRefusal). With create (not nil), a missing directory is announced to it
// (an error ends the walk: nothing is made that was not announced), made (mkdirat, mode 0700;
// as root with the owner and group of the directory it is made in: mkdirAsParent), then opened
// and checked to be the one made, and as root given the owner and group of the directory it
// was made in (where it was not made so already); as root an existing one must
// belong to root or to the owner of file (the file to be put there): another user's directory
// would give that user the file's name. Without create (nil) the walk ends, without an error,
// at the first directory missing. On an error what the walk made is removed again.
func walkDirs(base *dirPin, basePath, dir string, file os.FileInfo, create MadeDirRecorder) (*dirWalk, error) {
	w := &dirWalk{pins: []*dirPin{base}, paths: []string{basePath}, made: []bool{false}}
	rel, err := filepath.Rel(basePath, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		anchor := filepath.Dir(dir)
		for {
			if _, err := os.Lstat(anchor); err == nil || filepath.Dir(anchor) == anchor {
				break
			}
			anchor = filepath.Dir(anchor)
		}
		pin, err := pinGoneStoreDir(filepath.Join(anchor, "-"))
		if err != nil {
			return nil, fmt.Errorf("open directory %s: %w", anchor, err)
		}
		w.pins[0], w.paths[0], w.own0 = pin, anchor, true
		rel, _ = filepath.Rel(anchor, dir)
	}
	if rel == "." {
		return w, nil
	}
	cur := w.paths[0]
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		p := filepath.Join(cur, c)
		parent := w.last()
		sub, sfi, err := parent.sub(p)
		made := false
		if errors.Is(err, fs.ErrNotExist) && create == nil {
			return w, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			if err = create(p); err != nil {
				err = fmt.Errorf("%s: not made: %w", p, err)
			} else if err = mkdirAsParent(parent, cur, p); err == nil {
				made = true
				moveHook("mkdir", p)
			} else if errors.Is(err, fs.ErrExist) {
				err = nil
			}
			if err == nil {
				sub, sfi, err = parent.sub(p)
			}
			if err == nil && made && !madeByUs(sfi, parent, cur) {
				sub.close()
				err = fmt.Errorf("%s: replaced by another process right after it was made", p)
			}
			if err != nil && made {
				_ = parent.unlinkAt(p, true)
				made = false
			}
		}
		if err == nil && made {
			err = giveParentsOwner(sub, p, parent)
			if err != nil {
				sub.close()
				_ = parent.unlinkAt(p, true)
				made = false
			}
		} else if err == nil && create != nil && owner.AsRoot() {
			if why := foreignDir(sfi, file); why != "" {
				sub.close()
				err = fmt.Errorf("%s: %s: not moved into it", p, why)
			}
		}
		if err != nil {
			w.removeMade()
			w.close()
			return nil, err
		}
		w.pins, w.paths, w.made = append(w.pins, sub), append(w.paths, p), append(w.made, made)
		cur = p
	}
	return w, nil
}

// last is the deepest directory of the walk.
func (w *dirWalk) last() *dirPin { return w.pins[len(w.pins)-1] }

// madePaths are the directories the walk made, outermost first.
func (w *dirWalk) madePaths() []string {
	var out []string
	for i, made := range w.made {
		if made {
			out = append(out, w.paths[i])
		}
	}
	return out
}

// sync fsyncs the deepest directory and the parent of each directory made.
func (w *dirWalk) sync() error {
	for i := len(w.pins) - 1; i >= 0; i-- {
		if i == len(w.pins)-1 || w.made[i+1] {
			if err := syncDirAt(w.paths[i], w.pins[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeMade removes the directories the walk made that are empty (rmdir through each one's
// parent held open, never an unlink), innermost first, each removal fsynced; it stops at the
// first that cannot be removed.
func (w *dirWalk) removeMade() {
	for i := len(w.pins) - 1; i > 0; i-- {
		if !w.made[i] {
			continue
		}
		if w.pins[i-1].unlinkAt(w.paths[i], true) != nil {
			return
		}
		w.made[i] = false
		_ = syncDirAt(w.paths[i-1], w.pins[i-1])
	}
}

// close releases the directories the walk opened.
func (w *dirWalk) close() {
	for i, p := range w.pins {
		if i > 0 || w.own0 {
			p.close()
		}
	}
}

// mkdirAsParent makes the directory p (mode 0700) in parent (held open, at parentPath). As
// root it is made with the owner and group of parent from the instant it exists (mkdirAs:
// the file-system ids of the thread making it), so that no instant leaves a root-owned 0700
// directory in a user's home (a run killed between a mkdir and a chown did: the user's agent
// could neither enter it nor make its own there); where ids cannot be so taken it is made
// root's and given to parent's owner afterwards (giveParentsOwner, in walkDirs).
func mkdirAsParent(parent *dirPin, parentPath, p string) error {
	if !owner.AsRoot() {
		return parent.mkdir(p, 0o700)
	}
	pfi, err := parent.stat(parentPath)
	if err != nil {
		return err
	}
	uid, gid, ok := fileIDs(pfi)
	if !ok || uid == 0 {
		return parent.mkdir(p, 0o700)
	}
	return parent.mkdirAs(p, 0o700, int(uid), int(gid))
}

// madeByUs reports whether fi (the directory just made in parent, held open at parentPath:
// mkdirAsParent) is a directory of the user it was made as: the effective user, or as root
// the owner of parent (or root, where it was made root's).
func madeByUs(fi os.FileInfo, parent *dirPin, parentPath string) bool {
	if !fi.IsDir() {
		return false
	}
	uid, ok := owner.UID(fi)
	if !ok || int(uid) == owner.Euid() {
		return true
	}
	if !owner.AsRoot() {
		return false
	}
	pfi, err := parent.stat(parentPath)
	if err != nil {
		return false
	}
	puid, ok := owner.UID(pfi)
	return ok && puid == uid
}

// foreignDir says why root must not put the file whose stat is file into the existing directory
// whose stat is fi ("" when it may): fi belongs neither to root nor to the file's owner.
func foreignDir(fi, file os.FileInfo) string {
	du, ok1 := owner.UID(fi)
	fu, ok2 := owner.UID(file)
	if !ok1 || !ok2 || du == 0 || du == fu {
		return ""
	}
	return fmt.Sprintf("the directory belongs to %s, the file to %s", owner.Describe(du), owner.Describe(fu))
}

// UnmoveFile moves a file MoveFile moved back: the file at m.To must be a regular file, the
// same inode (Dev/Ino, where recorded) and, unless force, of the recorded size and mtime — an
// agent may have appended to it since (a *store.ChangedError says so); m.From must not exist
// (ErrTargetExists) unless it is the same inode (a crash of MoveFile between link and
// unlink: only the name at m.To is removed). Nothing at m.To and a regular file at m.From is a
// move never made (or made undone): nil. The directories the move made are removed when
// empty. Same durability as MoveFile, and the same directories held open: m.From's and m.To's
// (as root, each reached only through links that pass owner.LinkRefusal: pinGoneStoreDir), the
// made ones walked from m.From's without following a link (walkDirs) and removed through their
// parents (rmdir, never an unlink).
func UnmoveFile(ctx context.Context, m Move, force bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	home, err := pinGoneStoreDir(m.From)
	if err != nil {
		return fmt.Errorf("open directory of %s: %w", m.From, err)
	}
	defer home.close()
	at, f, err := openMoved(m.To)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if fi, ferr := home.lstat(m.From); ferr == nil && fi.Mode().IsRegular() {
				removeMadeDirs(home, m.From, m.Made)
				return nil // never moved (a run killed before the link), or moved back already
			}
			return &store.ChangedError{Path: m.To, Reason: "no file is there any more"}
		}
		return err
	}
	defer at.close()
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
	if cur, err := home.lstat(m.From); err == nil {
		if !sameFile(cur, fi) {
			return fmt.Errorf("%s: %w", m.From, ErrTargetExists)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	} else if err := linkPinned(at, m.To, home, m.From); err != nil {
		return err
	} else if cur, err := home.lstat(m.From); err != nil || !sameFile(cur, fi) {
		_ = home.remove(m.From)
		return &store.ChangedError{Path: m.To, Reason: "replaced by another process while it was being moved back"}
	}
	if err := syncDirAt(filepath.Dir(m.From), home); err != nil {
		return err
	}
	if cur, err := at.lstat(m.To); err != nil || !sameFile(cur, fi) {
		return &store.ChangedError{Path: m.To, Reason: "replaced by another process while it was being moved back (the file is back at " + m.From + ")"}
	}
	if err := at.remove(m.To); err != nil {
		return err
	}
	if err := syncDirAt(filepath.Dir(m.To), at); err != nil {
		return err
	}
	removeMadeDirs(home, m.From, m.Made)
	return nil
}

// openMoved opens the moved file at to (no link followed, no FIFO waited on) in its directory,
// held open as pinGoneStoreDir holds one (as root, reached only through links that pass
// owner.LinkRefusal); an error matching fs.ErrNotExist when either is not there.
func openMoved(to string) (*dirPin, *os.File, error) {
	at, err := pinGoneStoreDir(to)
	if err != nil {
		return nil, nil, err
	}
	f, err := at.openFile(to, os.O_RDONLY|noFollowNonBlock, 0)
	if err != nil {
		at.close()
		return nil, nil, err
	}
	return at, f, nil
}

// removeMadeDirs removes the directories of made (a move's Made, outermost first) that are
// empty, innermost first, walking to them from the directory of from, held open as base
// (walkDirs: no link followed) and removing each through its parent.
func removeMadeDirs(base *dirPin, from string, made []string) {
	if len(made) == 0 {
		return
	}
	w, err := walkDirs(base, filepath.Dir(from), made[len(made)-1], nil, nil)
	if err != nil {
		return
	}
	defer w.close()
	for i, p := range w.paths {
		w.made[i] = i > 0 && slices.Contains(made, p)
	}
	w.removeMade()
}
