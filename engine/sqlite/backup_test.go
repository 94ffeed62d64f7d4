package sqlite_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/storetest"
)

// TestBackupIsTheMainFile: with nothing in the WAL, the backup is the database file byte for
// byte but for the header's file format versions (bytes 18-19: 2 = WAL, 1 = rollback
// journal), and its recorded hash is the backup's; it restores.
func TestBackupIsTheMainFile(t *testing.T) {
	for _, wal := range []bool{true, false} {
		t.Run(map[bool]string{true: "wal", false: "journal"}[wal], func(t *testing.T) {
			ctx := context.Background()
			p := buildJournalDB(t, "opencode.db", opencodeReal, opencodeLegacy)
			if wal {
				p = opencodeDB(t)
			}
			orig, err := os.ReadFile(p)
			require.NoError(t, err)
			origDump := dumpText(t, p)
			st := detect(t, p)
			snap := scanStore(t, st)
			edits := storetest.Edits(snap, storetest.ProviderSafe)
			bk := filepath.Join(t.TempDir(), "bk")
			ch, err := st.Apply(ctx, snap, edits, store.ApplyOptions{BackupPath: bk})
			require.NoError(t, err)

			assertBackupIsMainFile(t, orig, bk, ch)
			assert.Equal(t, origDump, dumpText(t, bk))
			assert.Equal(t, "ok", integrity(t, bk))
			assert.Equal(t, "delete", queryString(t, bk, "PRAGMA journal_mode"))
			assert.NoFileExists(t, bk+"-wal")

			require.NoError(t, sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, false))
			assert.Equal(t, origDump, dumpText(t, p))
		})
	}
}

// TestBackupWithFramesInTheWAL: a reader that keeps the WAL from being checkpointed leaves
// committed changes outside the main file; the backup (online backup API) holds them all —
// also when the store's path is a symbolic link to the database: SQLite resolves the link and
// keeps the log beside the target (target-wal), so a check of "path-wal" would see no log.
func TestBackupWithFramesInTheWAL(t *testing.T) {
	for _, link := range []bool{false, true} {
		t.Run(map[bool]string{false: "path", true: "symlink"}[link], func(t *testing.T) {
			ctx := context.Background()
			target := opencodeDB(t)
			p := target
			if link {
				p = filepath.Join(t.TempDir(), "link.db")
				require.NoError(t, os.Symlink(target, p))
			}
			rdb, err := sqlx.Open("sqlite3", "file:"+target+"?mode=ro")
			require.NoError(t, err)
			defer rdb.Close()
			held, err := rdb.BeginTxx(ctx, nil)
			require.NoError(t, err)
			defer held.Rollback()
			var n int
			require.NoError(t, held.Get(&n, "SELECT count(*) FROM part"))

			execSQL(t, target, `UPDATE session SET title = 'changed while a reader held the WAL'`)
			fi, err := os.Stat(target + "-wal")
			require.NoError(t, err)
			require.NotZero(t, fi.Size(), "the change is in the WAL")
			want := dumpText(t, target)
			require.Contains(t, want, "changed while a reader held the WAL")

			st := detect(t, p)
			snap := scanStore(t, st)
			bk := filepath.Join(t.TempDir(), "bk")
			ch, err := st.Apply(ctx, snap, storetest.Edits(snap, storetest.ProviderSafe), store.ApplyOptions{BackupPath: bk})
			require.NoError(t, err)
			assert.Equal(t, want, dumpText(t, bk), "the backup holds what only the WAL had")
			assert.Equal(t, "delete", queryString(t, bk, "PRAGMA journal_mode"))
			sum, err := fileio.HashFile(bk)
			require.NoError(t, err)
			assert.Equal(t, sum, ch.Before.SHA256)
			require.NoError(t, held.Rollback())
			require.NoError(t, sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, false))
			assert.Equal(t, want, dumpText(t, target))
		})
	}
}

// TestWriteCheck: quick_check only when the rewritten column is in no index, expression or
// partial index, and the table has no trigger.
func TestWriteCheck(t *testing.T) {
	ctx := context.Background()
	p := opencodeDB(t)
	check := func(targets ...string) string {
		s, err := sqlite.WriteCheck(ctx, p, targets...)
		require.NoError(t, err)
		return s
	}
	assert.Equal(t, "quick_check", check("part.data", "event.data"), "opencode indexes ids, sessions and sequence numbers only")
	assert.Equal(t, "integrity_check", check("part.session_id"), "an indexed column")
	assert.Equal(t, "integrity_check", check("nosuch"), "not table.column")
	for _, ddl := range []string{
		`CREATE INDEX x ON part (id, DATA)`,
		`CREATE INDEX x ON part (length(data))`,
		`CREATE INDEX x ON part (session_id) WHERE time_created > 0`,
		`CREATE TRIGGER x AFTER UPDATE ON part BEGIN SELECT 1; END`,
	} {
		execSQL(t, p, ddl)
		assert.Equal(t, "integrity_check", check("event.data", "part.data"), ddl)
		assert.Equal(t, "quick_check", check("event.data"), ddl)
		execSQL(t, p, map[bool]string{true: "DROP TRIGGER x", false: "DROP INDEX x"}[ddl[7] == 'T'])
	}
	assert.Equal(t, "quick_check", check("part.data"))
}

// TestBackupAfterCheckpoint: committed frames in the WAL with no reader in the way are folded
// into the main file before the write transaction, and the backup is then a copy of it (the
// online backup API would have bumped the schema cookie: its copy is a new write).
func TestBackupAfterCheckpoint(t *testing.T) {
	ctx := context.Background()
	p := opencodeDB(t)
	idle, err := sqlx.Open("sqlite3", "file:"+p+"?mode=ro")
	require.NoError(t, err)
	defer idle.Close()
	require.NoError(t, idle.Ping()) // an open connection: the writer's close does not checkpoint
	execSQL(t, p, `UPDATE session SET title = 'committed, still in the WAL'`)
	fi, err := os.Stat(p + "-wal")
	require.NoError(t, err)
	require.NotZero(t, fi.Size())
	want := dumpText(t, p)
	cookie := queryString(t, p, "PRAGMA schema_version")

	st := detect(t, p)
	snap := scanStore(t, st)
	bk := filepath.Join(t.TempDir(), "bk")
	_, err = st.Apply(ctx, snap, storetest.Edits(snap, storetest.ProviderSafe), store.ApplyOptions{BackupPath: bk})
	require.NoError(t, err)
	assert.Equal(t, want, dumpText(t, bk))
	assert.Equal(t, cookie, queryString(t, bk, "PRAGMA schema_version"), "a copy of the main file")
}

// TestBackupInChunks: a database copied in many chunks, with 512-byte pages (a file that ends
// in a part of a direct-I/O block, written through the page cache) and 4096-byte ones, WAL
// (the copy runs beside the rewrite, direct I/O) and rollback journal: the backup is the main
// file but for bytes 18-19, its hash is recorded, and it restores.
func TestBackupInChunks(t *testing.T) {
	defer sqlite.SetBackupChunk(8192)()
	for _, wal := range []bool{true, false} {
		for _, page := range []int{512, 4096} {
			t.Run(fmt.Sprintf("wal=%v/page=%d", wal, page), func(t *testing.T) {
				ctx := context.Background()
				p := opencodeDB(t)
				mode := map[bool]string{true: "WAL", false: "DELETE"}[wal]
				execSQL(t, p, fmt.Sprintf("PRAGMA journal_mode=DELETE; PRAGMA page_size=%d; VACUUM; PRAGMA journal_mode=%s", page, mode))
				orig, err := os.ReadFile(p)
				require.NoError(t, err)
				require.Greater(t, len(orig), 3*8192, "several chunks")
				if page == 512 {
					for len(orig)%4096 == 0 {
						execSQL(t, p, "CREATE TABLE IF NOT EXISTS pad (x); INSERT INTO pad VALUES (randomblob(300))")
						orig, err = os.ReadFile(p)
						require.NoError(t, err)
					}
				}
				origDump := dumpText(t, p)
				st := detect(t, p)
				snap := scanStore(t, st)
				bk := filepath.Join(t.TempDir(), "bk")
				ch, err := st.Apply(ctx, snap, storetest.Edits(snap, storetest.ProviderSafe), store.ApplyOptions{BackupPath: bk})
				require.NoError(t, err)
				assertBackupIsMainFile(t, orig, bk, ch)
				assert.Equal(t, "ok", integrity(t, bk))
				require.NoError(t, sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, false))
				assert.Equal(t, origDump, dumpText(t, p))
			})
		}
	}
}

// assertBackupIsMainFile: the backup at bk is the main file's bytes orig with the header's
// read/write versions set to 1 (a rollback-journal file), and ch.Before.SHA256 is its hash.
func assertBackupIsMainFile(t *testing.T, orig []byte, bk string, ch *store.Change) {
	t.Helper()
	got, err := os.ReadFile(bk)
	require.NoError(t, err)
	want := bytes.Clone(orig)
	want[18], want[19] = 1, 1
	assert.True(t, bytes.Equal(want, got), "the backup is the main file (%d bytes, want %d)", len(got), len(want))
	sum, err := fileio.HashFile(bk)
	require.NoError(t, err)
	assert.Equal(t, sum, ch.Before.SHA256)
}
