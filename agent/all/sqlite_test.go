package all_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/agent/codex"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/store"
)

// TestDetectSQLite: a SQLite database is recognised by its header whatever its name; one no
// profile describes is not a store (with the reason); one that cannot be read is unsupported.
func TestDetectSQLite(t *testing.T) {
	dir := t.TempDir()
	oc := filepath.Join(dir, "history.bin")
	f, err := os.Open("../../fixtures/opencode-real/opencode.sql")
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, sqlitetest.BuildFromSQL(context.Background(), oc, true, f))
	notes := filepath.Join(dir, "notes.db")
	require.NoError(t, sqlitetest.BuildFromSQL(context.Background(), notes, false, strings.NewReader("CREATE TABLE notes (id INTEGER PRIMARY KEY);")))
	torn := filepath.Join(dir, "torn.db")
	require.NoError(t, os.WriteFile(torn, append([]byte("SQLite format 3\x00"), make([]byte, 50)...), 0o644))

	tests := []struct {
		name, path          string
		store, notStore, un bool
	}{
		{"opencode under any name", oc, true, false, false},
		{"unknown schema", notes, false, true, false},
		{"unreadable", torn, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head, err := all.ReadHead(tt.path)
			require.NoError(t, err)
			d := all.DetectWith(context.Background(), tt.path, head, all.Options{SQLite: sqlite.Options{BusyTimeout: time.Second}})
			assert.Equal(t, tt.store, d.Store != nil)
			assert.Equal(t, tt.notStore, d.NotStore != "", d.NotStore)
			assert.Equal(t, tt.un, d.Unreadable != "", d.Unreadable)
			assert.Empty(t, d.Unsupported)
			if d.Store != nil {
				assert.Equal(t, store.Ref{Path: tt.path, Kind: store.KindSQLite}, d.Store.Ref())
			}
		})
	}
	head, err := all.ReadHead(oc)
	require.NoError(t, err)
	assert.Nil(t, all.DetectWith(context.Background(), oc, head, all.Options{Agent: codex.ID}).Store, "with --agent codex an opencode database is not read")
	assert.Equal(t, "SQLite store of opencode (profile opencode), not of codex", all.DetectWith(context.Background(), oc, head, all.Options{Agent: codex.ID}).NotStore)
	assert.NotNil(t, all.DetectWith(context.Background(), oc, head, all.Options{Agent: ""}).Store)

	st, err := all.Open(store.Ref{Path: oc, Kind: store.KindSQLite})
	require.NoError(t, err)
	_, ok := st.(store.Restorer)
	assert.True(t, ok, "a SQLite store reopened for undo can restore")
}
