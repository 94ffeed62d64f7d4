package sqlite_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/storetest"
)

// applyAll rewrites every provider-unsafe name of the database at p and returns the change.
func applyAll(t *testing.T, p string) *store.Change {
	t.Helper()
	st := detect(t, p)
	snap := scanStore(t, st)
	ch, err := st.Apply(context.Background(), snap, storetest.Edits(snap, storetest.ProviderSafe),
		store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.NoError(t, err)
	return ch
}

// restore undoes ch and returns the notes the store gave.
func restore(t *testing.T, p string, ch *store.Change, force bool) ([]string, error) {
	t.Helper()
	var notes []string
	ctx := fileio.WithNoteRecorder(context.Background(), func(n string) { notes = append(notes, n) })
	err := sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, force)
	return notes, err
}

// TestUndoPutsTheFileBack: undo of a run nothing touched since gives the database file back
// byte for byte, mtime and mode too, in WAL and rollback-journal mode (before, the rows were
// restored through SQLite and the header's change counter and version fields, and page
// layouts, differed); a second undo finds the original and does nothing; the current file is
// kept beside the backup.
func TestUndoPutsTheFileBack(t *testing.T) {
	for _, wal := range []bool{true, false} {
		t.Run(map[bool]string{true: "wal", false: "journal"}[wal], func(t *testing.T) {
			p := build(t, "opencode.db", wal, opencodeReal, opencodeLegacy)
			old := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
			require.NoError(t, os.Chtimes(p, old, old))
			require.NoError(t, os.Chmod(p, 0o640))
			orig, err := os.ReadFile(p)
			require.NoError(t, err)

			ch := applyAll(t, p)
			now, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NotEqual(t, orig, now)
			notes, err := restore(t, p, ch, false)
			require.NoError(t, err)
			assert.Empty(t, notes)
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.True(t, string(orig) == string(got), "the file is the original byte for byte")
			fi, err := os.Stat(p)
			require.NoError(t, err)
			assert.True(t, fi.ModTime().Equal(old), "mtime %s, want %s", fi.ModTime(), old)
			assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
			assert.FileExists(t, ch.Backup+".before-undo", "the file undo replaced is kept")
			assert.Equal(t, "ok", integrity(t, p))

			notes, err = restore(t, p, ch, false)
			require.NoError(t, err, "undoing again is harmless")
			assert.Empty(t, notes)
			got, err = os.ReadFile(p)
			require.NoError(t, err)
			assert.True(t, string(orig) == string(got))
			assert.NoFileExists(t, ch.Backup+".before-undo-2", "nothing was replaced the second time")
		})
	}
}

// TestUndoRowByRowSaysWhy: when the database is not exactly the file the run left, undo goes
// row by row (keeping what the agent wrote) and says why the file's bytes differ.
func TestUndoRowByRowSaysWhy(t *testing.T) {
	dump := func(t *testing.T, p string) string { return dumpText(t, p) }
	cases := []struct {
		name string
		// after runs once the run is done; it returns a cleanup run after the undo.
		after func(t *testing.T, p string, ch *store.Change) func()
		why   string
		kept  string // what the agent wrote, still there after the undo ("": the undo gives the backup's rows)
	}{
		{"the agent wrote since", func(t *testing.T, p string, _ *store.Change) func() {
			execSQL(t, p, `UPDATE session SET title = 'renamed by the agent'`)
			return func() {}
		}, "the database changed since the run (an agent wrote to it)", "renamed by the agent"},
		{"the agent holds it open", func(t *testing.T, p string, _ *store.Change) func() {
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			require.NoError(t, err)
			return func() { f.Close() }
		}, "its file could not be replaced (held open for writing", ""},
		{"the file cannot be replaced", func(t *testing.T, p string, _ *store.Change) func() {
			// The temp file beside the database cannot be written (a full disk, a quota).
			return fileio.SetFaultHook(func(op, path string) error {
				if op == fileio.FaultWrite && filepath.Dir(path) == filepath.Dir(p) && strings.HasPrefix(filepath.Base(path), "."+filepath.Base(p)) {
					return syscall.ENOSPC
				}
				return nil
			})
		}, "its file could not be replaced (", ""},
		{"frames in the WAL", func(t *testing.T, p string, _ *store.Change) func() {
			db, err := sqlx.Open("sqlite3", "file:"+p+"?_busy_timeout=5000")
			require.NoError(t, err)
			db.SetMaxOpenConns(1)
			_, err = db.Exec(`PRAGMA wal_autocheckpoint = 0; UPDATE session SET title = 'in the log'`)
			require.NoError(t, err)
			return func() { db.Close() }
		}, "its write-ahead log holds changes made since the run", "in the log"},
		{"a run that did not record the file it left", func(t *testing.T, _ string, ch *store.Change) func() {
			var v map[string]any
			require.NoError(t, json.Unmarshal(ch.Verify, &v))
			f := v["file"].(map[string]any)
			require.NotNil(t, f["after"], "a run records the file it left")
			delete(f, "after")
			f["no_after"] = "another connection wrote to it as the run ended, so the file the run left was not recorded"
			b, err := json.Marshal(v)
			require.NoError(t, err)
			ch.Verify = b
			return func() {}
		}, "another connection wrote to it as the run ended", ""},
		{"an older run (no file record)", func(t *testing.T, _ string, ch *store.Change) func() {
			var v map[string]any
			require.NoError(t, json.Unmarshal(ch.Verify, &v))
			delete(v, "file")
			b, err := json.Marshal(v)
			require.NoError(t, err)
			ch.Verify = b
			return func() {}
		}, "the run recorded no byte copy of the database file", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := opencodeDB(t)
			ch := applyAll(t, p)
			done := tc.after(t, p, ch)
			notes, err := restore(t, p, ch, false)
			done()
			require.NoError(t, err)
			require.Len(t, notes, 1)
			assert.Contains(t, notes[0], "restored row by row, not byte for byte: "+tc.why)
			assert.Contains(t, notes[0], "the file's bytes differ from before the run")
			assert.NoFileExists(t, ch.Backup+".before-undo", "the file was not replaced")
			// Every rewritten value is the original again; what the agent wrote stays.
			got := dump(t, p)
			if tc.kept != "" {
				assert.Contains(t, got, tc.kept)
				assert.NotContains(t, dumpText(t, ch.Backup), tc.kept)
			} else {
				assert.Equal(t, dumpText(t, ch.Backup), got)
			}
			assert.Equal(t, "ok", integrity(t, p))
		})
	}
}
