package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/store"
)

// Options tunes a SQLite store.
type Options struct {
	// BusyTimeout is how long to wait for another connection's lock (the write lock when
	// rewriting or undoing; a writer's commit when reading a rollback-journal database).
	// Zero means DefaultBusyTimeout; a negative value means do not wait.
	BusyTimeout time.Duration
	// Profile, when set, is tried first (`--profile FILE`).
	Profile *Profile
	// Profiles are the known profiles tried after Profile, in order: the engine knows no
	// agent, agent/all passes every agent room's SQLite profiles (all.Options).
	Profiles []*Profile
	// Pin is the file discovery found at the store's path (its device and inode; zero: not
	// known): every connection opens that file or fails (openDB, store.Pinner).
	Pin store.FileID
	// RollBack lets Detect and Scan roll back a hot journal (rollBackHotJournal) before they
	// read: fix --apply and undo set it. Without it a database with a hot journal fails with a
	// *HotJournalError (a read-only connection cannot roll it back).
	RollBack bool
}

func (o Options) busy() time.Duration {
	switch {
	case o.BusyTimeout == 0:
		return DefaultBusyTimeout
	case o.BusyTimeout < 0:
		return 0
	}
	return o.BusyTimeout
}

// Store is one SQLite database read with a Profile.
type Store struct {
	path string
	opt  Options
	prof *Profile // nil: detected from the schema at Scan
	// rolledBack is the hot journal Detect rolled back (Scan reports it).
	rolledBack string
}

var (
	_ store.Store    = (*Store)(nil)
	_ store.Writer   = (*Store)(nil)
	_ store.Restorer = (*Store)(nil)
)

// Open returns the store at path. The profile is detected from the schema when the store is
// scanned (opt.Profile first, then opt.Profiles); Restore needs none. Open does not touch the
// file.
func Open(path string, opt Options) *Store { return &Store{path: path, opt: opt} }

// OpenWith returns the store at path read with prof.
func OpenWith(path string, prof *Profile, opt Options) *Store {
	return &Store{path: path, opt: opt, prof: prof}
}

// Ref identifies the store.
func (s *Store) Ref() store.Ref { return store.Ref{Path: s.path, Kind: store.KindSQLite} }

// Pin tells the store which file discovery found at its path (store.Pinner): every connection
// opens that file or none.
func (s *Store) Pin(id store.FileID) { s.opt.Pin = id }

// Profile returns the profile the store is read with (nil before a Scan detected it).
func (s *Store) Profile() *Profile { return s.prof }

var _ store.Profiled = (*Store)(nil)

// ProfileName is the name of the profile the store is read with ("" before a Scan detected
// it): store.Profiled.
func (s *Store) ProfileName() string {
	if s.prof == nil {
		return ""
	}
	return s.prof.Name
}

// IsDatabase reports whether head (the first bytes of a file) is a SQLite database header.
func IsDatabase(head []byte) bool { return bytes.HasPrefix(head, Header) }

// detectBusy caps how long Detect waits for a lock.
const detectBusy = 250 * time.Millisecond

// ErrNoProfile means no profile describes the database.
var ErrNoProfile = errors.New("no known SQLite store profile matches the database")

// NoProfileError says which tables the database has, so the user can write a profile.
type NoProfileError struct {
	Path   string
	Tables []string
}

func (e *NoProfileError) Error() string { return e.Path + ": " + e.Reason() }

// Reason is the message without the path.
func (e *NoProfileError) Reason() string {
	t := strings.Join(e.Tables, ", ")
	if len(t) > 200 {
		t = t[:200] + "…"
	}
	return fmt.Sprintf("%v (tables: %s); describe it with --profile FILE", ErrNoProfile, t)
}

// Unwrap returns ErrNoProfile.
func (e *NoProfileError) Unwrap() error { return ErrNoProfile }

// Detect opens the database at path read-only, reads its schema and returns the store with the
// matching profile (opt.Profile first, then opt.Profiles). It returns a *NoProfileError when no
// profile matches, and another error when the schema cannot be read.
func Detect(ctx context.Context, path string, opt Options) (*Store, error) {
	var rolled string
	if opt.RollBack {
		if ok, err := rollBackHotJournal(ctx, path, opt.busy(), opt.Pin); err != nil {
			return nil, err
		} else if ok {
			rolled = path + "-journal"
		}
	}
	// Discovery must not stall on a database another program keeps locked: a database still
	// locked after detectBusy is a store whose profile Scan detects, waiting the full busy
	// timeout (and refusing it as in use after that, exit 4; issue 9 finding 6).
	db, err := openDB(path, modeRO, min(opt.busy(), detectBusy), opt.Pin)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if isBusy(err) {
		return &Store{path: path, opt: opt, rolledBack: rolled}, nil
	} else if err != nil {
		return nil, hotJournalErr(path, fmt.Errorf("open %s: %w", path, err))
	}
	defer conn.Close()
	sch, err := readSchema(ctx, conn)
	if isBusy(err) {
		return &Store{path: path, opt: opt, rolledBack: rolled}, nil
	} else if err != nil {
		return nil, hotJournalErr(path, fmt.Errorf("%s: %w", path, err))
	}
	p := detectProfile(path, sch, append([]*Profile{opt.Profile}, opt.Profiles...)...)
	if p == nil {
		return nil, &NoProfileError{Path: path, Tables: sch.names}
	}
	return &Store{path: path, opt: opt, prof: p, rolledBack: rolled}, nil
}

// fileState returns the state of the database: size of the file plus its WAL, mode and mtime.
func fileState(path string) (store.FileState, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return store.FileState{}, err
	}
	st := store.FileState{Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime()}
	if w, err := os.Stat(path + "-wal"); err == nil {
		st.Size += w.Size()
	}
	return st, nil
}
