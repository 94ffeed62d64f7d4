package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

// journalMagic starts every rollback-journal header: d9 d5 05 f9 20 a1 63 d7
// (https://sqlite.org/fileformat2.html, "The Rollback Journal"). SQLite writes it only once the
// journal is synced; a journal starting with zeros (not yet synced, or zeroed in PERSIST mode)
// is not hot.
var journalMagic = []byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}

// ErrHotJournal means a writer crashed in the middle of a transaction on a rollback-journal
// database and left its journal: until a read-write connection rolls it back, read-only
// connections cannot read the database.
var ErrHotJournal = errors.New("a crashed writer left a hot journal")

// HotJournalError names the database and its journal.
type HotJournalError struct {
	Path    string
	Journal string
}

func (e *HotJournalError) Error() string {
	return fmt.Sprintf("%s: %v (%s): a read-only scan cannot roll it back; `sessionfix fix --apply` or `undo` rolls it back first (so does opening it with the agent)", e.Path, ErrHotJournal, e.Journal)
}

// Unwrap returns ErrHotJournal.
func (e *HotJournalError) Unwrap() error { return ErrHotJournal }

// HotJournal reports whether path has a journal that looks hot: <path>-journal exists, is not
// empty and starts with the journal header magic. Whether it really is hot (no live writer holds
// the RESERVED lock) only SQLite can tell under its locks; rollBackHotJournal lets it.
func HotJournal(path string) (string, bool) {
	j := path + "-journal"
	// Not a link, FIFO or a name of another file (other hard links): SQLite would not take
	// it as the journal either (its open guard, openguard_unix.go).
	f, fi, err := fileio.OpenRegular(j)
	if err != nil {
		return j, false
	}
	if fileio.LinkCount(fi) > 1 {
		f.Close()
		return j, false
	}
	defer f.Close()
	head := make([]byte, len(journalMagic))
	if _, err := io.ReadFull(f, head); err != nil {
		return j, false
	}
	return j, bytes.Equal(head, journalMagic)
}

// lockWaitHook, when set (tests only), runs when rollBackHotJournal's first read found the
// database locked by another connection, before the read that waits for it.
var lockWaitHook func()

// rollBackHotJournal rolls back the hot journal of the database at path (the file pin names;
// zero: not known, openDB), if it has one, with a read-write connection: SQLite takes the
// database's locks (waiting up to busy for a live writer), replays the journal's original pages
// and deletes it — the database is then exactly as it was before the crashed transaction. It
// reports whether a journal was rolled back; when one is still there afterwards (a live writer
// holds its lock) it returns an error. When another connection held the lock at first, the
// journal was that live writer's: a journal gone after the wait was deleted by its writer and is
// not reported as rolled back.
func rollBackHotJournal(ctx context.Context, path string, busy time.Duration, pin store.FileID) (bool, error) {
	j, hot := HotJournal(path)
	if !hot {
		return false, nil
	}
	// The first read under a SHARED lock finds the journal hot and rolls it back (it needs the
	// EXCLUSIVE lock). It is tried once without waiting: a connection that had to wait for
	// another's lock may find the journal gone because that live writer committed (or rolled
	// back) meanwhile, and then nothing was rolled back here — claiming so would report a crash
	// that never happened ("rolled back the hot journal a crashed writer left" after a live
	// agent's commit).
	err := readUnderLock(ctx, path, 0, pin)
	waited := isBusy(err)
	if waited {
		if lockWaitHook != nil {
			lockWaitHook()
		}
		err = readUnderLock(ctx, path, busy, pin)
	}
	if isBusy(err) {
		// A live writer that spilled its cache has a journal with the magic too, and holds
		// the lock: in use, not crashed (review3).
		return false, inUse(path, busy)
	} else if err != nil {
		return false, err
	}
	_, still := HotJournal(path)
	switch {
	case still:
		// The read succeeded, so SQLite found no hot journal: a rollback that could not
		// delete the journal fails the read (SQLITE_IOERR_DELETE). A journal with the magic
		// there now is a live writer's, begun (or still held) while we looked: in use
		// (torture writer-inserts-during-sqlite-fix, rollback-journal trials).
		return false, &store.InUseError{Path: path, Reason: fmt.Sprintf("another connection is writing it (%s is a live writer's journal: SQLite read on without rolling it back)", j)}
	case waited:
		// Another connection held the lock when the journal was seen: the journal was that
		// live writer's, and it deleted it when it committed or rolled back while we waited.
		return false, nil
	}
	return true, nil
}

// readUnderLock opens the database at path read-write (waiting up to busy for another
// connection's lock) and reads its schema's row count: the read that rolls a hot journal back.
// A busy error is returned as it is (isBusy), others name the database.
func readUnderLock(ctx context.Context, path string, busy time.Duration, pin store.FileID) error {
	db, err := openDB(path, modeRW, busy, pin)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err == nil {
		defer conn.Close()
		var n int
		err = conn.GetContext(ctx, &n, "SELECT count(*) FROM sqlite_schema")
	}
	if err != nil && !isBusy(err) {
		return fmt.Errorf("roll back the hot journal of %s: %w", path, err)
	}
	return err
}

// hotJournalErr turns err from a read-only open of path into a *HotJournalError when the
// database has a hot journal (the read-only connection could not roll it back). A busy error
// is returned as it is: a journal with the magic whose writer still holds the lock is a live
// transaction that spilled its cache, not a crashed one (Scan reports it in use).
func hotJournalErr(path string, err error) error {
	if err == nil || isBusy(err) {
		return err
	}
	if j, hot := HotJournal(path); hot {
		return &HotJournalError{Path: path, Journal: j}
	}
	return err
}

// journalAppeared reports whether err is SQLITE_READONLY_ROLLBACK met in the middle of a scan:
// the read-only connection found a journal it judged hot between two of its reads (the open and
// the schema read found none, or fix --apply had rolled it back). The journal was written after
// the scan began, by a writer that left it hot for an instant or crashed: the store was written
// while it was read (torture writer-inserts-during-sqlite-fix, rollback-journal trials: "read
// table part: attempt to write a readonly database", exit 3 before).
func journalAppeared(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrReadonlyRollback
}
