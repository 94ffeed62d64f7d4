package store

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/renameio/v2"
)

// Transform writes the new content of a file to dst while reading the original from src.
type Transform func(dst io.Writer, src io.Reader) error

// testHookBeforeRename runs between the last in-use check and the rename (tests only).
var testHookBeforeRename func(path string)

// copyBufSize is the buffer of every streaming copy: memory stays flat whatever the file size.
const copyBufSize = 256 << 10

// castagnoli is the CRC-32C table (hardware-accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// NewFingerprint returns the hash behind FileState.Fingerprint and a function formatting its
// sum ("crc32c:<8 hex digits>").
func NewFingerprint() (hash.Hash32, func(hash.Hash32) string) {
	return crc32.New(castagnoli), func(h hash.Hash32) string { return fmt.Sprintf("crc32c:%08x", h.Sum32()) }
}

// StatFile returns the FileState of path without hashing it.
func StatFile(path string) (FileState, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return FileState{}, err
	}
	return FileState{Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime()}, nil
}

// HashFile returns the hex SHA-256 of a file's content.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
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
// file is still what was scanned (want: size, mtime and SHA-256):
//
//  1. open the original and check size and mtime against want;
//  2. refuse when another process holds a lock on it (flock);
//  3. in one streaming pass, copy the original into opt.BackupPath, hash it, and write the
//     transformed content to a temp sibling (".<name><random>", same directory);
//  4. refuse when the hash differs from want (the content changed since the scan);
//  5. fsync backup and temp, give the temp the original's mode and mtime (owner best-effort);
//  6. call opt.BeforeCommit (the caller journals the change);
//  7. check again that the original was not appended to or replaced, rename the temp over it
//     and fsync the directory.
//
// A crash at any instant leaves the old file or the new one at path. An in-use refusal returns
// an *InUseError and leaves the file, and no temp, behind.
func RewriteFile(ctx context.Context, path string, want FileState, transform Transform, opt ApplyOptions) (ch *Change, err error) {
	orig, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer orig.Close()
	fi, err := orig.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("rewrite %s: %w: not a regular file", path, ErrNotWritable)
	}
	if fi.Size() != want.Size || !fi.ModTime().Equal(want.ModTime) {
		return nil, &InUseError{Path: path, Reason: fmt.Sprintf("changed since it was scanned (size %d→%d, mtime %s→%s)",
			want.Size, fi.Size(), want.ModTime.Format(time.RFC3339Nano), fi.ModTime().Format(time.RFC3339Nano))}
	}
	if w := openWriters(fi); len(w) > 0 {
		return nil, heldOpen(path, w)
	}
	// An exclusive advisory lock while rewriting: another sessionfix run (or any process
	// that locks the file) is kept out, and a lock another process holds refuses the file.
	lock := flock.New(path)
	locked, lerr := lock.TryLock()
	if lerr == nil && !locked {
		return nil, &InUseError{Path: path, Reason: "locked by another process (another sessionfix run, or an agent)"}
	}
	if locked {
		defer lock.Unlock()
	}

	// The backup is created exclusively: a run never overwrites an earlier backup. It is a
	// hard link to the original inode when the run directory is on the same file system (the
	// rename below leaves that inode untouched, so nothing needs copying), else a copy made in
	// the same pass that reads the original.
	if err := os.MkdirAll(filepath.Dir(opt.BackupPath), 0o700); err != nil {
		return nil, fmt.Errorf("create backup directory: %w", err)
	}
	// A file with other hard links (a cp -al or rsnapshot snapshot, say) keeps its inode alive
	// under those names: they could change it later, so its backup must be a copy (and the
	// other names keep the old content, as a rename-based replace must).
	linked := false
	otherLinks := nlink(fi) > 1
	if !otherLinks {
		if err := os.Link(path, opt.BackupPath); err == nil {
			if bfi, err := os.Stat(opt.BackupPath); err == nil && os.SameFile(bfi, fi) {
				linked = true
			} else {
				os.Remove(opt.BackupPath)
				return nil, &InUseError{Path: path, Reason: "replaced by another process while rewriting"}
			}
		} else if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("create backup of %s: %w", path, err)
		}
	}
	var bk *os.File
	if !linked {
		if bk, err = os.OpenFile(opt.BackupPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
			return nil, fmt.Errorf("create backup of %s: %w", path, err)
		}
	}
	keepBackup := false
	defer func() {
		if bk != nil {
			bk.Close()
		}
		if !keepBackup {
			os.Remove(opt.BackupPath)
		}
	}()

	pf, err := renameio.TempFile(filepath.Dir(path), path)
	if err != nil {
		return nil, fmt.Errorf("create temp file next to %s: %w", path, err)
	}
	defer pf.Cleanup() // removes the temp unless it was renamed

	// The reference for the final in-use check: stat again after the link (which touched the
	// inode's ctime).
	ref, err := orig.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	before, after := sha256.New(), sha256.New()
	fp, fpText := NewFingerprint()
	var src io.Reader = io.TeeReader(&ctxReader{ctx: ctx, r: orig}, io.MultiWriter(before, fp))
	var bw *bufio.Writer
	if bk != nil {
		bw = bufio.NewWriterSize(bk, copyBufSize)
		src = io.TeeReader(src, bw)
	}
	out := &countWriter{w: io.MultiWriter(pf, after)}
	ow := bufio.NewWriterSize(out, copyBufSize)
	if err := transform(ow, src); err != nil {
		return nil, fmt.Errorf("rewrite %s: %w", path, err)
	}
	// Drain what the transform did not read (it must see the whole file).
	if _, err := io.CopyBuffer(ow, src, make([]byte, copyBufSize)); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := ow.Flush(); err != nil {
		return nil, fmt.Errorf("write temp for %s: %w", path, err)
	}
	if bw != nil {
		if err := bw.Flush(); err != nil {
			return nil, fmt.Errorf("write backup of %s: %w", path, err)
		}
	}
	beforeSum := hex.EncodeToString(before.Sum(nil))
	if (want.SHA256 != "" && beforeSum != want.SHA256) || (want.Fingerprint != "" && fpText(fp) != want.Fingerprint) {
		return nil, &InUseError{Path: path, Reason: "content changed since it was scanned"}
	}
	if bk != nil {
		if err := bk.Sync(); err != nil {
			return nil, fmt.Errorf("sync backup of %s: %w", path, err)
		}
	}
	if err := SyncDir(filepath.Dir(opt.BackupPath)); err != nil {
		return nil, err
	}
	chownLike(pf.File, fi) // before chmod: chown clears setuid/setgid
	if err := pf.Chmod(modeBits(fi.Mode())); err != nil {
		return nil, fmt.Errorf("chmod temp for %s: %w", path, err)
	}
	xattrWarnings := copyXattrs(path, pf.File)
	if err := pf.Sync(); err != nil {
		return nil, fmt.Errorf("sync temp for %s: %w", path, err)
	}
	if err := os.Chtimes(pf.Name(), atime(fi), fi.ModTime()); err != nil {
		return nil, fmt.Errorf("set mtime of temp for %s: %w", path, err)
	}

	if otherLinks {
		xattrWarnings = append(xattrWarnings, fmt.Sprintf("the file had %d hard links: only this name was rewritten, the other names keep the old content", nlink(fi)))
	}
	ch = &Change{
		Warnings:   xattrWarnings,
		Backup:     opt.BackupPath,
		BackupLink: linked,
		Before:     FileState{Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime(), SHA256: beforeSum},
		After:      FileState{Size: out.n, Mode: fi.Mode(), ModTime: fi.ModTime(), SHA256: hex.EncodeToString(after.Sum(nil))},
	}
	if opt.BeforeCommit != nil {
		if err := opt.BeforeCommit(ch); err != nil {
			return nil, fmt.Errorf("journal change of %s: %w", path, err)
		}
	}
	keepBackup = true
	if opt.BeforeCheck != nil {
		opt.BeforeCheck()
	}
	if err := unchanged(path, orig, ref); err != nil {
		keepBackup = false
		return nil, err
	}
	if testHookBeforeRename != nil {
		testHookBeforeRename(path)
	}
	if err := pf.CloseAtomicallyReplace(); err != nil {
		keepBackup = false
		return nil, fmt.Errorf("replace %s: %w", path, err)
	}
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return ch, err
	}
	// An append that raced the rename went to the old inode: carry those bytes over so nothing
	// is lost, and say so.
	if grown, err := carryOver(orig, fi.Size(), path, after, ch); err != nil {
		return ch, err
	} else if grown > 0 {
		ch.Warnings = append(ch.Warnings, fmt.Sprintf("%d bytes appended while replacing were carried over", grown))
	}
	return ch, nil
}

// unchanged checks that path is still the inode we read and that it did not grow or change.
func unchanged(path string, orig *os.File, fi os.FileInfo) error {
	now, err := os.Stat(path)
	if err != nil {
		return &InUseError{Path: path, Reason: "disappeared while rewriting: " + err.Error()}
	}
	if !os.SameFile(now, fi) {
		return &InUseError{Path: path, Reason: "replaced by another process while rewriting"}
	}
	if now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
		return &InUseError{Path: path, Reason: fmt.Sprintf("appended to while rewriting (size %d→%d)", fi.Size(), now.Size())}
	}
	if a, ok := ctime(now); ok {
		if b, ok := ctime(fi); ok && !a.Equal(b) {
			return &InUseError{Path: path, Reason: "changed while rewriting (its inode change time moved)"}
		}
	}
	if ofi, err := orig.Stat(); err == nil && ofi.Size() != fi.Size() {
		return &InUseError{Path: path, Reason: "appended to while rewriting"}
	}
	if w := openWriters(now); len(w) > 0 {
		return heldOpen(path, w)
	}
	return nil
}

// heldOpen is the refusal of a file another process keeps open for writing: replacing it would
// send that process's next writes to the old, unlinked file.
func heldOpen(path string, writers []string) error {
	return &InUseError{Path: path, Reason: "held open for writing by " + strings.Join(writers, ", ") + "; stop the agent first"}
}

// carryOver appends to path whatever was written to the old inode after size.
func carryOver(orig *os.File, size int64, path string, after hash.Hash, ch *Change) (int64, error) {
	ofi, err := orig.Stat()
	if err != nil || ofi.Size() <= size {
		return 0, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return 0, fmt.Errorf("carry over late append to %s: %w", path, err)
	}
	defer f.Close()
	n, err := io.CopyBuffer(io.MultiWriter(f, after), io.NewSectionReader(orig, size, ofi.Size()-size), make([]byte, copyBufSize))
	if err != nil {
		return n, fmt.Errorf("carry over late append to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return n, err
	}
	nfi, _ := f.Stat()
	ch.After.Size += n
	ch.After.SHA256 = hex.EncodeToString(after.Sum(nil))
	if nfi != nil {
		ch.After.ModTime = nfi.ModTime()
	}
	return n, nil
}

// RestoreFile puts a backup back at path, byte for byte, with the original mode and mtime.
// Unless force is set it first checks that path still holds the "after" content of ch and
// returns a *ChangedError naming the mismatch otherwise (an *InUseError when another process
// holds it open for writing or locked). The backup itself must still hash to
// ch.Before.SHA256.
func RestoreFile(ctx context.Context, path string, ch *Change, force bool) error {
	// Only the first Before.Size bytes of the backup are the original: a process that kept the
	// old file open may have appended to the linked inode after the run (those bytes stay in
	// the backup).
	if got, err := hashPrefix(ch.Backup, ch.Before.Size); err != nil {
		return fmt.Errorf("backup %s is damaged or unreadable: %w", ch.Backup, err)
	} else if got != ch.Before.SHA256 {
		return fmt.Errorf("backup %s is damaged: sha256 of its first %d bytes is %s, want %s", ch.Backup, ch.Before.Size, got, ch.Before.SHA256)
	}
	cur, err := HashFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if !force {
			return &ChangedError{Path: path, Reason: "it no longer exists"}
		}
	case err != nil:
		return fmt.Errorf("read %s: %w", path, err)
	case cur == ch.Before.SHA256:
		// Already the original content: only mode and mtime may need restoring.
	case cur != ch.After.SHA256 && !force:
		return &ChangedError{Path: path, Reason: "its sha256 is not the one the run wrote"}
	}
	if fi, err := os.Stat(path); err == nil {
		if w := openWriters(fi); len(w) > 0 {
			return heldOpen(path, w)
		}
		lock := flock.New(path)
		if ok, err := lock.TryRLock(); err == nil && !ok {
			return &InUseError{Path: path, Reason: "locked by another process"}
		} else if ok {
			defer lock.Unlock()
		}
	}
	src, err := os.Open(ch.Backup)
	if err != nil {
		return fmt.Errorf("open backup %s: %w", ch.Backup, err)
	}
	defer src.Close()
	pf, err := renameio.TempFile(filepath.Dir(path), path)
	if err != nil {
		return fmt.Errorf("create temp file next to %s: %w", path, err)
	}
	defer pf.Cleanup()
	if _, err := io.CopyBuffer(pf, &ctxReader{ctx: ctx, r: io.LimitReader(src, ch.Before.Size)}, make([]byte, copyBufSize)); err != nil {
		return fmt.Errorf("restore %s: %w", path, err)
	}
	if fi, err := os.Stat(path); err == nil {
		chownLike(pf.File, fi)
	}
	if err := pf.Chmod(modeBits(ch.Before.Mode)); err != nil {
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	// The attributes of the original: the current file carries them (the fix copied them),
	// else the backup (a hard link is the original inode).
	xsrc := path
	if _, err := os.Stat(path); err != nil {
		xsrc = ch.Backup
	}
	copyXattrs(xsrc, pf.File)
	if err := pf.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := os.Chtimes(pf.Name(), time.Now(), ch.Before.ModTime); err != nil {
		return fmt.Errorf("set mtime of %s: %w", path, err)
	}
	if err := pf.CloseAtomicallyReplace(); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// hashPrefix returns the hex SHA-256 of the first n bytes of a file (an error when it is
// shorter).
func hashPrefix(path string, n int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, io.LimitReader(f, n), make([]byte, copyBufSize)); err != nil {
		return "", err
	}
	if fi, err := f.Stat(); err == nil && fi.Size() < n {
		return "", fmt.Errorf("backup is %d bytes, want at least %d", fi.Size(), n)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// modeBits are the permission bits a replaced file keeps: rwx plus setuid, setgid and sticky.
func modeBits(m os.FileMode) os.FileMode {
	return m & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)
}

// SyncDir fsyncs a directory so a file created or renamed in it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer d.Close()
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

// ctxReader stops a long copy when the context is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
