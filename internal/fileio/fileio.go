package fileio

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/store"
)

// Transform writes the new content of a file to dst while reading the original from src.
type Transform func(dst io.Writer, src io.Reader) error

// testHookBeforeRename runs between the last in-use check and the rename (tests only).
var testHookBeforeRename func(path string)

// copyBufSize is the buffer of every streaming copy: memory stays flat whatever the file size.
const copyBufSize = 256 << 10

// castagnoli is the CRC-32C table (hardware-accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// NewFingerprint returns the hash behind store.FileState.Fingerprint and a function formatting its
// sum ("crc32c:<8 hex digits>").
func NewFingerprint() (hash.Hash32, func(hash.Hash32) string) {
	return crc32.New(castagnoli), func(h hash.Hash32) string { return fmt.Sprintf("crc32c:%08x", h.Sum32()) }
}

// StatFile returns the store.FileState of path without hashing it.
func StatFile(path string) (store.FileState, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return store.FileState{}, err
	}
	return store.FileState{Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime()}, nil
}

// HashFile returns the hex SHA-256 of a file's content (opened as a store is: OpenStore).
func HashFile(path string) (string, error) {
	f, _, err := OpenStore(path, store.FileID{})
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, f, make([]byte, copyBufSize)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// RewriteFile replaces the file at path with transform's output, crash-safely and only if the
// file is still what was scanned (want: size, mtime and the checksums it records:
// want.Fingerprint, the scan's "crc32c:<hex>" or any spelling sumFor knows, and want.SHA256):
//
//  1. open the original and check size and mtime against want;
//  2. refuse when another process holds it open for writing (the kernel's count of writable
//     opens, asked with a read lease; /proc names the process) or locked (flock);
//  3. in one streaming pass, copy the original into opt.BackupPath (or hard-link it), checksum
//     it (its XXH3-128, recorded as Change.Before.Fingerprint, and want's checksums), and
//     write the transformed content to a temp sibling (".<name><digits>", same directory,
//     announced to the context's TempRecorder before it is created; where it can be, it is
//     made without a name and given it after step 5: nameTemp), checksummed too
//     (XXH3-128, Change.After.Fingerprint; see checksum.go);
//  4. refuse when a checksum differs from want's (the content changed since the scan);
//  5. give the temp the original's mode and mtime (owner best-effort) and fsync it; at the
//     same time fsync the backup, wait for its directory's fsync (started as soon as the
//     backup's name existed, during step 3, and shared with concurrent rewrites whose backups
//     are in the same directory), then call opt.BeforeCommit (the caller journals the change:
//     a journaled change has a durable backup); an anonymous temp's name and the kept name
//     (step 7's way back) are announced before that journal line and, once it is durable, the
//     original checked unchanged and both linked (nameTemp);
//  6. set an inotify watch on the original (every later open of it is seen);
//  7. check again that the original was not appended to, replaced or opened for writing (a
//     read lease, or a fresh view of /proc when the kernel counts a writer), and rename the
//     temp over it;
//  8. check the old inode (the backup link and our descriptor hold it): a process that opened
//     it for writing in the meantime would go on writing into the old file, so the rename is
//     rolled back (the old inode is linked back at path) and the file refused as in use;
//     bytes appended to it without a writer left open are carried over to the end of the new
//     file, and the file reported in use (a *CommittedError wrapping an *store.InUseError);
//  9. fsync the directory (or, under WithDirSyncs, leave it to the run's DirSyncs.Sync: one
//     fsync of each directory after the run's last rewrite), and check the old inode once more.
//
// A crash at any instant leaves the old file or the new one at path. An in-use refusal returns
// an *store.InUseError and leaves the file, and no temp, behind. An error once the new file is in
// place is a *CommittedError returned with the store.Change, which the caller must record (undo
// needs it). store.Change.After describes the bytes the rewrite wrote (the first After.Size bytes
// of the file); bytes carried over follow them and are counted in store.Change.Carried.
func RewriteFile(ctx context.Context, path string, want store.FileState, transform Transform, opt store.ApplyOptions) (ch *store.Change, err error) {
	return rewriteFile(ctx, path, want, transform, opt, nil)
}

// rewriteFile is RewriteFile; a non-nil meta gives the new file meta's mode and mtime instead
// of the original's (a restore). Its steps are RewriteFile's, each a method of replacement;
// what a step made that must not outlive a failure (the backup, the temp, the kept link, the
// lock) is undone by cleanup, in the reverse order it was made.
func rewriteFile(ctx context.Context, path string, want store.FileState, transform Transform, opt store.ApplyOptions, meta *store.FileState) (*store.Change, error) {
	if err := checkRegular(path); err != nil {
		return nil, err
	}
	r := &replacement{ctx: ctx, path: path, opt: opt, meta: meta}
	defer r.cleanup()
	if err := r.open(want); err != nil { // steps 1 and 2
		return nil, err
	}
	pin, err := pinDir(path, r.fi)
	if errors.Is(err, errDirMoved) {
		return nil, &store.InUseError{Path: path, Reason: "replaced since it was scanned: " + err.Error()}
	} else if err != nil {
		return nil, fmt.Errorf("open directory of %s: %w", path, err)
	}
	r.pin = pin
	if err := r.createBackup(); err != nil { // step 3: the backup
		return nil, err
	}
	if err := r.createTemp(); err != nil { // step 3: the temp and the kept link
		return nil, err
	}
	out, before, after, err := r.copyAndTransform(want, transform) // steps 3 and 4
	if err != nil {
		return nil, err
	}
	ch, err := r.finishTemp(out.n, before, after) // step 5: the temp's metadata
	if err != nil {
		return nil, err
	}
	if err := r.syncAndJournal(ch); err != nil { // step 5: fsyncs, then BeforeCommit
		return nil, err
	}
	if err := r.nameTemp(); err != nil { // an anonymous temp's names
		r.keepBackup = false
		return nil, err
	}
	return r.replace(ch) // steps 6 to 9
}

// checkRegular refuses a path that is a symbolic link or not a regular file (the rename would
// replace the link, not write its target).
func checkRegular(path string) error {
	if li, err := os.Lstat(path); err == nil && li.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("rewrite %s: %w: a symbolic link (rewrite its target)", path, store.ErrNotWritable)
	} else if err == nil && !li.Mode().IsRegular() {
		return fmt.Errorf("rewrite %s: %w: not a regular file", path, store.ErrNotWritable)
	}
	return nil
}

// replacement is one rewriteFile in progress: what its steps share and what cleanup undoes.
type replacement struct {
	ctx  context.Context
	path string
	opt  store.ApplyOptions
	meta *store.FileState

	orig       *os.File    // the original, open (step 1)
	fi         os.FileInfo // its stat when opened
	ref        os.FileInfo // its stat after the links: the final check's reference
	locked     bool        // orig is locked (tryLockFile)
	pin        *dirPin     // the store's directory, held open (pinDir) once orig is
	otherLinks bool        // the original has other hard links: its backup is a copy
	linked     bool        // the backup is a hard link to the original
	bk         *os.File    // the backup being copied (nil when linked)
	// backupDirSynced gets the result of the backup directory's fsync.
	backupDirSynced chan error
	ownBackup       bool // the backup is ours: cleanup removes it unless keepBackup
	keepBackup      bool
	pf              *pendingFile // the temp
	keep            string       // a second name of the old inode beside path ("" when none)
	ownKeep         bool         // keep is ours: cleanup removes it (when still set)
	// keepName is the kept name announced (TempPlanned) and made by nameTemp when the temp is
	// anonymous ("" when it was not announced).
	keepName string
	bw, ow   *bufio.Writer
	newFi    os.FileInfo // the temp's stat once its metadata is set
	ownerErr error       // the owner could not be given
	written  int64
	opens    *openWatch // opens of the old inode after the final check (watching)
	watching bool
}

// cleanup undoes what the steps made, the last first, as deferred calls would.
func (r *replacement) cleanup() {
	if r.watching {
		r.opens.close()
	}
	if r.ow != nil {
		putWriter(r.ow)
	}
	if r.bw != nil {
		putWriter(r.bw)
	}
	if r.ownKeep && r.keep != "" {
		_ = r.pin.remove(r.keep)
		_ = recordTemp(r.ctx, TempGone, r.keep, r.path)
	}
	if r.keepName != "" { // announced, never made (nameTemp not reached)
		_ = recordTemp(r.ctx, TempGone, r.keepName, r.path)
	}
	if r.pf != nil {
		r.pf.Cleanup() // removes the temp unless it was renamed
	}
	if r.ownBackup {
		if r.bk != nil {
			r.bk.Close()
		}
		if !r.keepBackup {
			os.Remove(r.opt.BackupPath)
		}
	}
	if r.orig != nil {
		r.orig.Close() // and its lock with it
	}
	r.pin.close()
}

// open is steps 1 and 2: the original opened as every store is (no link followed, no FIFO
// waited on) and, when the scan said which file it read, that file or none (issue 30 finding
// 5); its size and mtime still want's; no process holding it open for writing; and an
// exclusive advisory lock while rewriting: another sessionfix run (or any process that locks
// the file) is kept out, and a lock another process holds refuses the file.
func (r *replacement) open(want store.FileState) error {
	path := r.path
	orig, fi, err := OpenStore(path, want.ID)
	if errors.Is(err, ErrNotTheFile) {
		return &store.InUseError{Path: path, Reason: "replaced since it was scanned: " + err.Error(), Err: err}
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	r.orig, r.fi = orig, fi
	if fi.Size() != want.Size || !fi.ModTime().Equal(want.ModTime) {
		return &store.InUseError{Path: path, Reason: fmt.Sprintf("changed since it was scanned (size %d→%d, mtime %s→%s)",
			want.Size, fi.Size(), want.ModTime.Format(time.RFC3339Nano), fi.ModTime().Format(time.RFC3339Nano))}
	}
	if w := openWriters(orig, fi); len(w) > 0 {
		return heldOpen(path, w)
	}
	locked, lerr := tryLockFile(orig)
	if lerr == nil && !locked {
		return &store.InUseError{Path: path, Reason: "locked by another process (another sessionfix run, or an agent)"}
	}
	r.locked = locked
	return nil
}

// createBackup makes the backup of step 3. It is created exclusively: a run never overwrites
// an earlier backup. It is a hard link to the original inode when the run directory is on the
// same file system (the rename leaves that inode untouched, so nothing needs copying), else a
// file the copy pass fills (r.bk). The fsync of its directory starts at once
// (r.backupDirSynced), shared with the run's other rewrites.
func (r *replacement) createBackup() error {
	path, bpath := r.path, r.opt.BackupPath
	if err := os.MkdirAll(filepath.Dir(bpath), 0o700); err != nil {
		return fmt.Errorf("create backup directory: %w", err)
	}
	// A file with other hard links (a cp -al or rsnapshot snapshot, say) keeps its inode alive
	// under those names: they could change it later, so its backup must be a copy (and the
	// other names keep the old content, as a rename-based replace must).
	r.otherLinks = nlink(r.fi) > 1
	if !r.otherLinks {
		if err := linkPinned(r.pin, path, nil, bpath); err == nil {
			if bfi, err := os.Lstat(bpath); err == nil && sameFile(bfi, r.fi) {
				r.linked = true
			} else {
				os.Remove(bpath)
				return &store.InUseError{Path: path, Reason: "replaced by another process while rewriting"}
			}
		} else if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create backup of %s: %w", path, err)
		}
	}
	if !r.linked {
		bk, err := os.OpenFile(bpath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fmt.Errorf("create backup of %s: %w", path, err)
		}
		r.bk = bk
	}
	// The backup's name is made durable now, while the temp is announced and written: the
	// commit waits for it.
	synced := make(chan error, 1)
	go func() { synced <- syncDirGrouped(filepath.Dir(bpath)) }()
	r.backupDirSynced = synced
	r.ownBackup = true
	return nil
}

// createTemp makes the temp of step 3 (".<name><digits>" beside path, announced to the
// context's TempRecorder first) and a second name for the old inode in the store's directory,
// the way back if the rename must be rolled back (a journaled temp; without hard links, the
// backup link serves). (On a file system without hard links a rollback is not possible: a late
// writer is then reported, not rolled back.) The kept name is announced with the temp file's,
// one durable journal write for both.
//
// Where the temp can be made without a name (newAnonPendingFile) nothing is named here: the
// temp and the kept name are announced with the change's journal line and made once it is
// durable (nameTemp), and nothing waits for the journal before the copy.
func (r *replacement) createTemp() error {
	ctx, path := r.ctx, r.path
	if pf, ok := newAnonPendingFile(ctx, path, r.pin); ok {
		r.pf = pf
		return r.takeRef()
	}
	linkKeep := r.linkKeep
	keepName := newTempName(path)
	planned := recordTemp(ctx, TempPlanned, keepName, path) == nil
	waitForDisk(ctx) // the temp's announcement is fsynced first
	pf, err := newPendingFile(ctx, path, r.pin)
	backToWork(ctx)
	if err != nil {
		if planned {
			_ = recordTemp(ctx, TempGone, keepName, path)
		}
		return err
	}
	r.pf = pf

	var kerr error
	switch {
	case !planned:
		r.keep, kerr = makeTemp(ctx, path, linkKeep)
	default:
		if kerr = linkKeep(keepName); kerr == nil {
			r.keep = keepName
		} else if errors.Is(kerr, os.ErrExist) {
			_ = recordTemp(ctx, TempForeign, keepName, path)
			r.keep, kerr = makeTemp(ctx, path, linkKeep)
		} else {
			_ = recordTemp(ctx, TempGone, keepName, path)
		}
	}
	if kerr == nil {
		r.ownKeep = true
		if kfi, err := r.pin.lstat(r.keep); err != nil || !sameFile(kfi, r.fi) {
			return &store.InUseError{Path: path, Reason: "replaced by another process while rewriting"}
		}
	}
	return r.takeRef()
}

// linkKeep makes tmp (a temp name beside the store) a second name of the original: the way back.
func (r *replacement) linkKeep(tmp string) error {
	return r.pin.link(r.path, tmp)
}

// takeRef takes the reference for the final in-use check: the original's stat after the links
// (which touched the inode's ctime).
func (r *replacement) takeRef() error {
	ref, err := r.orig.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", r.path, err)
	}
	r.ref = ref
	return nil
}

// nameTemp gives an anonymous temp (createTemp) its names once the change is journaled
// (syncAndJournal announced them before the journal line, whose fsync made them durable:
// TempLinking finds them so): first the original is checked as the final check will
// (unchanged: not appended to, replaced, changed or opened for writing since the reference was
// taken, before the copy), then its kept name is linked (the way back, as createTemp's), the
// reference taken again (the link moved its ctime; its size and mtime must not have moved), and
// the temp linked to its name. Nothing for a named temp.
func (r *replacement) nameTemp() error {
	if !r.pf.anon {
		return nil
	}
	ctx, path := r.ctx, r.path
	if err := unchanged(path, r.pin, r.orig, r.ref); err != nil {
		return err
	}
	linkKeep := r.linkKeep
	var kerr error
	switch {
	case r.keepName == "":
		r.keep, kerr = makeTemp(ctx, path, linkKeep)
	default:
		if kerr = recordTemp(ctx, TempLinking, r.keepName, path); kerr != nil {
			_ = recordTemp(ctx, TempGone, r.keepName, path)
		} else if kerr = linkKeep(r.keepName); kerr == nil {
			r.keep = r.keepName
		} else if errors.Is(kerr, os.ErrExist) {
			_ = recordTemp(ctx, TempForeign, r.keepName, path)
			r.keep, kerr = makeTemp(ctx, path, linkKeep)
		} else {
			_ = recordTemp(ctx, TempGone, r.keepName, path)
		}
		r.keepName = "" // linked (keep), or journaled as not ours or gone
	}
	if kerr == nil {
		r.ownKeep = true
		if kfi, err := r.pin.lstat(r.keep); err != nil || !sameFile(kfi, r.fi) {
			return &store.InUseError{Path: path, Reason: "replaced by another process while rewriting"}
		}
	}
	before := r.ref
	if err := r.takeRef(); err != nil {
		return err
	}
	if r.ref.Size() != before.Size() || !r.ref.ModTime().Equal(before.ModTime()) {
		return &store.InUseError{Path: path, Reason: fmt.Sprintf("appended to while rewriting (size %d→%d)", before.Size(), r.ref.Size())}
	}
	return r.pf.link()
}

// copyAndTransform is steps 3 and 4: one pass over the original that copies it into the
// backup (unless linked), checksums it (its XXH3-128, recorded as Before.Fingerprint, the
// backup's check at undo, and whatever want's checksums need: the scan's CRC-32C, a SHA-256 or
// XXH3-128 a caller recorded, each algorithm computed once) and writes transform's output to
// the temp, checksummed too (after); then the content is refused when a checksum differs from
// want's.
func (r *replacement) copyAndTransform(want store.FileState, transform Transform) (*countWriter, *sums, hash.Hash, error) {
	path := r.path
	wants := []string{xxh3Prefix, want.SHA256, want.Fingerprint}
	before := newSums(wants...)
	after := newXXH128()
	var src io.Reader = io.TeeReader(&ctxReader{ctx: r.ctx, r: r.orig}, before)
	if r.bk != nil {
		r.bw = getWriter(faultWriter{w: r.bk, path: r.opt.BackupPath})
		src = io.TeeReader(src, r.bw)
	}
	out := &countWriter{w: io.MultiWriter(r.pf, after)}
	r.ow = getWriter(out)
	if err := transform(r.ow, src); err != nil {
		return nil, nil, nil, fmt.Errorf("rewrite %s: %w", path, err)
	}
	// Drain what the transform did not read (it must see the whole file); ow reads it through
	// its own buffer (io.Copy uses ow's ReadFrom).
	if _, err := io.Copy(r.ow, src); err != nil {
		return nil, nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := r.ow.Flush(); err != nil {
		return nil, nil, nil, fmt.Errorf("write temp for %s: %w", path, err)
	}
	if r.bw != nil {
		if err := r.bw.Flush(); err != nil {
			return nil, nil, nil, fmt.Errorf("write backup of %s: %w", path, err)
		}
	}
	// Flushed: the buffers go back now, not once the fsyncs are done (cleanup), so a rewrite
	// waiting for the disk holds none.
	putWriter(r.ow)
	putWriter(r.bw)
	r.ow, r.bw = nil, nil
	for i, w := range wants[1:] {
		if w != "" && before.get(i+1) != w {
			return nil, nil, nil, &store.InUseError{Path: path, Reason: "content changed since it was scanned"}
		}
	}
	return out, before, after, nil
}

// finishTemp is step 5's first half: the temp's metadata first, so that its fsync makes it
// durable with the content. The mode and mtime are the original's (meta's for a restore); the
// owner is the original's (a restore: the one the run recorded when it could not keep it, else
// the file's now); one that cannot be given (not root: issue 23 item 8) is said, never silent.
// It returns the change: the original (before, written bytes) and the new content (after).
func (r *replacement) finishTemp(written int64, before *sums, after hash.Hash) (*store.Change, error) {
	path, fi, meta, pf := r.path, r.fi, r.meta, r.pf
	newMode, newMtime := fi.Mode(), fi.ModTime()
	if meta != nil {
		newMode, newMtime = meta.Mode, meta.ModTime
	}
	wantOwner := ownerOf(fi)
	if meta != nil && meta.Owner != nil {
		wantOwner = meta.Owner
	}
	r.ownerErr = giveOwner(pf.File, path, wantOwner, meta != nil) // before chmod: chown clears setuid/setgid
	if err := pf.Chmod(modeBits(newMode)); err != nil {
		return nil, fmt.Errorf("chmod temp for %s: %w", path, err)
	}
	xattrWarnings := copyXattrs(r.orig, pf.File)
	if testHookTempWritten != nil {
		testHookTempWritten(pf.Name())
	}
	// Through the descriptor, never the temp's name (issue 30 finding 4).
	if err := setFileTimes(pf.File, atime(fi), newMtime); err != nil {
		return nil, fmt.Errorf("set mtime of temp for %s: %w", path, err)
	}
	newFi, err := pf.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat temp for %s: %w", path, err)
	}
	r.newFi, r.written = newFi, written
	if r.otherLinks {
		xattrWarnings = append(xattrWarnings, fmt.Sprintf("the file had %d hard links: only this name was rewritten, the other names keep the old content", nlink(fi)))
	}
	var lostOwner *store.FileOwner // recorded for undo when the new file has another owner
	if r.ownerErr != nil && meta == nil {
		lostOwner = wantOwner
		xattrWarnings = append(xattrWarnings, r.ownerErr.Error())
	}
	var original *store.FileOwner // a rewrite's record of the owner, for undo of a store gone since
	if meta == nil {
		original = ownerOf(fi)
	}
	return &store.Change{
		Warnings:      xattrWarnings,
		Backup:        r.opt.BackupPath,
		BackupLink:    r.linked,
		OriginalOwner: original,
		Before:        store.FileState{Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime(), Fingerprint: before.get(0), Owner: lostOwner},
		After:         store.FileState{Size: written, Mode: newMode, ModTime: newMtime, Fingerprint: formatSum(after, xxh3Prefix)},
	}, nil
}

// syncAndJournal is step 5's second half: two chains of waits at once (the file system can
// serve them with one journal commit): the temp's fsync; and the backup's fsync, its
// directory's, then the caller's journal line (opt.BeforeCommit with ch) — in that order, so
// a change that is journaled has a durable backup. Both end before the final check and the
// rename; from then on the backup is kept.
func (r *replacement) syncAndJournal(ch *store.Change) error {
	path := r.path
	waitForDisk(r.ctx) // what is left is mostly waiting for the disk
	if r.pf.anon {
		// The names nameTemp makes, announced before the journal line: its fsync makes them
		// durable too.
		name := newTempName(path)
		if recordTemp(r.ctx, TempPlanned, name, path) == nil {
			r.keepName = name
		}
		r.pf.plan()
	}
	tempSynced := make(chan error, 1)
	pf := r.pf
	go func() { tempSynced <- pf.Sync() }()
	backupErr := func() error {
		if r.bk != nil {
			if err := Fault(FaultSync, r.opt.BackupPath); err != nil {
				return fmt.Errorf("sync backup of %s: %w", path, err)
			}
			if err := r.bk.Sync(); err != nil {
				return fmt.Errorf("sync backup of %s: %w", path, err)
			}
		}
		if err := <-r.backupDirSynced; err != nil {
			return err
		}
		if r.opt.BeforeCommit != nil {
			if err := r.opt.BeforeCommit(ch); err != nil {
				return fmt.Errorf("journal change of %s: %w", path, err)
			}
		}
		return nil
	}()
	if err := <-tempSynced; err != nil {
		// Journaled perhaps, but not replaced: the caller journals the abort.
		return fmt.Errorf("sync temp for %s: %w", path, err)
	}
	if backupErr != nil {
		return backupErr
	}
	r.keepBackup = true
	return nil
}

// replace is steps 6 to 9: the inotify watch on the original, the final check that it was not
// appended to, replaced or opened for writing, the rename (a temp swapped under us is undone:
// the original put back), then the old inode checked (lateWatch: a late writer rolls the rename
// back, appended bytes are carried over), the directory fsynced, and the old inode checked once
// more. An error once the new file is in place is a *CommittedError returned with ch.
func (r *replacement) replace(ch *store.Change) (*store.Change, error) {
	path := r.path
	BeforeCheck(r.ctx, path)
	// From here to the rename nothing of ours opens the file: an open seen by the watch is
	// another process's, and only then must /proc be looked at again after the rename.
	r.opens, r.watching = watchOpens(r.pin.procPath(path)), true
	if err := unchanged(path, r.pin, r.orig, r.ref); err != nil {
		r.keepBackup = false
		return nil, err
	}
	if testHookBeforeRename != nil {
		testHookBeforeRename(path)
	}
	if err := r.pf.replace(); err != nil {
		var te *TempSwappedError
		if errors.As(err, &te) && te.Renamed {
			// What replaced the temp is at path now, and the original inode is named only by
			// the kept link and the backup: put the original back.
			if perr := putBack(path, r.pin, r.keep, r.fi); perr != nil {
				return nil, fmt.Errorf("replace %s: %w; the original could not be put back (%v): it is kept at %s", path, err, perr, r.opt.BackupPath)
			}
			r.keep = ""
			err = fmt.Errorf("%w; the original was put back", err)
		}
		r.keepBackup = false
		return nil, fmt.Errorf("replace %s: %w", path, err)
	}
	if testHookAfterRename != nil {
		testHookAfterRename(path)
	}
	// The new file is in place: from here on an error is returned with ch (a CommittedError).
	lw := &lateWatch{ctx: r.ctx, path: path, pin: r.pin, orig: r.orig, old: r.fi, new: r.newFi, size: r.fi.Size(), written: r.written,
		backup: r.opt.BackupPath, linked: r.linked, keep: r.keep, ch: ch, opens: r.opens}
	if err := lw.check(); err != nil {
		if errors.Is(err, errRolledBack) {
			r.keepBackup, r.keep = false, ""
			return nil, lw.inUse
		}
		return ch, &CommittedError{Err: err}
	}
	var dirErr error
	if ds := dirSyncsOf(r.ctx); ds != nil {
		ds.add(path, r.pin) // the run fsyncs the directory once, after its last rewrite there
	} else {
		dirErr = syncDirAt(filepath.Dir(path), r.pin)
	}
	// A writer whose open raced the first check is visible now.
	if err := lw.check(); err != nil {
		if errors.Is(err, errRolledBack) {
			r.keepBackup, r.keep = false, ""
			return nil, lw.inUse
		}
		return ch, &CommittedError{Err: err}
	}
	if dirErr != nil {
		return ch, &CommittedError{Err: dirErr}
	}
	if lw.carried > 0 {
		ch.Carried = lw.carried
		ch.Warnings = append(ch.Warnings, fmt.Sprintf("%s appended while replacing %s carried over to the end of the new file", bytesPhrase(lw.carried), wasWere(lw.carried)))
		return ch, &CommittedError{Err: &store.InUseError{Path: path, Reason: fmt.Sprintf(
			"appended to while it was being replaced: %s carried over (undo keeps them); stop the agent before fixing its session", newBytesPhrase(lw.carried))}}
	}
	if r.ownerErr != nil && r.meta != nil {
		// A restore whose content is back but whose owner is not: said (undo: "restored, but").
		return ch, &CommittedError{Err: r.ownerErr}
	}
	return ch, nil
}

// testHookAfterRename runs right after the rename, before the old inode is checked (tests
// only).
var testHookAfterRename func(path string)

// testHookTempWritten runs once the temp file holds the new content, before its times are set
// (tests only).
var testHookTempWritten func(tmp string)

// putBack renames keep (a temp link to the original inode old, beside path) over path: the way
// back when something else than the new content got renamed over path.
func putBack(path string, pin *dirPin, keep string, old os.FileInfo) error {
	if keep == "" {
		return errors.New("no other name of the original beside it (no hard links here)")
	}
	if kfi, err := pin.lstat(keep); err != nil || !sameFile(kfi, old) {
		return errors.New("the kept link to the original was replaced too")
	}
	if err := pin.rename(keep, path); err != nil {
		return err
	}
	return syncDirAt(filepath.Dir(path), pin)
}

// CommittedError is an error that happened after a rewrite put the new file in place: the
// store holds the new content and the store.Change returned with it must be recorded (undo needs
// it). Err is what went wrong: an *store.InUseError when another process wrote to the store during
// the replace, an I/O error (a directory fsync) otherwise.
type CommittedError struct{ Err error }

func (e *CommittedError) Error() string {
	return e.Err.Error() + " (the file was rewritten and the change recorded)"
}

// Unwrap returns Err.
func (e *CommittedError) Unwrap() error { return e.Err }

// errRolledBack marks a replace that was undone because a writer held the old inode.
var errRolledBack = errors.New("rolled back")

// bytesPhrase is n with its unit: "1 byte", "5 bytes".
func bytesPhrase(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// newBytesPhrase is "the 1 new byte was", "the 5 new bytes were".
func newBytesPhrase(n int64) string {
	if n == 1 {
		return "the 1 new byte was"
	}
	return fmt.Sprintf("the %d new bytes were", n)
}

// wasWere is the verb agreeing with a count of n.
func wasWere(n int64) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// lateWatch checks the old inode after the rename: a writer holding it, or bytes appended.
type lateWatch struct {
	ctx     context.Context
	path    string
	pin     *dirPin     // path's directory
	orig    *os.File    // the old inode
	old     os.FileInfo // its stat when scanned
	new     os.FileInfo // the new inode
	size    int64       // bytes of the old inode the rewrite read
	written int64       // bytes of the new file the rewrite wrote
	carried int64       // bytes carried over so far
	backup  string      // the backup
	linked  bool        // the backup is a link to the old inode
	keep    string      // a temp link to the old inode beside path ("" when none could be made)
	ch      *store.Change
	opens   *openWatch // opens of the old inode since the final check (nil: unknown)
	inUse   error      // the refusal after a rollback
}

func (w *lateWatch) check() error {
	// No process opened the old inode since the final check found no writer: none holds it.
	if !w.opens.opened() {
		n, err := carryOver(w.orig, w.size+w.carried, w.path, w.pin, w.new)
		w.carried += n
		return err
	}
	if ws := writersOf(idOfStat(w.old), true); len(ws) > 0 {
		reason := "held open for writing by " + strings.Join(ws, ", ") + ", which opened it while it was being rewritten"
		if err := w.rollBack(); err != nil {
			return &store.InUseError{Path: w.path, Reason: fmt.Sprintf(
				"%s: it writes into the old file (kept at %s), not into the session, and the replace could not be rolled back (%v); stop the agent, then undo this run with --force or append the backup's bytes after byte %d to the session",
				reason, w.backup, err, w.size)}
		}
		w.inUse = &store.InUseError{Path: w.path, Reason: reason + "; the replace was rolled back, nothing changed; stop the agent first"}
		return errRolledBack
	}
	n, err := carryOver(w.orig, w.size+w.carried, w.path, w.pin, w.new)
	w.carried += n
	return err
}

// rollBack puts the old inode back at path (a temp link to it renamed over the new file) and
// moves to it whatever was appended to the new file meanwhile.
func (w *lateWatch) rollBack() error {
	nf, err := w.pin.openFile(w.path, os.O_RDONLY|noFollowNonBlock, 0)
	if err != nil {
		return err
	}
	defer nf.Close()
	if nfi, err := nf.Stat(); err != nil || !sameFile(nfi, w.new) {
		return errors.New("the new file was replaced by another process")
	}
	tmp := w.keep
	if tmp == "" {
		if !w.linked {
			return errors.New("no other name of the old file to put back (no hard links here)")
		}
		var err error
		if tmp, err = makeTemp(w.ctx, w.path, func(tmp string) error { return linkPinned(nil, w.backup, w.pin, tmp) }); err != nil {
			return err
		}
	}
	if tfi, err := w.pin.lstat(tmp); err != nil || !sameFile(tfi, w.old) {
		_ = w.pin.remove(tmp)
		_ = recordTemp(w.ctx, TempGone, tmp, w.path)
		return errors.New("the backup is no longer the old file")
	}
	if err := Fault(FaultRename, w.path); err != nil {
		_ = w.pin.remove(tmp)
		_ = recordTemp(w.ctx, TempGone, tmp, w.path)
		return err
	}
	if err := w.pin.rename(tmp, w.path); err != nil {
		_ = w.pin.remove(tmp)
		_ = recordTemp(w.ctx, TempGone, tmp, w.path)
		return err
	}
	_ = recordTemp(w.ctx, TempGone, tmp, w.path)
	// Bytes appended to the new file while it was in place (beyond what we wrote and carried)
	// belong at the end of the old one.
	if nfi, err := nf.Stat(); err == nil && nfi.Size() > w.written+w.carried {
		if _, err := carryOver(nf, w.written+w.carried, w.path, w.pin, w.old); err != nil {
			return err
		}
	}
	return syncDirAt(filepath.Dir(w.path), w.pin)
}

// unchanged checks that path (in pin's directory) is still the inode we read, that it did not
// grow or change and that no other process holds it open for writing (the kernel's count, else a
// fresh view of /proc).
func unchanged(path string, pin *dirPin, orig *os.File, fi os.FileInfo) error {
	now, err := pin.lstat(path)
	if err != nil {
		return &store.InUseError{Path: path, Reason: "disappeared while rewriting: " + err.Error()}
	}
	if !sameFile(now, fi) {
		return &store.InUseError{Path: path, Reason: "replaced by another process while rewriting"}
	}
	if now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
		return &store.InUseError{Path: path, Reason: fmt.Sprintf("appended to while rewriting (size %d→%d)", fi.Size(), now.Size())}
	}
	if a, ok := ctime(now); ok {
		if b, ok := ctime(fi); ok && !a.Equal(b) {
			return &store.InUseError{Path: path, Reason: "changed while rewriting (its inode change time moved)"}
		}
	}
	if ofi, err := orig.Stat(); err == nil && ofi.Size() != fi.Size() {
		return &store.InUseError{Path: path, Reason: "appended to while rewriting"}
	}
	if w := openWritersFresh(orig, now); len(w) > 0 {
		return heldOpen(path, w)
	}
	return nil
}

// heldOpen is the refusal of a file another process keeps open for writing: replacing it would
// send that process's next writes to the old, unlinked file.
func heldOpen(path string, writers []string) error {
	return &store.InUseError{Path: path, Reason: "held open for writing by " + strings.Join(writers, ", ") + "; stop the agent first"}
}

// carryOver appends to path (in pin's directory; it must still be the inode of dst) whatever
// src holds after byte from, until src stops growing, and fsyncs it; it returns the bytes
// copied. The new file is locked (flock) meanwhile, against another sessionfix run.
func carryOver(src *os.File, from int64, path string, pin *dirPin, dst os.FileInfo) (int64, error) {
	sfi, err := src.Stat()
	if err != nil || sfi.Size() <= from {
		return 0, nil
	}
	f, err := pin.openFile(path, os.O_WRONLY|os.O_APPEND|noFollowNonBlock, 0)
	if err != nil {
		return 0, fmt.Errorf("carry over late append to %s: %w", path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !sameFile(fi, dst) {
		return 0, fmt.Errorf("carry over late append to %s: replaced by another process", path)
	}
	_, _ = tryLockFile(f) // let go when f is closed
	var n int64
	for range 100 {
		sfi, err := src.Stat()
		if err != nil || sfi.Size() <= from+n {
			break
		}
		m, err := io.CopyBuffer(faultWriter{w: f, path: path}, io.NewSectionReader(src, from+n, sfi.Size()-from-n), make([]byte, copyBufSize))
		n += m
		if err != nil {
			return n, fmt.Errorf("carry over late append to %s: %w", path, err)
		}
	}
	if err := Fault(FaultSync, path); err != nil {
		return n, err
	}
	return n, f.Sync()
}

// RestoreFile undoes ch at path. Unless force is set it first checks what path holds:
//
//   - the "after" content of ch (its checksum, AfterSum: XXH3-128, or SHA-256 for runs before
//     manifest version 3): the backup is put back byte for byte, with the
//     original mode and mtime;
//   - the "after" content followed by more bytes (the agent went on with the session), and ch
//     records its Sites: the edits are reversed in place (each recorded new token replaced by
//     the old one, checked byte for byte) and everything after the first After.Size bytes is
//     kept, through RewriteFile with a backup of the current file beside ch.Backup;
//   - anything else: a *store.ChangedError naming the mismatch.
//
// It returns an *store.InUseError when another process holds the file open for writing or locked.
// A full restore needs the backup's first Before.Size bytes to have the checksum ch records for
// the original (BeforeSum: XXH3-128 since manifest version 4, SHA-256 before); a Change
// without one CheckChangeSum accepts is refused (an error wrapping ErrBadChangeSum) before
// anything is read.
func RestoreFile(ctx context.Context, path string, ch *store.Change, force bool) error {
	ctx = WithBeforeCheck(ctx, nil) // the before-check seam is for applying a change, not undo
	if err := CheckChangeSum(ch.Before); err != nil {
		return fmt.Errorf("restore %s: the run's record of the original: %w; not restored", path, err)
	}
	wantBefore, wantAfter := BeforeSum(ch.Before), AfterSum(ch.After)
	cs, err := hashFileAs(path, wantBefore, wantAfter)
	var cur string
	if err == nil {
		cur = cs[0]
	}
	forced := false // force restores a file that changed since the run
	switch {
	case errors.Is(err, os.ErrNotExist):
		if !force {
			return &store.ChangedError{Path: path, Reason: "it no longer exists"}
		}
	case err != nil:
		return fmt.Errorf("read %s: %w", path, err)
	case cur == wantBefore || (wantAfter != "" && cs[1] == wantAfter):
		// Already the original content (only mode and mtime may need restoring), or exactly
		// what the run wrote: the backup goes back.
	default:
		if ok, err := appendedAfterRun(path, ch); err != nil {
			return err
		} else if ok {
			return reverseEdits(ctx, path, ch)
		}
		if !force {
			return &store.ChangedError{Path: path, Reason: "its content checksum is not the one the run wrote"}
		}
		forced = true
	}
	// Only the first Before.Size bytes of the backup are the original: a process that kept the
	// old file open may have appended to the linked inode after the run (those bytes stay in
	// the backup).
	if got, err := hashPrefixAs(ch.Backup, ch.Before.Size, wantBefore); err != nil {
		return fmt.Errorf("backup %s is damaged or unreadable: %w", ch.Backup, err)
	} else if got != wantBefore {
		return fmt.Errorf("backup %s is damaged: %s of its first %d bytes is %s, want %s", ch.Backup, sumName(wantBefore), ch.Before.Size, got, wantBefore)
	}
	if st, err := StatFile(path); err == nil {
		// Through rewriteFile: the same checks (writers, locks, content unchanged since it was
		// hashed), a backup of the current file, and the old inode watched after the rename.
		if _, p := sumFor(wantBefore); p == "" {
			st.SHA256 = cur
		} else {
			st.Fingerprint = cur
		}
		kept := undoBackupPath(ch)
		_, err := rewriteFile(ctx, path, st, copyBackup(ch), store.ApplyOptions{BackupPath: kept}, &ch.Before)
		var ce *CommittedError
		if forced && (err == nil || errors.As(err, &ce)) {
			keptAt(ctx, kept)
		}
		return err
	}
	src, err := openNoFollow(ch.Backup) // a backup swapped for a symlink after undo checked the run is refused
	if err != nil {
		return fmt.Errorf("open backup %s: %w", ch.Backup, err)
	}
	defer src.Close()
	if testHookRestoreGone != nil {
		testHookRestoreGone(path)
	}
	pin, err := pinGoneStoreDir(path)
	if err != nil {
		return fmt.Errorf("open directory of %s: %w", path, err)
	}
	defer pin.close()
	pf, err := newPendingFile(ctx, path, pin)
	if err != nil {
		return err
	}
	defer pf.Cleanup()
	if err := copyCheckedBackup(pf, &ctxReader{ctx: ctx, r: src}, ch); err != nil {
		return fmt.Errorf("restore %s: %w", path, err)
	}
	var ownerErr error
	recorded := ch.Before.Owner // the owner a rewrite could not keep, else the one it read
	if recorded == nil {
		recorded = ch.OriginalOwner
	}
	if ch.Before.Owner != nil && !owner.AsRoot() {
		ownerErr = giveOwner(pf.File, path, ch.Before.Owner, true)
	} else if fi, err := pin.lstat(path); err == nil && fi.Mode().IsRegular() {
		chownLike(pf.File, fi)
	} else if bfi, err := src.Stat(); err == nil && ch.BackupLink && owner.AsRoot() {
		// Nothing at path to take the owner from: a backup that is a hard link is the original
		// inode, whose owner the store gets back (root's restore made it root's, mode 0600 and
		// all: its agent could no longer read it).
		chownLike(pf.File, bfi)
	} else if recorded != nil && owner.AsRoot() {
		// A copied backup is root's: the owner is the one the run recorded, given only as
		// giveRecordedOwner allows.
		ownerErr = giveRecordedOwner(pf.File, path, pin, *recorded)
	}
	if err := pf.Chmod(modeBits(ch.Before.Mode)); err != nil {
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	// The attributes of the original: the store is gone, the backup has them (a hard link is
	// the original inode; a copy was given none, and then there are none to give).
	copyXattrs(src, pf.File)
	if err := setFileTimes(pf.File, time.Now(), ch.Before.ModTime); err != nil {
		return fmt.Errorf("set mtime of %s: %w", path, err)
	}
	if err := pf.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := pf.replace(); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if err := syncDirAt(filepath.Dir(path), pin); err != nil {
		return &CommittedError{Err: err} // restored: undo records it
	}
	if ownerErr != nil {
		return &CommittedError{Err: ownerErr}
	}
	return nil
}

// testHookRestoreGone runs when RestoreFile found the store gone, before it opens its directory
// (tests only).
var testHookRestoreGone func(path string)

// appendedAfterRun reports whether path holds the run's "after" content followed by more
// bytes, and ch records the sites needed to reverse the edits in place.
func appendedAfterRun(path string, ch *store.Change) (bool, error) {
	want := AfterSum(ch.After)
	if !ch.HasSites() || want == "" {
		return false, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false, fmt.Errorf("stat %s: %w", path, err)
	}
	if fi.Size() <= ch.After.Size {
		return false, nil
	}
	got, err := hashPrefixAs(path, ch.After.Size, want)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return got == want, nil
}

// reverseEdits writes the old tokens of ch.Sites back into path, keeping every byte after the
// first After.Size bytes (see RestoreFile). The current file is kept beside ch.Backup
// ("<backup>.before-undo", numbered when taken).
func reverseEdits(ctx context.Context, path string, ch *store.Change) error {
	st, err := StatFile(path)
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	sites, closeSites, err := recordedSites(ch)
	if err != nil {
		return err
	}
	defer closeSites()
	_, err = RewriteFile(ctx, path, st, reverseSplice(sites, ch.After.Size, AfterSum(ch.After)), store.ApplyOptions{BackupPath: undoBackupPath(ch)})
	var ce *CommittedError
	if errors.As(err, &ce) {
		// In place, with what the agent appended meanwhile carried over: reversed.
		return ce
	}
	return err
}

// undoBackupPath is where undo keeps the file it replaces: "<backup>.before-undo", numbered
// when taken.
func undoBackupPath(ch *store.Change) string {
	bk := ch.Backup + ".before-undo"
	for i := 2; ; i++ {
		if _, err := os.Lstat(bk); errors.Is(err, os.ErrNotExist) {
			return bk
		}
		bk = fmt.Sprintf("%s.before-undo-%d", ch.Backup, i)
	}
}

// copyBackup is the Transform of a full restore: the first Before.Size bytes of the backup,
// whatever the current file holds.
func copyBackup(ch *store.Change) Transform {
	return func(dst io.Writer, src io.Reader) error {
		// The current content is read (hashed and checked), not kept.
		if _, err := io.CopyBuffer(io.Discard, src, make([]byte, copyBufSize)); err != nil {
			return err
		}
		f, err := openNoFollow(ch.Backup)
		if err != nil {
			return fmt.Errorf("open backup %s: %w", ch.Backup, err)
		}
		defer f.Close()
		return copyCheckedBackup(dst, f, ch)
	}
}

// copyCheckedBackup copies the first ch.Before.Size bytes of the backup src to dst, checking
// as it goes that there are that many and that they have the original's checksum (BeforeSum):
// RestoreFile checked the backup before, but it may have been truncated or rewritten since,
// and only what is copied counts. On an error the caller does not put dst in place.
func copyCheckedBackup(dst io.Writer, src io.Reader, ch *store.Change) error {
	want := BeforeSum(ch.Before)
	h, prefix := sumFor(want)
	n, err := io.CopyBuffer(io.MultiWriter(dst, h), io.LimitReader(src, ch.Before.Size), make([]byte, copyBufSize))
	if err != nil {
		return fmt.Errorf("restore from %s: %w", ch.Backup, err)
	}
	if n != ch.Before.Size || want == "" || formatSum(h, prefix) != want {
		return fmt.Errorf("backup %s changed after undo checked it (%d of its first %d bytes read, or they no longer have the original's %s): not restored", ch.Backup, n, ch.Before.Size, sumName(want))
	}
	return nil
}

// recordedSites returns the byte edits ch records, in whichever form (store.Change.Sites,
// SiteData, SiteFile), one at a time: a site file is read as the copy goes, its size and
// SHA-256 checked at its end (an error then: the reversed copy is not put in place). done
// closes what it opened.
func recordedSites(ch *store.Change) (sites iter.Seq2[store.ByteEdit, error], done func(), err error) {
	switch {
	case ch.SiteFile != nil:
		sf := ch.SiteFile
		f, err := openNoFollow(sf.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("open the recorded sites %s: %w", sf.Path, err)
		}
		h := sha256.New()
		cr := &countWriter{w: h}
		dec := store.NewSiteDecoder(io.TeeReader(io.LimitReader(f, sf.Size+1), cr))
		return func(yield func(store.ByteEdit, error) bool) {
			var n int64
			for {
				e, err := dec.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					yield(e, fmt.Errorf("%s: %w", sf.Path, err))
					return
				}
				n++
				if !yield(e, nil) {
					return
				}
			}
			if cr.n != sf.Size || n != sf.Count || hex.EncodeToString(h.Sum(nil)) != sf.SHA256 {
				yield(store.ByteEdit{}, fmt.Errorf("the recorded sites %s are not the ones the run wrote (%d bytes, %d sites; want %d, %d and their sha256): not restored", sf.Path, cr.n, n, sf.Size, sf.Count))
			}
		}, func() { f.Close() }, nil
	case len(ch.SiteData) > 0:
		dec := store.NewSiteDecoder(bytes.NewReader(ch.SiteData))
		return func(yield func(store.ByteEdit, error) bool) {
			for {
				e, err := dec.Next()
				if err == io.EOF {
					return
				}
				if !yield(e, err) || err != nil {
					return
				}
			}
		}, func() {}, nil
	}
	return func(yield func(store.ByteEdit, error) bool) {
		for _, e := range ch.Sites {
			if !yield(e, nil) {
				return
			}
		}
	}, func() {}, nil
}

// reverseSplice returns a Transform undoing edits (read one at a time, sorted by At, offsets of
// the source): at each offset it checks the source holds New and writes Old instead; the rest
// is copied. The first prefix bytes of the source must have the checksum prefixSum (a hex
// SHA-256, or "xxh3-128:…" / "crc32c:…": see sumFor), else it returns an *store.InUseError (the
// file changed).
func reverseSplice(edits iter.Seq2[store.ByteEdit, error], prefix int64, prefixSum string) Transform {
	return func(dst io.Writer, src io.Reader) error {
		h, hp := sumFor(prefixSum)
		pr := io.TeeReader(io.LimitReader(src, prefix), h)
		br := bufio.NewReaderSize(pr, copyBufSize)
		var pos int64
		var got []byte
		for e, err := range edits {
			if err != nil {
				return err
			}
			if e.At < pos || e.At+int64(len(e.New)) > prefix {
				return fmt.Errorf("recorded site at offset %d is out of order or past the run's %d bytes", e.At, prefix)
			}
			if _, err := io.CopyN(dst, br, e.At-pos); err != nil {
				return fmt.Errorf("copy up to offset %d: %w", e.At, err)
			}
			if cap(got) < len(e.New) {
				got = make([]byte, len(e.New))
			}
			got = got[:len(e.New)]
			if _, err := io.ReadFull(br, got); err != nil || string(got) != e.New {
				return &store.InUseError{Reason: fmt.Sprintf("offset %d does not hold the name the run wrote (changed since the run)", e.At)}
			}
			if _, err := io.WriteString(dst, e.Old); err != nil {
				return err
			}
			pos = e.At + int64(len(e.New))
		}
		if _, err := io.CopyBuffer(dst, br, make([]byte, copyBufSize)); err != nil {
			return err
		}
		if formatSum(h, hp) != prefixSum {
			return &store.InUseError{Reason: "its first bytes are no longer what the run wrote"}
		}
		_, err := io.CopyBuffer(dst, src, make([]byte, copyBufSize))
		return err
	}
}

// hashPrefixAs returns the checksum of the first n bytes of a file, spelled like want (sumFor),
// and an error when the file is shorter.
func hashPrefixAs(path string, n int64, want string) (string, error) {
	f, _, err := OpenStore(path, store.FileID{})
	if err != nil {
		return "", err
	}
	defer f.Close()
	h, prefix := sumFor(want)
	if _, err := io.CopyBuffer(h, io.LimitReader(f, n), make([]byte, copyBufSize)); err != nil {
		return "", err
	}
	if fi, err := f.Stat(); err == nil && fi.Size() < n {
		return "", fmt.Errorf("backup is %d bytes, want at least %d", fi.Size(), n)
	}
	return formatSum(h, prefix), nil
}

// modeBits are the permission bits a replaced file keeps: rwx plus setuid, setgid and sticky.
func modeBits(m os.FileMode) os.FileMode {
	return m & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)
}

// SyncDir fsyncs a directory so a file created or renamed in it is durable.
func SyncDir(dir string) error { return syncDirAt(dir, nil) }

// syncDirAt is SyncDir of dir opened through pin (which holds dir open; nil: by name).
func syncDirAt(dir string, pin *dirPin) error {
	if err := Fault(FaultOpenDir, dir); err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	d, err := pin.openFile(dir, os.O_RDONLY|oDirectory, 0)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := Fault(FaultSyncDir, dir); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ctxReader stops a long copy when the context is cancelled, and lets waiting goroutines run
// every YieldEvery bytes (Yield).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
	y   yielder
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.y.read(n)
	return n, err
}

// LinkCount returns the number of hard links of fi (1 where the platform does not say).
func LinkCount(fi os.FileInfo) uint64 { return nlink(fi) }
