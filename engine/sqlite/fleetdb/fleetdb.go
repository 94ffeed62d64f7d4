// Package fleetdb writes the fleet findings database of scan, check and audit --format sqlite
// --out FILE (issue 28 item 4; docs/fleet.md): one SQLite file that collects the findings of
// many hosts and users, readable by osquery's auto_table_construction, Fleet policies or
// the sqlite3 shell. It knows no agent and no report type: the command hands it rows.
//
// The file is marked as a sessionfix fleet database by its header's application_id
// (ApplicationID) and user_version (SchemaVersion); any other SQLite database, or a file that
// is not SQLite at all, is refused (a *NotFleetError or a *sqlite.NotSQLiteError), and nothing
// is written into it. A run replaces, in one transaction, every row of the (host, user,
// command) it covers — its own rows and its runs row — so a re-run never duplicates and a
// home whose findings are gone is emptied; rows of other hosts, users and commands stay.
package fleetdb

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/sessionfix/sessionfix/engine/sqlite"
)

// ApplicationID is the SQLite header's application_id of a sessionfix fleet database ("SFLT"
// in ASCII: 0x53464C54; https://sqlite.org/fileformat.html#application_id).
const ApplicationID = 0x53464C54

// SchemaVersion is the header's user_version of the schema this package writes. A database of a
// later version is refused (written by a newer sessionfix).
const SchemaVersion = 1

// FindingsTable and RunsTable are the two tables (docs/fleet.md lists their columns).
const (
	FindingsTable = "sessionfix_findings"
	RunsTable     = "sessionfix_runs"
)

// DefaultBusyTimeout is how long a write waits for another writer of the same file (another
// host's run writing a shared file) before it is refused as in use (a variable for tests).
var DefaultBusyTimeout = 30 * time.Second

// Schema is the SQL that creates the tables (docs/fleet.md): every column NOT NULL, "" where a
// command has nothing to say (a scan row has no rule text). run_time is RFC 3339 in UTC.
const Schema = `CREATE TABLE ` + FindingsTable + ` (
  host TEXT NOT NULL,
  user TEXT NOT NULL,
  command TEXT NOT NULL,
  home TEXT NOT NULL,
  agent TEXT NOT NULL,
  store TEXT NOT NULL,
  site TEXT NOT NULL,
  class TEXT NOT NULL,
  name TEXT NOT NULL,
  new_name TEXT NOT NULL,
  rule_kind TEXT NOT NULL,
  rule TEXT NOT NULL,
  level TEXT NOT NULL,
  rule_id TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  message TEXT NOT NULL,
  run_time TEXT NOT NULL,
  version TEXT NOT NULL
);
CREATE INDEX ` + FindingsTable + `_by_run ON ` + FindingsTable + ` (host, user, command);
CREATE TABLE ` + RunsTable + ` (
  host TEXT NOT NULL,
  user TEXT NOT NULL,
  command TEXT NOT NULL,
  run_time TEXT NOT NULL,
  version TEXT NOT NULL,
  findings INTEGER NOT NULL,
  complete INTEGER NOT NULL,
  PRIMARY KEY (host, user, command)
);`

// Run is what one run of a command says of itself: the host (--host, else the host name), the
// command (scan, check or audit), the users it covers (each home's owner, or --user): their
// rows of this host and command are replaced, also when they have no finding now; the run's
// time and sessionfix version (on every row), and whether every input was read (Complete false:
// exit 3, the findings may be incomplete).
type Run struct {
	Host, Command string
	Users         []string
	Time          time.Time
	Version       string
	Complete      bool
}

// Row is one finding. User is one of the run's Users (a row of another user is an error); Home
// is the home (PATH) it was found under; Store the store or rule file (absolute path, or a
// redacted reference); Site where in it ("line 3 message.parts[0].functionCall.name", "row
// …", "permissions.deny[0] line 4"); Class the name class (scan, check) or pair change
// (audit: lost, gained, refused, …); Name and NewName the stored name and the one fix would
// write (scan), the name after fix (check), or the tool's name before and now (audit); RuleKind
// and Rule a permission rule's kind (deny, allow, ask) and text (audit); Level, RuleID,
// Fingerprint and Message as in the SARIF result (partialFingerprints "sessionfix/v1").
type Row struct {
	User, Home, Agent, Store, Site, Class, Name, NewName, RuleKind, Rule, Level, RuleID, Fingerprint, Message string
}

// NotFleetError is an output file that is a SQLite database but not a sessionfix fleet
// database (another application_id, or tables of its own without one), or one of a later
// schema: nothing is written into it.
type NotFleetError struct {
	Path, Reason string
}

func (e *NotFleetError) Error() string {
	return fmt.Sprintf("%s is not a sessionfix fleet database (%s): refusing to write findings into it (give a new file or one --format sqlite wrote)", e.Path, e.Reason)
}

// Written is what Write did: Created (the file was new), Deleted (rows of the covered host,
// users and command replaced), Inserted (rows written).
type Written struct {
	Created           bool
	Deleted, Inserted int64
}

// Write writes run's rows into the fleet database at path (sqlite.OpenOutput's rules: created
// when missing, a link, FIFO or device never written through as root beyond its owner, a
// non-SQLite file refused), in one transaction: the schema created in a new (empty) database,
// every row of (run.Host, each of run.Users, run.Command) deleted from both tables, rows
// inserted, one runs row per user. A database that is not a fleet one is a *NotFleetError and
// a file Write created is removed again when nothing was committed.
func Write(ctx context.Context, path string, run Run, rows []Row) (Written, error) {
	var w Written
	users := map[string]int{}
	for _, u := range run.Users {
		users[u] = 0
	}
	for _, r := range rows {
		if _, ok := users[r.User]; !ok {
			return w, fmt.Errorf("fleet database %s: a finding of user %q, who is not one of the run's users", path, r.User)
		}
		users[r.User]++
	}
	if run.Host == "" || run.Command == "" || len(users) == 0 {
		return w, errors.New("fleet database: a run needs a host, a command and at least one user")
	}
	out, err := sqlite.OpenOutput(ctx, path, DefaultBusyTimeout)
	if err != nil {
		return w, err
	}
	w.Created = out.Created
	committed := false
	defer func() { out.Close(!committed) }()
	tx, err := out.Begin(ctx)
	if err != nil {
		return w, err
	}
	defer tx.Rollback()
	if err := prepare(ctx, tx, path); err != nil {
		return w, err
	}
	when, version := run.Time.UTC().Format(time.RFC3339), run.Version
	names := make([]string, 0, len(users))
	for u := range users {
		names = append(names, u)
	}
	sort.Strings(names)
	for _, u := range names {
		res, err := tx.ExecContext(ctx, `DELETE FROM `+FindingsTable+` WHERE host = ? AND user = ? AND command = ?`, run.Host, u, run.Command)
		if err != nil {
			return w, fmt.Errorf("fleet database %s: %w", path, err)
		}
		n, _ := res.RowsAffected()
		w.Deleted += n
		complete := 0
		if run.Complete {
			complete = 1
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO `+RunsTable+` (host, user, command, run_time, version, findings, complete) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			run.Host, u, run.Command, when, version, users[u], complete); err != nil {
			return w, fmt.Errorf("fleet database %s: %w", path, err)
		}
	}
	ins, err := tx.PreparexContext(ctx, `INSERT INTO `+FindingsTable+` (host, user, command, home, agent, store, site, class, name, new_name, rule_kind, rule, level, rule_id, fingerprint, message, run_time, version)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return w, fmt.Errorf("fleet database %s: %w", path, err)
	}
	defer ins.Close()
	for _, r := range rows {
		if _, err := ins.ExecContext(ctx, run.Host, r.User, run.Command, r.Home, r.Agent, r.Store, r.Site, r.Class, r.Name, r.NewName, r.RuleKind, r.Rule,
			r.Level, r.RuleID, r.Fingerprint, r.Message, when, version); err != nil {
			return w, fmt.Errorf("fleet database %s: %w", path, err)
		}
		w.Inserted++
	}
	if err := out.Commit(tx); err != nil {
		return w, err
	}
	committed = true
	return w, nil
}

// prepare checks, inside the write transaction, that the database is a fleet database of a
// schema this package writes, or new (no application_id, no schema object): then it creates
// the schema and marks the header.
func prepare(ctx context.Context, tx *sqlx.Tx, path string) error {
	var app, version, objects int64
	if err := tx.GetContext(ctx, &app, `PRAGMA application_id`); err != nil {
		return &NotFleetError{Path: path, Reason: "SQLite cannot read it: " + err.Error()}
	}
	if err := tx.GetContext(ctx, &version, `PRAGMA user_version`); err != nil {
		return fmt.Errorf("fleet database %s: %w", path, err)
	}
	if err := tx.GetContext(ctx, &objects, `SELECT count(*) FROM sqlite_schema`); err != nil {
		return fmt.Errorf("fleet database %s: %w", path, err)
	}
	switch {
	case app == ApplicationID && version > SchemaVersion:
		return &NotFleetError{Path: path, Reason: fmt.Sprintf("its schema version %d is newer than this sessionfix writes (%d)", version, SchemaVersion)}
	case app == ApplicationID:
		return nil
	case app != 0:
		return &NotFleetError{Path: path, Reason: fmt.Sprintf("its application_id is 0x%08X, a fleet database's is 0x%08X", app, ApplicationID)}
	case objects > 0:
		return &NotFleetError{Path: path, Reason: fmt.Sprintf("a SQLite database with %d tables, indexes or views of its own and no fleet application_id", objects)}
	}
	if _, err := tx.ExecContext(ctx, Schema); err != nil {
		return fmt.Errorf("fleet database %s: create the schema: %w", path, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d; PRAGMA user_version = %d`, ApplicationID, SchemaVersion)); err != nil {
		return fmt.Errorf("fleet database %s: %w", path, err)
	}
	return nil
}
