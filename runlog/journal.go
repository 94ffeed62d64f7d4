package runlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/gofrs/flock"

	"github.com/sessionfix/sessionfix/internal/fileio"
)

// journal is an append-only, fsynced JSONL file, locked (flock) while a run or an undo uses
// it: CleanLeftovers leaves the temp files of a locked journal alone.
//
// Lines are written under mu; the fsync that makes a line durable runs outside it (group
// commit): one fsync covers every line written before it started, so concurrent rewrites
// that each need their line durable share fsyncs, and none waits for another's fsync while
// writing. A failed fsync fails every later one (what it should have made durable is not
// known to be).
type journal struct {
	mu   sync.Mutex
	f    *os.File
	lock *flock.Flock
	end  int64 // bytes written (mu)

	smu    sync.Mutex // one fsync at a time
	synced int64      // bytes known durable (smu)
	serr   error      // the first fsync error (smu)

	pmu     sync.Mutex
	planned map[string]int64 // temp name → where its TempPlanned line ends, until TempLinking (pmu)
}

// ErrRunInUse means another sessionfix process holds the run's journal lock: a fix --apply
// still writing the run, or another undo of it.
var ErrRunInUse = errors.New("another sessionfix process is using this run")

// CheckRunFree returns ErrRunInUse (wrapped, naming the journal) when another process holds the
// lock of the run in dir; it takes the lock and lets it go at once (UndoRun takes it for the
// whole undo), so an undo can refuse before it asks anything.
func CheckRunFree(dir string) error {
	path := filepath.Join(dir, journalName)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil // no journal (yet): nobody holds it, and none is created here
	}
	lk := flock.New(path)
	ok, err := lk.TryLock()
	if err == nil && !ok {
		err = ErrRunInUse
	}
	if err != nil {
		return fmt.Errorf("lock journal %s: %w", path, err)
	}
	return lk.Unlock()
}

func openJournal(path string) (*journal, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	lk := flock.New(path)
	if ok, err := lk.TryLock(); err != nil || !ok {
		f.Close()
		if err == nil {
			err = ErrRunInUse
		}
		return nil, fmt.Errorf("lock journal %s: %w", path, err)
	}
	if err := cutTornTail(path); err != nil {
		f.Close()
		_ = lk.Unlock()
		return nil, fmt.Errorf("repair journal %s: %w", path, err)
	}
	return &journal{f: f, lock: lk}, nil
}

// cutTornTail removes a last line without its newline from the journal at path: the torn
// write of a killed run (a SIGKILL can cut a large write short), which readers skip as long as
// it stays last. Appending after it would make it a damaged line in the middle.
func cutTornTail(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	end := fi.Size()
	var buf [64 << 10]byte
	for pos := end; pos > 0; {
		n := int64(len(buf))
		if pos < n {
			n = pos
		}
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			if pos+int64(i)+1 == end {
				return nil // ends with a newline: nothing torn
			}
			return f.Truncate(pos + int64(i) + 1)
		}
	}
	return f.Truncate(0) // one torn line only
}

func (j *journal) append(e journalEntry) error {
	_, _, err := j.write(e, true)
	return err
}

// appendLazy appends e without waiting for it to be durable (the next fsync of the journal
// makes it so), returning where the line starts in the journal and its length. For lines a
// crash may lose: a "done" line (the "commit" line before it, fsynced before the replace,
// records the change for undo).
func (j *journal) appendLazy(e journalEntry) (off int64, n int, err error) { return j.write(e, false) }

// write appends e, and fsyncs the journal when sync is set; it returns the line's offset and
// length (with its newline).
func (j *journal) write(e journalEntry, sync bool) (int64, int, error) {
	buf := getLineBuf()
	b, err := encodeJournalLine(buf, e)
	if err != nil {
		putLineBuf(buf)
		return 0, 0, err
	}
	off, err := j.writeLine(b)
	n := len(b)
	putLineBuf(buf) // written: the bytes are the file's now
	if err != nil || !sync {
		return off, n, err
	}
	return off, n, j.syncTo(off + int64(n))
}

// lineBufs keeps the buffers journal lines were encoded into for the next lines (a free list
// of a few, which a garbage collection does not empty, unlike a sync.Pool): one per rewrite
// writing its line at once.
var lineBufs = make(chan *bytes.Buffer, 4)

func getLineBuf() *bytes.Buffer {
	select {
	case b := <-lineBufs:
		return b
	default:
		return new(bytes.Buffer)
	}
}

// putLineBuf gives b back (lineBufs); one grown past a large store's line (1 MiB) is dropped.
func putLineBuf(b *bytes.Buffer) {
	if b.Cap() > 1<<20 {
		return
	}
	select {
	case lineBufs <- b:
	default:
	}
}

// writeLine appends the line b and returns its offset.
func (j *journal) writeLine(b []byte) (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := fileio.Fault(fileio.FaultWrite, j.f.Name()); err != nil {
		return 0, fmt.Errorf("write journal: %w", err)
	}
	// A short write (a full disk) must not leave half a line that the next line would run
	// into: the journal is cut back to where the line began.
	fi, err := j.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("write journal: %w", err)
	}
	if n, err := j.f.Write(b); err != nil {
		if n > 0 {
			_ = j.f.Truncate(fi.Size())
		}
		return 0, fmt.Errorf("write journal: %w", err)
	}
	j.end = fi.Size() + int64(len(b))
	return fi.Size(), nil
}

// syncTo returns once the first end bytes of the journal are durable: at once when an fsync
// that started after they were written has completed, else after one more fsync.
func (j *journal) syncTo(end int64) error {
	j.smu.Lock()
	defer j.smu.Unlock()
	if j.serr != nil {
		return j.serr
	}
	if j.synced >= end {
		return nil
	}
	j.mu.Lock()
	upto := j.end // everything written so far: this fsync covers it
	j.mu.Unlock()
	if err := fileio.Fault(fileio.FaultSync, j.f.Name()); err != nil {
		j.serr = fmt.Errorf("sync journal: %w", err)
		return j.serr
	}
	if err := j.f.Sync(); err != nil {
		j.serr = fmt.Errorf("sync journal: %w", err)
		return j.serr
	}
	j.synced = upto
	return nil
}

// recordTemp is the fileio.TempRecorder of a run: each temp file event is a journal line. An
// announcement (and a foreign name) is fsynced before the file is created; a planned one
// (fileio.TempPlanned, journaled as an announcement) is made durable by the next fsync of the
// journal (the announcement that follows it, the change's "commit" line) or, at the latest, by
// its TempLinking, which writes nothing and returns once the planned line is durable; a "gone"
// line is not fsynced (lost in a crash, it only makes the next cleanup look for a file that is
// not there).
func (j *journal) recordTemp(event, tmp, target string) error {
	sync := true
	switch event {
	case fileio.TempGone:
		sync = false
	case fileio.TempPlanned:
		event, sync = fileio.TempCreating, false
	case fileio.TempLinking:
		j.pmu.Lock()
		end, ok := j.planned[tmp]
		delete(j.planned, tmp)
		j.pmu.Unlock()
		if !ok {
			j.mu.Lock()
			end = j.end // not planned here: everything written so far
			j.mu.Unlock()
		}
		return j.syncTo(end)
	}
	off, n, err := j.write(journalEntry{Event: event, Path: tmp, Store: target}, sync)
	j.pmu.Lock()
	defer j.pmu.Unlock()
	switch {
	case err == nil && !sync && event == fileio.TempCreating:
		if j.planned == nil {
			j.planned = map[string]int64{}
		}
		j.planned[tmp] = off + int64(n)
	case event == fileio.TempGone || event == fileio.TempForeign:
		delete(j.planned, tmp) // never linked: nothing waits for it
	}
	return err
}

func (j *journal) close() {
	j.f.Close()
	_ = j.lock.Unlock()
}
