package allbench

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

const fixtures = "../../../fixtures"

// rejected counts the writable sites of s whose name a provider rejects: what fix rewrites.
func rejected(t *testing.T, s store.Store) int {
	t.Helper()
	snap, err := s.Scan(context.Background(), store.ScanOptions{})
	require.NoError(t, err)
	assert.Empty(t, snap.Problems)
	n := 0
	for _, site := range snap.Sites {
		if !site.ReadOnly && !mcpname.IsProviderSafe(site.Name) {
			n++
		}
	}
	return n
}

// TestJSONLCorpora: every listed JSONL corpus has a unique name, a label, an existing fixture,
// and generates, deterministically, session files sessionfix detects as stores holding names
// fix rewrites; Stats.Bytes is what was written.
func TestJSONLCorpora(t *testing.T) {
	require.NotEmpty(t, JSONL)
	names := map[string]bool{}
	for _, c := range JSONL {
		t.Run(c.Name, func(t *testing.T) {
			require.False(t, names[c.Name], "duplicate name")
			names[c.Name] = true
			require.True(t, strings.HasPrefix(c.Store, "JSONL ("), "store label %q", c.Store)
			require.DirExists(t, filepath.Join(fixtures, c.Fixture))
			sums := [2]map[string][32]byte{}
			for i := range sums {
				dir := t.TempDir()
				st, err := c.Generate(dir, filepath.Join(fixtures, c.Fixture), 256<<10, 64<<10)
				require.NoError(t, err)
				assert.NotEmpty(t, st.Summary)
				sums[i] = map[string][32]byte{}
				var size int64
				legacy := 0
				require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					b, err := os.ReadFile(p)
					require.NoError(t, err)
					rel, _ := filepath.Rel(dir, p)
					sums[i][rel] = sha256.Sum256(b)
					size += int64(len(b))
					det := all.DetectWith(context.Background(), p, b, all.Options{})
					require.NotNil(t, det.Store, "%s is not detected as a store: %+v", rel, det)
					legacy += rejected(t, det.Store)
					return nil
				}))
				assert.Equal(t, size, st.Bytes)
				assert.GreaterOrEqual(t, size, int64(256<<10))
				assert.Greater(t, len(sums[i]), 1, "several session files")
				assert.NotZero(t, legacy, "names fix rewrites")
			}
			assert.Equal(t, sums[0], sums[1], "the same arguments give the same corpus")
		})
	}
	_, err := JSONLNamed("no-such-corpus")
	assert.ErrorContains(t, err, `no corpus "no-such-corpus" (known: [`)
	first, err := JSONLNamed("")
	require.NoError(t, err)
	assert.Same(t, JSONL[0], first)
}

// TestSQLiteCorpora: every listed SQLite corpus has a unique name and file name, an existing
// fixture, and generates a database sessionfix detects as a store whose profile rewrites exactly
// the Rewritten columns, holding names fix rewrites; the floor query runs in the sqlite3 shell
// (when there is one) and names every rewritten table.
func TestSQLiteCorpora(t *testing.T) {
	require.NotEmpty(t, SQLite)
	names, files := map[string]bool{}, map[string]bool{}
	for _, c := range SQLite {
		t.Run(c.Name, func(t *testing.T) {
			require.False(t, names[c.Name] || files[c.File], "duplicate name or file")
			names[c.Name], files[c.File] = true, true
			require.True(t, strings.HasPrefix(c.Store, "SQLite ("), "store label %q", c.Store)
			require.FileExists(t, filepath.Join(fixtures, c.Fixture))
			require.NotEmpty(t, c.Version)
			p := filepath.Join(t.TempDir(), c.File)
			st, err := c.Generate(context.Background(), p, 60)
			require.NoError(t, err)
			assert.NotEmpty(t, st.Summary)
			fi, err := os.Stat(p)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, st.Bytes, fi.Size())
			head, err := all.ReadHead(p)
			require.NoError(t, err)
			det := all.DetectWith(context.Background(), p, head, all.Options{})
			require.NotNil(t, det.Store, "not detected as a store: %+v", det)
			prof := det.Store.(*sqlite.Store).Profile()
			require.NotNil(t, prof)
			var tables []string
			for _, ts := range prof.Tables {
				tables = append(tables, ts.Table+"."+ts.Column)
			}
			var cols []string
			for _, col := range c.Rewritten {
				cols = append(cols, col.Table+"."+col.Column)
				assert.Contains(t, c.FloorScan, "FROM "+col.Table, "the floor reads %s", col.Table)
			}
			assert.Subset(t, tables, cols, "profile %s rewrites the Rewritten columns", prof.Name)
			assert.NotZero(t, rejected(t, det.Store), "names fix rewrites")
			if sh, err := exec.LookPath("sqlite3"); err == nil {
				out, err := exec.Command(sh, p, c.FloorScan).CombinedOutput()
				require.NoError(t, err, "%s", out)
				assert.NotEmpty(t, strings.TrimSpace(string(out)), "the floor query prints what it read")
			} else {
				t.Log("no sqlite3 shell on PATH: the floor query is not run")
			}
		})
	}
	_, err := SQLiteNamed("no-such-corpus")
	assert.Error(t, err)
	first, err := SQLiteNamed("")
	require.NoError(t, err)
	assert.Same(t, SQLite[0], first)
}
