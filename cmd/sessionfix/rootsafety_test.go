package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessionfix/sessionfix/pipeline/report"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/internal/exitcode"
)

// The tests of issue 30 (root over untrusted homes) that need no second user.

// TestUndoForceSaysWhereTheChangesWent (issue 30 finding 8): undo --force over a session that
// changed since the run (a line added at the top, not an append: the edits cannot be reversed in
// place) restores the backup, and says where what the session held before the undo is kept —
// the "<backup>.before-undo" file holding that added line — in text and in JSON ("kept"). A
// store that had not changed names no such file.
func TestUndoForceSaysWhereTheChangesWent(t *testing.T) {
	for _, format := range []string{"table", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := fixtureCopy(t)
			state := filepath.Join(t.TempDir(), "S")
			env := testEnv(t)
			r := runCLI(t, env, "", "fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir)
			require.Equal(t, exitcode.OK, r.code, r.err)
			f := filepath.Join(dir, "projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl")
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			edited := append([]byte("{\"type\":\"edited-by-hand\"}\n"), b...)
			require.NoError(t, os.WriteFile(f, edited, 0o640))

			r = runCLI(t, env, "", "undo", "--last", "--force", "--yes", "--format", format, "--state-dir", state)
			require.Equal(t, exitcode.OK, r.code, r.err)
			var kept string
			if format == "json" {
				var rep report.UndoReport
				require.NoError(t, json.Unmarshal([]byte(r.out), &rep))
				for _, file := range rep.Files {
					if file.Path == f {
						kept = file.Kept
					} else {
						assert.Empty(t, file.Kept, "%s had not changed", file.Path)
					}
				}
			} else {
				var line string
				for _, l := range strings.Split(r.out, "\n") {
					if strings.Contains(l, f) {
						line = l
					} else {
						assert.NotContains(t, l, "kept at", "only the changed store names a kept file")
					}
				}
				before, after, ok := strings.Cut(line, "; it had changed since the run: what it held before this undo is kept at ")
				require.True(t, ok, r.out)
				assert.Equal(t, "  restored "+f+" (15 names)", before)
				kept = after
			}
			require.NotEmpty(t, kept, r.out)
			assert.True(t, strings.HasSuffix(kept, ".before-undo"), kept)
			got, err := os.ReadFile(kept)
			require.NoError(t, err)
			assert.Equal(t, string(edited), string(got), "the kept file holds what the session held before the undo")
		})
	}
}

// TestSignalEndsABlockedRun (issue 30 finding 5): a run blocked where no context reaches — here
// opening an --inventory FIFO nobody writes, which blocks the thread in open(2) — still ends on
// one SIGTERM: after stopGrace it exits 143 and says so. Before, a cron job's SIGTERM was
// ignored until a second signal (the real command: this test binary running main).
func TestSignalEndsABlockedRun(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "tools.json")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	cmd := exec.Command(exe, "scan", "--inventory", fifo, fixtureCopy(t))
	cmd.Env = append(os.Environ(), fakeMCPEnv+"=main")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	// Wait until it is blocked in the open: the FIFO then has a reader.
	deadline := time.Now().Add(10 * time.Second)
	for !fifoHasReader(t, cmd.Process.Pid, fifo) {
		require.True(t, time.Now().Before(deadline), "the run never opened the FIFO")
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("still running 10 s after SIGTERM: %s", stderr.String())
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, stderr.String())
	assert.Equal(t, exitcode.Terminated, ee.ExitCode(), stderr.String())
	assert.Contains(t, stderr.String(), "sessionfix: SIGTERM: stopping at the next safe point")
	assert.Contains(t, stderr.String(), "sessionfix: SIGTERM: the run did not stop within 900ms: exiting now")
}

// fifoHasReader reports whether process pid has fifo open (its /proc fd links).
func fifoHasReader(t *testing.T, pid int, fifo string) bool {
	fi, err := os.Stat(fifo)
	require.NoError(t, err)
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if st, err := os.Stat(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && os.SameFile(st, fi) {
			return true
		}
	}
	// A thread blocked in open(2) has no descriptor yet: its syscall says where it is.
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
	if strings.Contains(string(b), "fifo") {
		return true
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/wchan", pid, task.Name()))
		if strings.Contains(string(b), "fifo") || strings.Contains(string(b), "pipe") || strings.Contains(string(b), "partner") {
			return true
		}
	}
	return false
}

// nobody is the uid the root-only tests give files to: another user than root.
const nobody = 65534

// needRoot skips a test that runs as root over files another user owns.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: it gives files to another user (chown) and checks what root does with them")
	}
}

// chownTree gives every file under p (links themselves included) to uid.
func chownTree(t *testing.T, p string, uid int) {
	t.Helper()
	require.NoError(t, filepath.Walk(p, func(q string, _ os.FileInfo, err error) error {
		require.NoError(t, err)
		return os.Lchown(q, uid, uid)
	}))
}

// markerServerTOML is a Codex [mcp_servers.<key>] whose command appends the uid it runs as to
// marker (it is no MCP server: the discovery of it fails once it ran).
func markerServerTOML(key, marker string) string {
	return fmt.Sprintf("[mcp_servers.%s]\ncommand = \"sh\"\nargs = [\"-c\", \"id -u >> %s\"]\n", key, marker)
}

// TestDiscoverStartsNoOtherUsersCommand (issue 30 finding 1): as root over a Codex home another
// user owns, fix --discover started the command of that user's config.toml as root (id written
// as uid 0). Now it is not started: the server is refused, named, with the flag that would
// start it (all servers refused: exit 1, nothing done); --discover-untrusted starts it. A
// config root owns but others can write is refused the same way.
func TestDiscoverStartsNoOtherUsersCommand(t *testing.T) {
	needRoot(t)
	home, path := codexHome(t, readFixture(t, "rollout-codex-0.50.0.jsonl"), false)
	require.NoError(t, os.Chmod(home, 0o755))
	marker := filepath.Join(t.TempDir(), "ran")
	cfg := filepath.Join(home, "config.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(markerServerTOML("lit", marker)), 0o644))
	chownTree(t, home, nobody)
	e := newCodexEnv(t, map[string]string{"CODEX_HOME": home})
	e.Environ = os.Environ

	assert.Equal(t, exitcode.Error, e.run(t, "fix", "--agent", "codex", "--discover", path), e.err.String())
	assert.NoFileExists(t, marker, "the user's command ran as root")
	assert.Contains(t, e.err.String(), `discover MCP server "lit": not started: its config `+cfg+` is not yours to run: it belongs to uid 65534`)
	assert.Contains(t, e.err.String(), "its command would run as you: pass --discover-untrusted to start it anyway")

	require.NoError(t, os.Chown(cfg, 0, 0))
	require.NoError(t, os.Chmod(cfg, 0o666))
	assert.Equal(t, exitcode.Error, e.run(t, "fix", "--agent", "codex", "--discover", path), e.err.String())
	assert.NoFileExists(t, marker)
	assert.Contains(t, e.err.String(), "anyone can write it (mode 0666)")

	require.NoError(t, os.Chown(cfg, nobody, nobody))
	require.NoError(t, os.Chmod(cfg, 0o644))
	e.run(t, "fix", "--agent", "codex", "--discover", "--discover-untrusted", path)
	b, err := os.ReadFile(marker)
	require.NoError(t, err, "--discover-untrusted starts it: %s", e.err.String())
	assert.Equal(t, "0\n", string(b))

	assert.Equal(t, exitcode.Usage, e.run(t, "fix", "--discover-untrusted", path))
	assert.Contains(t, e.err.String(), "--discover-untrusted goes with --discover")
}

// TestAPlanStartsNothing (issue 30 finding 1): a plan records "discover": true, not the
// config's content; applied by root, another user's plan started that user's config command as
// root. A plan never starts servers: without --discover it is refused (exit 1, nothing done,
// nothing started), naming options.discover; with --discover the config's owner rule applies
// (another user's: not started). A plan made without --discover refuses --discover.
func TestAPlanStartsNothing(t *testing.T) {
	needRoot(t)
	home, path := codexHome(t, readFixture(t, "rollout-codex-0.50.0.jsonl"), false)
	require.NoError(t, os.Chmod(home, 0o755))
	marker := filepath.Join(t.TempDir(), "ran")
	cfg := filepath.Join(home, "config.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(fakeServerTOML(t, "lit", "literature.search_pubmed", "get+data", "搜索文献")+
		fakeServerTOML(t, "foo-bar", "deploy.prod")+markerServerTOML("marker", marker)), 0o644))
	e := newCodexEnv(t, map[string]string{"CODEX_HOME": home})
	e.Environ = os.Environ
	plan := filepath.Join(home, "plan.json")
	// The user's plan, made with --discover (as root here: the file is then given to them).
	assert.Equal(t, exitcode.Partial, e.run(t, "fix", "--agent", "codex", "--discover", "--plan-out", plan, path), e.err.String())
	require.FileExists(t, plan)
	require.NoError(t, os.Remove(marker))
	chownTree(t, home, nobody)
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	assert.Equal(t, exitcode.Error, e.run(t, "fix", "--apply", "--yes", "--plan", plan), e.err.String())
	assert.Contains(t, e.err.String(), "plan "+plan+" refused: options.discover: the plan was made with --discover, and a plan never starts MCP servers")
	assert.NoFileExists(t, marker, "the plan started a command")

	assert.Equal(t, exitcode.Error, e.run(t, "fix", "--apply", "--yes", "--discover", "--plan", plan), e.err.String())
	assert.Contains(t, e.err.String(), "not started: its config "+cfg+" is not yours to run")
	assert.NoFileExists(t, marker)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "nothing was rewritten")

	// A plan made without --discover: --discover with it is a usage error.
	plain := filepath.Join(t.TempDir(), "plain.json")
	require.NoError(t, os.Chown(cfg, 0, 0))
	assert.Equal(t, exitcode.OK, e.run(t, "fix", "--agent", "codex", "--plan-out", plain, path), e.err.String())
	assert.Equal(t, exitcode.Usage, e.run(t, "fix", "--apply", "--yes", "--discover", "--plan", plain), e.err.String())
	assert.Contains(t, e.err.String(), "was made without it")
	assert.NoFileExists(t, marker)
}

// TestAnotherUsersPlan (issue 30 finding 2): a user's honest plan named a root-owned app.db and
// that user's profile ($.email as a name site): root's fix --apply --plan rewrote three e-mail
// addresses. Applied as root, a plan another user wrote (the file's owner) carries no profile
// and no inventory (refused: exit 1, the member named, nothing changed), no busy_timeout over a
// minute, and rewrites only stores that user owns (root's are an error: exit 3, unchanged); the
// plan's summary line, before anything is read, names its author and every option it carries.
func TestAnotherUsersPlan(t *testing.T) {
	needRoot(t)
	env := testEnv(t)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	db := filepath.Join(dir, "app.db")
	require.NoError(t, sqlitetest.BuildFromSQL(context.Background(), db, false, stringReader(
		`CREATE TABLE users (id INTEGER PRIMARY KEY, doc TEXT);
INSERT INTO users (doc) VALUES ('{"email":"ann.lee@example.com"}'), ('{"email":"bob.ray@example.com"}'), ('{"email":"cy.dub@example.com"}');`)))
	prof := filepath.Join(dir, "mine.json")
	require.NoError(t, os.WriteFile(prof, []byte(`{"name":"mine","agent":"opencode","tables":[{"table":"users","column":"doc","sites":[{"path":"$.email","kind":"call"}]}]}`), 0o644))
	plan := filepath.Join(dir, "plan.json")
	r := runCLI(t, env, "", "fix", "--profile", prof, "--plan-out", plan, db)
	require.Equal(t, exitcode.OK, r.code, r.err)
	require.Contains(t, r.out, "plan written to "+plan+" (3 names in 1 store)")
	require.NoError(t, os.Chown(prof, nobody, nobody))
	require.NoError(t, os.Chown(plan, nobody, nobody))
	before := dumpSHA(t, db)

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--plan", plan)
	assert.Equal(t, exitcode.Error, r.code, r.err)
	assert.Contains(t, r.err, "plan "+plan+" refused: options.profile: a plan another user wrote (uid 65534")
	assert.Contains(t, r.err, "does not carry a --profile")
	assert.Equal(t, before, dumpSHA(t, db), "the database is unchanged")

	// Root's own plan naming the user's profile: the plan records its path, not its content,
	// and the user can change it since; refused the same way.
	require.NoError(t, os.Chown(plan, 0, 0))
	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--plan", plan)
	assert.Equal(t, exitcode.Error, r.code, r.err)
	assert.Contains(t, r.err, "plan "+plan+" refused: options.profile: "+prof+": it belongs to uid 65534")
	assert.Equal(t, before, dumpSHA(t, db), "the database is unchanged")
	require.NoError(t, os.Chown(plan, nobody, nobody))

	// The same plan made without a profile, for stores root owns: each is refused, named.
	qwen := fixtureCopy(t)
	require.NoError(t, os.Chmod(filepath.Dir(qwen), 0o755))
	plan2 := filepath.Join(dir, "plan2.json")
	r = runCLI(t, env, "", "fix", "--plan-out", plan2, qwen)
	require.Equal(t, exitcode.OK, r.code, r.err)
	require.NoError(t, os.Chown(plan2, nobody, nobody))
	orig := snapshotTree(t, qwen)
	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", filepath.Join(t.TempDir(), "S"), "--plan", plan2)
	assert.Equal(t, exitcode.Partial, r.code, r.err)
	assert.True(t, strings.HasPrefix(r.out, "plan "+plan2+": written 2026-11-30 12:00:00Z by uid 65534"), r.out)
	assert.Contains(t, r.out, "not you: it may not carry a profile or an inventory, and only that user's files are rewritten; 35 names in 3 stores; options: busy_timeout 5s\n")
	assert.Contains(t, r.err, "usage_record.jsonl: error: refused: it belongs to uid 0 (root), not to uid 65534")
	assert.Equal(t, orig, snapshotTree(t, qwen), "root's files are unchanged")

	// The stores its author owns are rewritten.
	chownTree(t, qwen, nobody)
	orig = snapshotTree(t, qwen)
	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", filepath.Join(t.TempDir(), "S"), "--plan", plan2)
	assert.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.out, "rewrote 35 names in 3 files")
	assert.NotEqual(t, orig, snapshotTree(t, qwen))

	// An inventory and a long busy timeout are refused the same way (the plan re-sealed).
	for _, tc := range []struct{ from, to, member string }{
		{`"busy_timeout": "5s"`, `"inventory": "/x/tools.json", "busy_timeout": "5s"`, "options.inventory"},
		{`"busy_timeout": "5s"`, `"busy_timeout": "10h0m0s"`, "options.busy_timeout"},
	} {
		b, err := os.ReadFile(plan2)
		require.NoError(t, err)
		require.True(t, bytes.Contains(b, []byte(tc.from)), "%s", b[:300])
		p := filepath.Join(dir, "edited.json")
		require.NoError(t, os.WriteFile(p, resealPlan(t, bytes.Replace(b, []byte(tc.from), []byte(tc.to), 1)), 0o644))
		require.NoError(t, os.Chown(p, nobody, nobody))
		r = runCLI(t, env, "", "fix", "--apply", "--yes", "--plan", p)
		assert.Equal(t, exitcode.Error, r.code, r.err)
		assert.Contains(t, r.err, "plan "+p+" refused: "+tc.member+": ")
	}
}

// resealPlan gives doc (a plan file) the checksum of its content, as fix --plan-out seals it.
func resealPlan(t *testing.T, doc []byte) []byte {
	t.Helper()
	prefix := []byte("{\n  \"checksum\": \"sha256:")
	require.True(t, bytes.HasPrefix(doc, prefix))
	c := bytes.Clone(doc)
	copy(c[len(prefix):], bytes.Repeat([]byte("0"), 64))
	sum := sha256.Sum256(c)
	hex.Encode(c[len(prefix):len(prefix)+64], sum[:])
	return c
}
