package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/fleet"
	"github.com/sessionfix/sessionfix/reports"
)

// fleetHomes makes two copied Claude Code homes under dir (fixtures/claude-real): alice's deny
// rule written in 1.0.51's spelling (a lost restriction under 2.1.332), bob's as recorded.
func fleetHomes(t *testing.T, dir string) (alice, bob string) {
	t.Helper()
	for _, u := range []string{"alice", "bob"} {
		copyTree(t, "../../fixtures/claude-real/dot-claude", filepath.Join(dir, u, ".claude"))
		b, err := os.ReadFile("../../fixtures/claude-real/claude.json")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, u, ".claude.json"), b, 0o644))
	}
	set := filepath.Join(dir, "alice", ".claude", "settings.json")
	b, err := os.ReadFile(set)
	require.NoError(t, err)
	fixed := strings.Replace(string(b), `"deny": ["mcp__foo.bar__deploy.prod"]`, `"deny": ["mcp__foo_bar__deploy.prod"]`, 1)
	require.NotEqual(t, string(b), fixed)
	require.NoError(t, os.WriteFile(set, []byte(fixed), 0o644))
	return filepath.Join(dir, "alice", ".claude"), filepath.Join(dir, "bob", ".claude")
}

// fleetFile runs scan and audit of home with --format sqlite --out file as host and user.
func fleetFile(t *testing.T, env *Env, file, host, user, home string, mcp string) {
	t.Helper()
	r := runCLI(t, env, "", "scan", "--agent", "claude", "--mcp-config", mcp, "--format", "sqlite", "--out", file, "--host", host, "--user", user, home)
	require.Equal(t, 0, r.code, r.err)
	r = runCLI(t, env, "", "audit", "--agent", "claude", "--mcp-config", mcp, "--format", "sqlite", "--out", file, "--host", host, "--user", user, home)
	require.Equal(t, 0, r.code, r.err)
}

// docBlocks are the fenced blocks of docs/fleet.md whose info string is lang, in order.
func docBlocks(t *testing.T, doc, lang string) []string {
	t.Helper()
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(doc, -1) {
		out = append(out, m[1])
	}
	require.NotEmpty(t, out, "docs/fleet.md has no %s block", lang)
	return out
}

// sqlBlock is the SQL block of docs/fleet.md that holds the marker line "-- fleet: name".
func sqlBlock(t *testing.T, doc, name string) string {
	t.Helper()
	for _, b := range docBlocks(t, doc, "sql") {
		if i := strings.Index(b, "-- fleet: "+name+"\n"); i >= 0 {
			rest := b[i:]
			if j := strings.Index(rest[1:], "-- fleet: "); j >= 0 {
				rest = rest[:j+1]
			}
			return rest
		}
	}
	t.Fatalf("docs/fleet.md has no SQL marked -- fleet: %s", name)
	return ""
}

// TestFleetDocQueries runs what docs/fleet.md tells operators to run against files the commands
// wrote for two hosts (alice's home with the lost deny on ws-0142, bob's on ws-0177): the two
// ATTACH queries (the hosts, and the hosts with a lost deny), the merge into a central file, the
// osquery ATC tables' queries (each one's columns, in order, as its "columns" lists them; Linux
// and macOS paths), and the Fleet policy (a row on bob's host, none on alice's).
func TestFleetDocQueries(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	alice, bob := fleetHomes(t, dir)
	env := testEnv(t)
	mcp, err := filepath.Abs("../../fixtures/claude-real/mcp-config.json")
	require.NoError(t, err)
	b, err := os.ReadFile("../../docs/fleet.md")
	require.NoError(t, err)
	doc := string(b)
	t.Chdir(dir)
	fleetFile(t, env, "ws-0142.db", "ws-0142", "alice", alice, mcp)
	fleetFile(t, env, "ws-0177.db", "ws-0177", "bob", bob, mcp)

	attach := sqlBlock(t, doc, "attach")
	_, rows, err := sqlitetest.Query(ctx, "ws-0142.db", attach+sqlBlock(t, doc, "lost denies"))
	require.NoError(t, err)
	require.Len(t, rows, 1, "one lost deny, on alice's host: %v", rows)
	assert.Equal(t, []string{"ws-0142", "alice", filepath.Join(alice, "settings.json"), "mcp__foo_bar__deploy.prod", "mcp__foo_bar__deploy.prod", "mcp__foo_bar__deploy_prod"}, rows[0])

	cols, rows, err := sqlitetest.Query(ctx, "ws-0142.db", attach+sqlBlock(t, doc, "hosts"))
	require.NoError(t, err)
	assert.Equal(t, []string{"host", "user", "command", "run_time", "findings", "complete"}, cols)
	var hosts []string
	for _, r := range rows {
		hosts = append(hosts, r[0]+" "+r[1]+" "+r[2]+" "+r[4]+" "+r[5])
	}
	assert.Equal(t, []string{"ws-0142 alice audit 3 1", "ws-0142 alice scan 38 1", "ws-0177 bob audit 2 1", "ws-0177 bob scan 38 1"}, hosts, "both hosts listed")

	// The merge: a central file started from one host's, the other merged in twice (replaced).
	b, err = os.ReadFile("ws-0177.db")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile("central.db", b, 0o644))
	for range 2 {
		_, _, err = sqlitetest.Query(ctx, "central.db", sqlBlock(t, doc, "merge"))
		require.NoError(t, err)
	}
	_, rows, err = sqlitetest.Query(ctx, "central.db", "SELECT host, count(*) FROM sessionfix_findings GROUP BY host ORDER BY host;")
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"ws-0142", "41"}, {"ws-0177", "40"}}, rows)
	// The central file is still one the commands write into.
	r := runCLI(t, env, "", "scan", "--agent", "claude", "--mcp-config", mcp, "--format", "sqlite", "--out", filepath.Join(dir, "central.db"), "--host", "ws-0177", "--user", "bob", bob)
	require.Equal(t, 0, r.code, r.err)
	assert.Contains(t, r.err, "38 rows of earlier runs replaced")

	// osquery's auto_table_construction block: each table's query over a file the tool wrote.
	var atc struct {
		Tables map[string]struct {
			Query, Path, Platform string
			Columns               []string
		} `json:"auto_table_construction"`
	}
	blocks := docBlocks(t, doc, "json")
	found := false
	for _, b := range blocks {
		if strings.Contains(b, "auto_table_construction") {
			require.NoError(t, json.Unmarshal([]byte(b), &atc))
			found = true
		}
	}
	require.True(t, found)
	platforms := map[string]int{}
	for name, tb := range atc.Tables {
		platforms[tb.Platform]++
		switch tb.Platform {
		case "linux":
			assert.Equal(t, "/home/%/.local/state/sessionfix/fleet.db", tb.Path, name)
		case "darwin":
			assert.Equal(t, "/Users/%/.local/state/sessionfix/fleet.db", tb.Path, name)
		default:
			t.Errorf("%s: platform %q", name, tb.Platform)
		}
		cols, rows, err := sqlitetest.Query(ctx, "ws-0142.db", tb.Query+";")
		require.NoError(t, err, name)
		assert.Equal(t, tb.Columns, cols, "%s: the query's columns are the ones listed", name)
		assert.NotEmpty(t, rows, name)
	}
	assert.Equal(t, map[string]int{"linux": 2, "darwin": 2}, platforms)

	// The Fleet policy, on the tables as ATC names them (the database's own): no row where a
	// deny was lost (alice's host), a row where none was (bob's).
	policy := sqlBlock(t, doc, "policy")
	_, rows, err = sqlitetest.Query(ctx, "ws-0142.db", policy)
	require.NoError(t, err)
	assert.Empty(t, rows, "alice's host fails the policy")
	_, rows, err = sqlitetest.Query(ctx, "ws-0177.db", policy)
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"1"}}, rows, "bob's host passes it")
}

// TestFleetUserIsEachHomesOwner: without --user, each home's rows are its owner's, and a run over
// two homes replaces both owners' rows (root only: the test gives bob's home another owner).
func TestFleetUserIsEachHomesOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a home another owner")
	}
	ctx := context.Background()
	dir := t.TempDir()
	alice, bob := fleetHomes(t, dir)
	require.NoError(t, filepath.Walk(filepath.Dir(bob), func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 4242, 4242)
	}))
	env := testEnv(t)
	db := filepath.Join(dir, "fleet.db")
	r := runCLI(t, env, "", "scan", "--agent", "claude", "--mcp-config", "../../fixtures/claude-real/mcp-config.json", "--format", "sqlite", "--out", db, "--host", "h", alice, bob)
	require.Equal(t, 0, r.code, r.err)
	_, rows, err := sqlitetest.Query(ctx, db, "SELECT user, home, count(*) FROM sessionfix_findings GROUP BY user, home ORDER BY home;")
	require.NoError(t, err)
	me := fleet.OwnerOf(alice)
	assert.Equal(t, [][]string{{me, alice, "38"}, {"uid 4242", bob, "38"}}, rows)
	_, rows, err = sqlitetest.Query(ctx, db, "SELECT user, findings FROM sessionfix_runs ORDER BY user;")
	require.NoError(t, err)
	assert.ElementsMatch(t, [][]string{{me, "38"}, {"uid 4242", "38"}}, rows)
	// SARIF names both owners.
	r = runCLI(t, env, "", "scan", "--agent", "claude", "--format", "sarif", "--host", "h", alice, bob)
	assert.Contains(t, r.out, `"user": "`+strings.Join(sortedPair(me, "uid 4242"), ",")+`"`)
}

func sortedPair(a, b string) []string {
	if a > b {
		a, b = b, a
	}
	return []string{a, b}
}

// TestFleetOriginRedactsReferences: a database given as PATH is a home under its redacted
// reference: its password never reaches a fleet row (the home and store columns).
func TestFleetOriginRedactsReferences(t *testing.T) {
	dsn := "postgres://webui:s3cret-pw@db.example:5432/openwebui"
	o, err := fleet.NewOrigin("h", "", []string{dsn}, t.TempDir())
	require.NoError(t, err)
	rows := o.Rows([]reports.SARIFResult{{RuleID: "sessionfix/name/legacy-dotted", Fingerprint: "f", Finding: reports.Finding{Store: dsn, Name: "a.b"}}}, "openwebui", nil)
	require.Len(t, rows, 1)
	assert.NotContains(t, rows[0].Home+rows[0].Store, "s3cret-pw")
	assert.Equal(t, rows[0].Home, rows[0].Store, "the store is found under its home")
	assert.Equal(t, "legacy-dotted", rows[0].Class)
	assert.Equal(t, "error", rows[0].Level)
	assert.Equal(t, "openwebui", rows[0].Agent)
}
