package sqlite_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"
)

// sqlFixtures are every SQL text fixture of the repository, each with the scripts it is loaded
// on top of (opencode-legacy.sql adds rows to the real opencode dump). A new .sql file under
// fixtures/ or a testdata/ directory must be listed here (TestSQLFixturesListed).
var sqlFixtures = map[string][]string{
	opencodeReal:   nil,
	opencodeLegacy: {opencodeReal},
	crushSQL:       nil,
	gooseSQL:       nil,
	codexState:     nil,
	codexHistory:   nil,
	"../../agent/opencode/opencodebench/schema.sql":                            nil,
	"../../fixtures/openwebui-schema/dump_sqlite.sql":                          nil,
	"../../fixtures/kilo-real/kilo-7.0.33.sql":                                 nil,
	"../../fixtures/kilo-real/kilo-7.7.7-after-import-and-resume.sql":          nil,
	"../../fixtures/cline-real/dot-cline-data-after-3.0.65/sessions.sql":       nil,
	"../../fixtures/cline-real/dot-cline-data-after-3.0.65/session-search.sql": nil,
}

// TestSQLFixturesLoadAsIs runs every SQL fixture (after its base) on a fresh, empty database
// with plain statements, as `sqlite3 new.db < fixture.sql` does: no table is created first,
// unlike BuildFromSQL, which creates sqlite_sequence for dumps that clear it. A .dump taken of a
// database whose sqlite_sequence is empty ends with "DELETE FROM sqlite_sequence;", which fails
// on a database without AUTOINCREMENT tables ("no such table: sqlite_sequence").
func TestSQLFixturesLoadAsIs(t *testing.T) {
	for f, base := range sqlFixtures {
		t.Run(filepath.Base(f), func(t *testing.T) {
			db, err := sqlx.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "x.db"))
			require.NoError(t, err)
			defer db.Close()
			for _, s := range append(append([]string(nil), base...), f) {
				text, err := os.ReadFile(s)
				require.NoError(t, err)
				_, err = db.Exec(string(text))
				require.NoError(t, err, "%s does not load into an empty database", s)
			}
		})
	}
}

// TestSQLFixturesLoadInSQLiteShell is TestSQLFixturesLoadAsIs through the sqlite3 shell itself
// (`sqlite3 :memory: < fixture.sql`), which stops on nothing but reports every failing
// statement on stderr. .ci/run installs sqlite3, so CI always runs it.
func TestSQLFixturesLoadInSQLiteShell(t *testing.T) {
	shell, err := exec.LookPath("sqlite3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but no sqlite3 shell on PATH: .ci/run should have installed it (apt-get install sqlite3)")
		}
		t.Skip("skipped: no sqlite3 shell on PATH, so the SQL fixtures are not loaded with it (apt-get install sqlite3 to run this test)")
	}
	for f, base := range sqlFixtures {
		t.Run(filepath.Base(f), func(t *testing.T) {
			var in bytes.Buffer
			for _, s := range append(append([]string(nil), base...), f) {
				text, err := os.ReadFile(s)
				require.NoError(t, err)
				in.Write(text)
			}
			cmd := exec.Command(shell, "-bail", ":memory:")
			cmd.Stdin = &in
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			require.NoError(t, err, "sqlite3 :memory: < %s: %s", f, stderr.String())
			require.Empty(t, strings.TrimSpace(stderr.String()), "sqlite3 :memory: < %s", f)
		})
	}
}

// TestSQLFixturesListed fails when a .sql file of the repository is missing from sqlFixtures.
func TestSQLFixturesListed(t *testing.T) {
	var found []string
	for _, pattern := range []string{"../../fixtures/*/*.sql", "testdata/*.sql", "*/*.sql"} {
		m, err := filepath.Glob(pattern)
		require.NoError(t, err)
		found = append(found, m...)
	}
	require.NotEmpty(t, found)
	for _, f := range found {
		_, ok := sqlFixtures[filepath.ToSlash(f)]
		require.True(t, ok, "%s is not in sqlFixtures: add it (with the scripts it loads on top of)", f)
	}
}
