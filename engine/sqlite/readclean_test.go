package sqlite_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/sqlite"
)

// dirState lists the entries of dir with each regular file's SHA-256 (not a -shm's: every
// reader writes its read marks into that shared memory).
func dirState(tb testing.TB, dir string) []string {
	tb.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(tb, err)
	var out []string
	for _, e := range ents {
		line := e.Name() + " " + e.Type().String()
		if e.Type().IsRegular() && !strings.HasSuffix(e.Name(), "-shm") {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(tb, err)
			sum := sha256.Sum256(b)
			line += " " + hex.EncodeToString(sum[:8])
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

// readAll runs every read-only use of the database at path that scan, check, audit and a dry-run
// fix make: Detect, Scan, Read and IntegrityCheck.
func readAll(tb testing.TB, path string) {
	tb.Helper()
	st := detect(tb, path)
	snap := scanStore(tb, st)
	require.NotEmpty(tb, snap.Sites)
	require.NoError(tb, sqlite.Read(context.Background(), path, sqlite.Options{}, func(d *sqlite.DB) error {
		rows, err := d.Query(context.Background(), "SELECT count(*) FROM part")
		if err != nil {
			return err
		}
		return rows.Close()
	}))
	assert.Equal(tb, "ok", integrity(tb, path))
}

// TestReadLeavesNoWALFiles: reading a WAL database that has no -wal and -shm (no agent has it
// open: its last connection removed them) leaves the directory as it was — mode=ro created both
// files and could not remove them (review5, review7; both binaries of stop 17). Through a
// symbolic link the link's and the target's directories stay as they were. Every database the
// rooms' profiles read is checked (opencode, crush, goose, Codex's two).
func TestReadLeavesNoWALFiles(t *testing.T) {
	cases := []struct {
		name    string
		scripts []string
	}{
		{"opencode.db", []string{opencodeReal, opencodeLegacy}},
		{"crush.db", []string{crushSQL}},
		{"sessions.db", []string{gooseSQL}},
		{"state_5.sqlite", []string{codexState}},
		{"thread_history_1.sqlite", []string{codexHistory}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := buildDB(t, c.name, c.scripts...)
			assert.Equal(t, "wal", journalModeOf(t, p), "built in WAL mode")
			dir := filepath.Dir(p)
			before := dirState(t, dir)
			require.Len(t, before, 1, "the built database alone")
			scanStore(t, detect(t, p))
			assert.Equal(t, "ok", integrity(t, p))
			assert.Equal(t, before, dirState(t, dir))
		})
	}
	t.Run("symlink", func(t *testing.T) {
		target := opencodeDB(t)
		link := filepath.Join(t.TempDir(), "link.db")
		require.NoError(t, os.Symlink(target, link))
		tb, lb := dirState(t, filepath.Dir(target)), dirState(t, filepath.Dir(link))
		readAll(t, link)
		assert.Equal(t, tb, dirState(t, filepath.Dir(target)))
		assert.Equal(t, lb, dirState(t, filepath.Dir(link)))
	})
	t.Run("rollback journal", func(t *testing.T) {
		p := buildJournalDB(t, "opencode.db", opencodeReal, opencodeLegacy)
		before := dirState(t, filepath.Dir(p))
		readAll(t, p)
		assert.Equal(t, before, dirState(t, filepath.Dir(p)))
	})
}

// TestReadKeepsOthersWALFiles: a -wal and -shm that exist before the read — an agent has the
// database open, or a copied home holds committed changes only in its -wal — are never removed
// or checkpointed by a read, and the read sees the committed changes they hold.
func TestReadKeepsOthersWALFiles(t *testing.T) {
	const changed = "changed in the WAL only"
	t.Run("agent has it open", func(t *testing.T) {
		ctx := context.Background()
		p := opencodeDB(t)
		agent, err := sqlx.Open("sqlite3", "file:"+p+"?_busy_timeout=5000")
		require.NoError(t, err)
		defer agent.Close()
		agent.SetMaxOpenConns(1)
		_, err = agent.ExecContext(ctx, "PRAGMA wal_autocheckpoint=0; UPDATE session SET title = ?", changed)
		require.NoError(t, err)
		walBefore, err := os.ReadFile(p + "-wal")
		require.NoError(t, err)
		require.NotEmpty(t, walBefore, "the change is in the WAL")
		mainBefore, err := os.ReadFile(p)
		require.NoError(t, err)

		readAll(t, p)
		assert.Equal(t, changed, titleOf(t, p))

		walAfter, err := os.ReadFile(p + "-wal")
		require.NoError(t, err, "the agent's -wal is still there")
		assert.Equal(t, walBefore, walAfter, "and not checkpointed")
		_, err = os.Stat(p + "-shm")
		require.NoError(t, err, "the agent's -shm is still there")
		mainAfter, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, mainBefore, mainAfter)
		var title string
		require.NoError(t, agent.GetContext(ctx, &title, "SELECT title FROM session LIMIT 1"))
		assert.Equal(t, changed, title, "the agent reads on")
	})
	t.Run("agent writes and quits during the read", func(t *testing.T) {
		// The read's connection is then the last one: its close checkpoints the agent's
		// committed frames into the main file before it removes the -wal and -shm, as the
		// agent's own close would have without the read.
		ctx := context.Background()
		p := opencodeDB(t)
		require.NoError(t, sqlite.Read(ctx, p, sqlite.Options{}, func(d *sqlite.DB) error {
			rows, err := d.Query(ctx, "SELECT count(*) FROM part")
			if err != nil {
				return err
			}
			rows.Close()
			execSQL(t, p, "UPDATE session SET title = ?", changed)
			wal, err := os.Stat(p + "-wal")
			require.NoError(t, err)
			require.NotZero(t, wal.Size(), "the agent's change is in the WAL when it quits")
			return nil
		}))
		assert.Equal(t, []string{"opencode.db"}, names(t, filepath.Dir(p)))
		assert.Equal(t, changed, titleOf(t, p), "the committed change is in the main file")
	})
	t.Run("copied home with frames in the -wal", func(t *testing.T) {
		ctx := context.Background()
		src := opencodeDB(t)
		agent, err := sqlx.Open("sqlite3", "file:"+src+"?_busy_timeout=5000")
		require.NoError(t, err)
		defer agent.Close()
		agent.SetMaxOpenConns(1)
		_, err = agent.ExecContext(ctx, "PRAGMA wal_autocheckpoint=0; UPDATE session SET title = ?", changed)
		require.NoError(t, err)
		dir := t.TempDir()
		p := filepath.Join(dir, "opencode.db")
		for _, ext := range []string{"", "-wal", "-shm"} {
			b, err := os.ReadFile(src + ext)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p+ext, b, 0o644))
		}
		require.NoError(t, agent.Close())
		before := dirState(t, dir)

		readAll(t, p)
		assert.Equal(t, changed, titleOf(t, p), "the read sees the -wal's committed change")
		assert.Equal(t, before, dirState(t, dir), "nothing removed, nothing checkpointed")
	})
}

// titleOf reads the first session's title through the read path (sqlite.Read).
func titleOf(tb testing.TB, path string) string {
	tb.Helper()
	var title string
	require.NoError(tb, sqlite.Read(context.Background(), path, sqlite.Options{}, func(d *sqlite.DB) error {
		rows, err := d.Query(context.Background(), "SELECT title FROM session LIMIT 1")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := rows.Scan(&title); err != nil {
				return err
			}
		}
		return rows.Err()
	}))
	return title
}

// journalModeOf reads the journal mode from the database header (bytes 18-19: 2 is WAL),
// without opening the database (which would create its -wal and -shm).
func journalModeOf(tb testing.TB, path string) string {
	tb.Helper()
	f, err := os.Open(path)
	require.NoError(tb, err)
	defer f.Close()
	b := make([]byte, 20)
	_, err = f.ReadAt(b, 0)
	require.NoError(tb, err)
	if b[18] == 2 && b[19] == 2 {
		return "wal"
	}
	return "rollback"
}

// names lists the entries of dir.
func names(tb testing.TB, dir string) []string {
	tb.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(tb, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
