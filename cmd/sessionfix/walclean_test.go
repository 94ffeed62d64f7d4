package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadOnlyRunsLeaveTheWALDatabaseAlone: scan, a dry-run fix and check of a WAL database
// that no agent has open (no -wal, no -shm) leave its directory holding the database alone; both
// binaries of stop 17 left opencode.db-wal and opencode.db-shm behind (review5, review7).
func TestReadOnlyRunsLeaveTheWALDatabaseAlone(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"scan"}, 0},
		{[]string{"scan", "--format", "json"}, 0},
		{[]string{"fix"}, 0},
		{[]string{"check", "--provider", "all"}, 5}, // names some providers reject
	} {
		args := c.args
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			dir, db := opencodeStore(t)
			before, err := os.ReadFile(db)
			require.NoError(t, err)
			r := runCLI(t, testEnv(t), "", append(args, dir)...)
			require.Equal(t, c.code, r.code, r.out+r.err)
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			assert.Equal(t, []string{"opencode.db"}, names)
			after, err := os.ReadFile(db)
			require.NoError(t, err)
			assert.Equal(t, before, after, "the database's bytes")
		})
	}
}
