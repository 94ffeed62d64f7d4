package fileio

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A rewrite or restore writes the new content to a temp sibling of the store,
// "." + <name> + <decimal digits> in the store's directory (the pattern renameio used, which
// scan recognises), and renames it over the store. A run that is killed leaves that temp
// behind. So that the next run can remove it knowing it is sessionfix's own, the name is
// announced to a TempRecorder (the run's journal) before the file is created.
//
// Where the system can (Linux, ext4/XFS/Btrfs/tmpfs: openAnonTemp) a rewrite's temp is made
// without a name (O_TMPFILE) and written and fsynced so; it is given its name (linkat) only
// right before the rename, once that name's announcement, written without a wait of its own
// before the change's journal line, is durable with that line (TempPlanned, then TempLinking).
// A run killed before then leaves nothing behind, and the rewrite does not wait for an fsync of
// the journal before it starts copying.

// Temp events passed to a TempRecorder.
const (
	TempCreating = "temp"         // path is about to be created by this run
	TempForeign  = "temp-foreign" // path existed already: it is not ours
	TempGone     = "temp-done"    // path was renamed over the store or removed
	// TempPlanned: path will be created by this run after the next TempCreating of the same
	// rewrite, or once a TempLinking of path returned; the recorder may make it durable with the
	// next line it makes durable.
	TempPlanned = "temp-planned"
	// TempLinking: path, announced before with TempPlanned, is about to be created (an
	// anonymous temp linked to it, or a kept name): the recorder returns once that announcement
	// is durable, at once when an fsync since it was written covered it. It writes nothing.
	TempLinking = "temp-linking"
)

// TempRecorder journals the life of temp file tmp beside the store at target (event is one of
// the Temp* constants). An error from TempCreating or TempLinking aborts the rewrite before the
// file exists; when TempCreating returns nil, that announcement and every TempPlanned one before
// it are durable; when TempLinking returns nil, tmp's TempPlanned announcement is.
type TempRecorder func(event, tmp, target string) error

type tempRecorderKey struct{}

// WithTempRecorder returns a context whose rewrites and restores announce their temp files to
// rec.
func WithTempRecorder(ctx context.Context, rec TempRecorder) context.Context {
	return context.WithValue(ctx, tempRecorderKey{}, rec)
}

// CPUSlot is a worker pool's run slot, held while a rewrite uses the CPU: a rewrite (RewriteFile,
// RestoreFile) under WithCPUSlot gives it back before each wait for the disk — the journal's
// fsync of its temp file's announcement, and everything after the new content is written (the
// fsyncs, the rename) — and takes it again before the work after the first (the copy). Release
// and Acquire must not block but for a free slot, and do nothing when the slot is already given
// back or held.
type CPUSlot interface {
	Release()
	Acquire()
}

type cpuSlotKey struct{}

// WithCPUSlot returns a context whose rewrites give slot back while they wait for the disk.
func WithCPUSlot(ctx context.Context, slot CPUSlot) context.Context {
	return context.WithValue(ctx, cpuSlotKey{}, slot)
}

// waitForDisk gives the context's CPU slot back (before a wait for the disk).
func waitForDisk(ctx context.Context) {
	if s, ok := ctx.Value(cpuSlotKey{}).(CPUSlot); ok && s != nil {
		s.Release()
	}
}

// backToWork takes the context's CPU slot again (after the wait, before CPU work).
func backToWork(ctx context.Context) {
	if s, ok := ctx.Value(cpuSlotKey{}).(CPUSlot); ok && s != nil {
		s.Acquire()
	}
}

type keptKey struct{}

// WithKeptRecorder returns a context whose forced restores (RestoreFile with force, over a file
// that changed since the run) call rec with the path where the file's content before the
// restore is kept ("<backup>.before-undo", numbered when taken): undo --force names it, since the
// changes made after the run are no longer in the store (issue 30 finding 8).
func WithKeptRecorder(ctx context.Context, rec func(kept string)) context.Context {
	return context.WithValue(ctx, keptKey{}, rec)
}

// keptAt tells the context's kept recorder where a forced restore kept the replaced content.
func keptAt(ctx context.Context, kept string) {
	if rec, ok := ctx.Value(keptKey{}).(func(string)); ok && rec != nil {
		rec(kept)
	}
}

func recordTemp(ctx context.Context, event, tmp, target string) error {
	if rec, ok := ctx.Value(tempRecorderKey{}).(TempRecorder); ok && rec != nil {
		return rec(event, tmp, target)
	}
	return nil
}

// IsTempName reports whether name (a base name) is a temp name for the store named store:
// "." + store + one or more decimal digits.
func IsTempName(name, store string) bool {
	rest, ok := strings.CutPrefix(name, "."+store)
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// newTempName returns a fresh temp name beside path.
func newTempName(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+strconv.FormatUint(rand.Uint64N(1e12), 10))
}

// makeTemp creates a temp sibling of path with create (which must fail with an error matching
// os.ErrExist when the name is taken), announcing it first.
func makeTemp(ctx context.Context, path string, create func(tmp string) error) (string, error) {
	for range 100 {
		tmp := newTempName(path)
		if err := recordTemp(ctx, TempCreating, tmp, path); err != nil {
			return "", fmt.Errorf("record temp file for %s: %w", path, err)
		}
		err := create(tmp)
		if errors.Is(err, os.ErrExist) {
			_ = recordTemp(ctx, TempForeign, tmp, path)
			continue
		}
		if err != nil {
			_ = recordTemp(ctx, TempGone, tmp, path)
			return "", err
		}
		return tmp, nil
	}
	return "", fmt.Errorf("create temp file next to %s: no free name", path)
}

// pendingFile is a temp sibling of path that replaces it on commit.
type pendingFile struct {
	*os.File
	ctx  context.Context
	path string
	pin  *dirPin // path's directory (nil: named by path)
	name string  // the temp's name; an anonymous temp's is the one it is to get (link)
	done bool
	// anon: made without a name (newAnonPendingFile); named by link. announced: its name's
	// TempPlanned announcement was journaled (plan); linked: it has its name.
	anon, announced, linked bool
	// written counts the bytes written, flushed the first of them handed to startWriteback.
	written, flushed int64
}

// Name is the temp's name (an anonymous temp's: the name it is to get).
func (p *pendingFile) Name() string { return p.name }

// writebackChunk is how many written bytes of a temp file are handed to the disk at once
// while it is still being written (startWriteback).
const writebackChunk = 1 << 20

// newPendingFile makes a named temp for path, in pin's directory (nil: path's, by name).
func newPendingFile(ctx context.Context, path string, pin *dirPin) (*pendingFile, error) {
	var f *os.File
	name, err := makeTemp(ctx, path, func(tmp string) error {
		var err error
		f, err = pin.create(tmp)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create temp file next to %s: %w", path, err)
	}
	return &pendingFile{File: f, ctx: ctx, path: path, pin: pin, name: name}, nil
}

// anonTemps turns anonymous temps off when false (tests of the named temp's protocol).
var anonTemps = true

// newAnonPendingFile makes a temp for path without a name (openAnonTemp) and picks the name it
// is to get; false where the system cannot (the caller makes a named one: newPendingFile).
func newAnonPendingFile(ctx context.Context, path string, pin *dirPin) (*pendingFile, bool) {
	if !anonTemps {
		return nil, false
	}
	name := newTempName(path)
	f, err := openAnonTemp(pin, filepath.Dir(path), name)
	if err != nil {
		return nil, false
	}
	return &pendingFile{File: f, ctx: ctx, path: path, pin: pin, name: name, anon: true}, true
}

// plan announces an anonymous temp's name (TempPlanned: journaled, durable with the next line
// made durable); nothing for a named temp. The announcement not journaled, link announces
// another name (and waits for it).
func (p *pendingFile) plan() {
	if p.anon && !p.announced && !p.linked {
		p.announced = recordTemp(p.ctx, TempPlanned, p.name, p.path) == nil
	}
}

// link gives an anonymous temp its name once that name's announcement is durable (TempLinking);
// a name another process took meanwhile is left to it (TempForeign) and a new one announced and
// used. Nothing for a named temp.
func (p *pendingFile) link() error {
	if !p.anon || p.linked {
		return nil
	}
	if p.announced {
		if err := recordTemp(p.ctx, TempLinking, p.name, p.path); err != nil {
			return fmt.Errorf("record temp file for %s: %w", p.path, err)
		}
		err := linkAnonTemp(p.File, p.pin, p.name)
		if err == nil {
			p.linked = true
			return nil
		}
		if !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create temp file next to %s: %w", p.path, err)
		}
		_ = recordTemp(p.ctx, TempForeign, p.name, p.path)
		p.announced = false
	}
	name, err := makeTemp(p.ctx, p.path, func(tmp string) error { return linkAnonTemp(p.File, p.pin, tmp) })
	if err != nil {
		return fmt.Errorf("create temp file next to %s: %w", p.path, err)
	}
	p.name, p.linked = name, true
	return nil
}

// Write goes through the fault seam.
func (p *pendingFile) Write(b []byte) (int, error) {
	if err := Fault(FaultWrite, p.Name()); err != nil {
		return 0, err
	}
	n, err := p.File.Write(b)
	p.written += int64(n)
	if p.written-p.flushed >= writebackChunk {
		startWriteback(p.File, p.flushed, p.written-p.flushed)
		p.flushed = p.written
	}
	return n, err
}

// Sync goes through the fault seam.
func (p *pendingFile) Sync() error {
	if err := Fault(FaultSync, p.Name()); err != nil {
		return err
	}
	return p.File.Sync()
}

// Cleanup removes the temp unless it replaced path (an anonymous temp never named is only
// closed: the kernel frees it).
func (p *pendingFile) Cleanup() {
	if p.done {
		return
	}
	p.File.Close()
	p.done = true
	if p.anon && !p.linked {
		if p.announced {
			_ = recordTemp(p.ctx, TempGone, p.name, p.path)
		}
		return
	}
	_ = p.pin.remove(p.name)
	_ = recordTemp(p.ctx, TempGone, p.name, p.path)
}

// replace closes the temp (which the caller fsynced) and renames it over path (the directory
// is not synced). The temp's name is checked to still be the file written (lstat against the
// descriptor's fstat) right before the rename, and path to be it right after: the directory's
// owner may have swapped the name for a symbolic link or another file meanwhile, which the
// rename would otherwise put in the store's place (issue 30 finding 4). Either is a
// *TempSwappedError (Renamed after the rename: what is at path is not ours, the caller puts the
// original back).
func (p *pendingFile) replace() error {
	if p.anon && !p.linked {
		return errors.New("the temp file has no name yet") // a caller's mistake: link first
	}
	written, err := p.File.Stat()
	if err != nil {
		return err
	}
	if err := p.File.Close(); err != nil {
		return err
	}
	if err := Fault(FaultRename, p.path); err != nil {
		return err
	}
	if li, err := p.pin.lstat(p.Name()); err != nil || !sameFile(li, written) {
		return &TempSwappedError{Path: p.path, Temp: p.Name(), Now: describeSwap(li, err)}
	}
	if testHookTempRename != nil {
		testHookTempRename(p.Name())
	}
	if err := p.pin.rename(p.Name(), p.path); err != nil {
		return err
	}
	p.done = true
	_ = recordTemp(p.ctx, TempGone, p.Name(), p.path)
	if li, err := p.pin.lstat(p.path); err != nil || !sameFile(li, written) {
		return &TempSwappedError{Path: p.path, Temp: p.Name(), Now: describeSwap(li, err), Renamed: true}
	}
	return nil
}

// testHookTempRename runs between replace's check of the temp's name and its rename (tests
// only).
var testHookTempRename func(tmp string)

// TempSwappedError is a rewrite whose temp file's name no longer named the file it wrote when it
// was to be renamed over the store: another process (the directory's owner) replaced it. The
// store is not rewritten; the run fails it (exit 3).
type TempSwappedError struct {
	Path, Temp string
	// Now says what the name held instead ("a symbolic link", "another file", "nothing").
	Now string
	// Renamed: the swap came between the check and the rename, so the swapped-in file was
	// renamed over Path (the caller puts the original back).
	Renamed bool
}

func (e *TempSwappedError) Error() string {
	return fmt.Sprintf("its temp file %s was replaced by another process (it is now %s) before it was renamed over the store: not rewritten",
		e.Temp, e.Now)
}

// describeSwap names what an lstat found at a temp file's name.
func describeSwap(fi os.FileInfo, err error) string {
	switch {
	case err != nil:
		return "gone"
	case fi.Mode()&os.ModeSymlink != 0:
		return "a symbolic link"
	case fi.Mode().IsRegular():
		return "another file"
	}
	return "a " + fi.Mode().Type().String() + " file"
}
