package fleetdb_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/engine/sqlite/fleetdb"
	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

var when = time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)

func rows(user string, n int) []fleetdb.Row {
	var out []fleetdb.Row
	for i := range n {
		out = append(out, fleetdb.Row{User: user, Home: "/home/" + user, Agent: "qwen", Store: "/home/" + user + "/.qwen/s.jsonl", Site: "line 3",
			Class: "legacy-dotted", Name: "mcp__a.b__c", NewName: "mcp__a_b__c_0x", Level: "warning", RuleID: "sessionfix/name/legacy-dotted",
			Fingerprint: string(rune('a' + i)), Message: "m"})
	}
	return out
}

// count runs a count query over the database.
func count(t *testing.T, path, query string) string {
	t.Helper()
	_, got, err := sqlitetest.Query(context.Background(), path, query)
	require.NoError(t, err)
	require.Len(t, got, 1)
	return got[0][0]
}

func TestWriteReplacesTheRunsRows(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "fleet.db")
	w, err := fleetdb.Write(ctx, db, fleetdb.Run{Host: "h1", Command: "scan", Users: []string{"alice", "bob"}, Time: when, Version: "v1", Complete: true},
		append(rows("alice", 3), rows("bob", 2)...))
	require.NoError(t, err)
	assert.Equal(t, fleetdb.Written{Created: true, Inserted: 5}, w)
	_, err = fleetdb.Write(ctx, db, fleetdb.Run{Host: "h2", Command: "scan", Users: []string{"alice"}, Time: when, Version: "v1", Complete: true}, rows("alice", 4))
	require.NoError(t, err)
	_, err = fleetdb.Write(ctx, db, fleetdb.Run{Host: "h1", Command: "audit", Users: []string{"alice"}, Time: when, Version: "v1", Complete: true}, rows("alice", 1))
	require.NoError(t, err)
	assert.Equal(t, "10", count(t, db, "SELECT count(*) FROM sessionfix_findings"))

	// h1's scan again: alice has 1 finding left, bob none; h2's rows and h1's audit stay.
	w, err = fleetdb.Write(ctx, db, fleetdb.Run{Host: "h1", Command: "scan", Users: []string{"alice", "bob"}, Time: when.Add(time.Hour), Version: "v2"}, rows("alice", 1))
	require.NoError(t, err)
	assert.Equal(t, fleetdb.Written{Deleted: 5, Inserted: 1}, w)
	assert.Equal(t, "1", count(t, db, "SELECT count(*) FROM sessionfix_findings WHERE host = 'h1' AND command = 'scan'"))
	assert.Equal(t, "0", count(t, db, "SELECT count(*) FROM sessionfix_findings WHERE user = 'bob'"))
	assert.Equal(t, "4", count(t, db, "SELECT count(*) FROM sessionfix_findings WHERE host = 'h2'"))
	assert.Equal(t, "1", count(t, db, "SELECT count(*) FROM sessionfix_findings WHERE host = 'h1' AND command = 'audit'"))
	assert.Equal(t, "2026-12-06T09:00:00Z v2", count(t, db, "SELECT run_time || ' ' || version FROM sessionfix_findings WHERE host = 'h1' AND command = 'scan'"))
	// The runs table: bob's scan with 0 findings, incomplete.
	assert.Equal(t, "0 0", count(t, db, "SELECT findings || ' ' || complete FROM sessionfix_runs WHERE host = 'h1' AND user = 'bob' AND command = 'scan'"))
	assert.Equal(t, "4", count(t, db, "SELECT count(*) FROM sessionfix_runs"))
	assert.Equal(t, "1397115988 1", count(t, db, "SELECT (SELECT application_id FROM pragma_application_id) || ' ' || (SELECT user_version FROM pragma_user_version)"))
}

func TestWriteRefusesOtherFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	run := fleetdb.Run{Host: "h", Command: "scan", Users: []string{"u"}, Time: when, Version: "v"}

	other := filepath.Join(dir, "app.db")
	require.NoError(t, sqlitetest.BuildFromSQL(ctx, other, false, stringsReader("CREATE TABLE t (x); INSERT INTO t VALUES (1);")))
	before, err := os.ReadFile(other)
	require.NoError(t, err)
	_, err = fleetdb.Write(ctx, other, run, rows("u", 1))
	var nf *fleetdb.NotFleetError
	require.ErrorAs(t, err, &nf)
	assert.Contains(t, err.Error(), other+" is not a sessionfix fleet database (a SQLite database with 1 tables")
	after, _ := os.ReadFile(other)
	assert.Equal(t, before, after, "nothing written")

	apps := filepath.Join(dir, "appid.db")
	require.NoError(t, sqlitetest.BuildFromSQL(ctx, apps, false, stringsReader("PRAGMA application_id = 7;")))
	_, err = fleetdb.Write(ctx, apps, run, nil)
	require.ErrorAs(t, err, &nf)
	assert.Contains(t, err.Error(), "application_id is 0x00000007")

	newer := filepath.Join(dir, "newer.db")
	_, err = fleetdb.Write(ctx, newer, run, nil)
	require.NoError(t, err)
	_, _, err = sqlitetest.Query(ctx, newer, "PRAGMA user_version = 2;")
	require.NoError(t, err)
	_, err = fleetdb.Write(ctx, newer, run, nil)
	require.ErrorAs(t, err, &nf)
	assert.Contains(t, err.Error(), "schema version 2 is newer")

	text := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte("my notes, not a database\n"), 0o644))
	_, err = fleetdb.Write(ctx, text, run, nil)
	var ns *sqlite.NotSQLiteError
	require.ErrorAs(t, err, &ns)
	got, _ := os.ReadFile(text)
	assert.Equal(t, "my notes, not a database\n", string(got))

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	_, err = fleetdb.Write(ctx, fifo, run, nil)
	assert.True(t, errors.Is(err, fileio.ErrNotTheFile), "a FIFO is refused, never waited on: %v", err)

	// A run that cannot be written leaves no file it created.
	bad := filepath.Join(dir, "bad.db")
	_, err = fleetdb.Write(ctx, bad, run, rows("someone-else", 1))
	require.Error(t, err)
	_, err = os.Lstat(bad)
	assert.True(t, os.IsNotExist(err))
}

// TestWriteInUse: a file whose write lock another run holds past the busy timeout is refused
// as in use.
func TestWriteInUse(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the busy timeout")
	}
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "fleet.db")
	run := fleetdb.Run{Host: "h", Command: "scan", Users: []string{"u"}, Time: when, Version: "v"}
	_, err := fleetdb.Write(ctx, db, run, nil)
	require.NoError(t, err)
	l, err := sqlitetest.HoldWriteLock(ctx, db, time.Second)
	require.NoError(t, err)
	defer l.Release()
	old := fleetdb.DefaultBusyTimeout
	fleetdb.DefaultBusyTimeout = 200 * time.Millisecond
	defer func() { fleetdb.DefaultBusyTimeout = old }()
	_, err = fleetdb.Write(ctx, db, run, nil)
	assert.True(t, errors.Is(err, store.ErrInUse), "%v", err)
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
