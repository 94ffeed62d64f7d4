package torture

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
)

// The attack scenarios of issue 30 (root over homes their users control): an unprivileged
// local user, made by the test (useradd), against root's scan, fix and fix --plan. Victims are
// only files made for the trial. Each needs root; off root it is skipped with the reason, and
// under CI=true as root a scenario that cannot run fails instead of skipping.
func init() {
	scenarios = append(scenarios,
		scenario{"root-discover-user-command", rootDiscoverUserCommand}, // finding 1
		scenario{"root-user-plan-profile", rootUserPlanProfile},         // finding 2
		scenario{"root-follows-user-link", rootFollowsUserLink},         // finding 3
		scenario{"root-temp-swap", rootTempSwap},                        // finding 4
		scenario{"root-fifo-swap", rootFIFOSwap},                        // finding 5
		scenario{"root-link-swap-disclosure", rootLinkSwapDisclosure},   // finding 6
	)
}

// attacker is the unprivileged user of a root scenario and the scenario's directory: base (root's,
// mode 0755, removed at the end), the sessionfix binary and this test binary copied there (the
// user cannot reach the go build cache), and the user's home.
type attacker struct {
	uid, gid uint32
	name     string
	base     string
	bin      string // sessionfix, runnable by both
	helper   string // this test binary (the fake MCP server), runnable by both
	home     string // the user's, owned by them
}

// skipOrFail skips the scenario with why, or fails it under CI=true as root: there the scenario
// must run.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" && os.Geteuid() == 0 {
		t.Fatalf("CI=true as root: this scenario must run, but %s", why)
	}
	t.Skip(why)
}

// newAttacker makes the scenario's user (useradd --system, removed by userdel at the end) and
// directories.
func newAttacker(h *harness) *attacker {
	t := h.t
	if os.Geteuid() != 0 {
		t.Skip("needs root: the scenario is an unprivileged user (made by the test) against root's sessionfix")
	}
	name := fmt.Sprintf("sfatk%d%d", os.Getpid()%100000, time.Now().UnixNano()%1000)
	if out, err := exec.Command(sbin("useradd"), "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		skipOrFail(t, fmt.Sprintf("useradd %s: %v %s", name, err, bytes.TrimSpace(out)))
	}
	t.Cleanup(func() { _ = exec.Command(sbin("userdel"), name).Run() })
	u, err := user.Lookup(name)
	if err != nil {
		skipOrFail(t, fmt.Sprintf("lookup %s after useradd: %v", name, err))
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	base, err := os.MkdirTemp("", "sf-attack-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	must(t, os.Chmod(base, 0o755))
	a := &attacker{uid: uint32(uid), gid: uint32(gid), name: name, base: base,
		bin: filepath.Join(base, "sessionfix"), helper: filepath.Join(base, "torture.test"), home: filepath.Join(base, "home")}
	copyFile(t, h.bin, a.bin, 0o755)
	exe, err := os.Executable()
	must(t, err)
	copyFile(t, exe, a.helper, 0o755)
	must(t, os.Mkdir(a.home, 0o755))
	a.own(t, a.home)
	return a
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	must(t, err)
	must(t, os.WriteFile(dst, b, mode))
	must(t, os.Chmod(dst, mode))
}

// own gives p and everything under it (links themselves) to the user.
func (a *attacker) own(t *testing.T, p string) {
	t.Helper()
	must(t, filepath.Walk(p, func(q string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(q, int(a.uid), int(a.gid))
	}))
}

// userDir is a new directory of the user's home (owned by them); rootDir one of root's (0755).
func (a *attacker) userDir(t *testing.T, name string) string {
	d := filepath.Join(a.home, name)
	must(t, os.MkdirAll(d, 0o755))
	a.own(t, d)
	return d
}

func (a *attacker) rootDir(t *testing.T, name string) string {
	d := filepath.Join(a.base, "root-"+name)
	must(t, os.MkdirAll(d, 0o755))
	return d
}

// command runs name as the user, in their home.
func (a *attacker) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: a.uid, Gid: a.gid}}
	cmd.Env = []string{"HOME=" + a.home, "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"}
	cmd.Dir = a.home
	return cmd
}

// loop starts the user's shell loop script; the returned stop ends it (the process group).
func (a *attacker) loop(t *testing.T, script string) (stop func()) {
	cmd := a.command("sh", "-c", script)
	cmd.SysProcAttr.Setpgid = true
	must(t, cmd.Start())
	return func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}
}

// root runs sessionfix as root (this process) with HOME set to a directory of root's, waiting
// at most limit; timedOut is set when it was still running then (it is killed).
func (a *attacker) root(limit time.Duration, args ...string) (code int, out string, timedOut bool) {
	cmd := exec.Command(a.bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(a.base, "root-home"))
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Start(); err != nil {
		return -1000, err.Error(), false
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return exitCode(err), b.String(), false
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		return exitCode(<-done), b.String(), true
	}
}

const helperMCPEnv = "SESSIONFIX_TORTURE_MCP"

// TestHelperFakeMCP is not a test: it is the stdio MCP server of root-discover-user-command's
// config (listing the session's tools), started after the config's command wrote who runs it.
func TestHelperFakeMCP(t *testing.T) {
	if os.Getenv(helperMCPEnv) == "" {
		t.Skip("helper process of root-discover-user-command (" + helperMCPEnv + ")")
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"},
		&mcp.ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	for _, name := range strings.Split(os.Getenv(helperMCPEnv), ",") {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	_ = srv.Run(context.Background(), &mcp.StdioTransport{})
	os.Exit(0)
}

const codexRollout = "sessions/2026/11/30/rollout-2026-11-30T18-55-07-01a22dcf-9134-7922-bfac-658542a5f64b.jsonl"

// ranAsRoot reports whether marker holds a line "0" (id -u of root).
func ranAsRoot(marker string) bool {
	b, _ := os.ReadFile(marker)
	for _, l := range strings.Split(string(b), "\n") {
		if l == "0" {
			return true
		}
	}
	return false
}

// rootDiscoverUserCommand (finding 1): the user's Codex home has a config.toml whose MCP server
// command first appends `id -u` to a marker, then serves the session's tools. Root runs
// `fix --agent codex --discover HOME` (trial "direct"), and applies a plan the user made with
// --discover (trial "plan": `fix --apply --yes --plan`). A "0" in the marker is root running
// the user's command: a failure.
func rootDiscoverUserCommand(h *harness, r *report) {
	t := h.t
	a := newAttacker(h)
	rollout, err := os.ReadFile("../../fixtures/codex-real/rollout-codex-0.50.0.jsonl")
	must(t, err)
	for i := range trialsOf(3) {
		home := filepath.Join(a.userDir(t, fmt.Sprintf("f1-%d", i)), ".codex")
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(home, codexRollout)), 0o755))
		must(t, os.WriteFile(filepath.Join(home, codexRollout), rollout, 0o644))
		marker := filepath.Join(filepath.Dir(home), "marker")
		cfg := fmt.Sprintf("[mcp_servers.lit]\ncommand = \"sh\"\nargs = [\"-c\", \"id -u >> %s; exec %s -test.run=^TestHelperFakeMCP$\"]\nenv = { %s = \"literature.search_pubmed,get+data,搜索文献\" }\n",
			marker, a.helper, helperMCPEnv)
		must(t, os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o644))
		a.own(t, filepath.Dir(home))
		state := filepath.Join(a.rootDir(t, fmt.Sprintf("f1-%d", i)), "state")

		r.Trials++
		code, out, _ := a.root(time.Minute, "fix", "--agent", "codex", "--discover", "--state-dir", state, home)
		r.note(fmt.Sprintf("direct-exit%d", code))
		if ranAsRoot(marker) {
			r.fail("trial %d direct: root ran the user's config command (uid 0 in the marker; exit %d): %s", i, code, firstLine(out))
		}
		_ = os.Remove(marker)

		r.Trials++
		plan := filepath.Join(filepath.Dir(home), "plan.json")
		cmd := a.command(a.bin, "fix", "--agent", "codex", "--discover", "--plan-out", plan, home)
		if b, err := cmd.CombinedOutput(); err != nil && exitCode(err) != 3 {
			r.fail("trial %d plan: the user's fix --plan-out: %v: %s", i, err, firstLine(string(b)))
			continue
		}
		_ = os.Remove(marker)
		code, out, _ = a.root(time.Minute, "fix", "--apply", "--yes", "--quiet", "--state-dir", state, "--plan", plan)
		r.note(fmt.Sprintf("plan-exit%d", code))
		if ranAsRoot(marker) {
			r.fail("trial %d plan: applying the user's plan ran their config command as root (exit %d): %s", i, code, firstLine(out))
		}
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// rootUserPlanProfile (finding 2): root's app.db (0644, root's directory) holds three e-mail
// addresses; the user writes a profile making $.email a name site and, honestly, a plan with
// it (`fix --profile --plan-out`, as the user). Root applies the plan. Every address rewritten is
// a failure; bytes lost are the addresses' bytes gone.
func rootUserPlanProfile(h *harness, r *report) {
	t := h.t
	a := newAttacker(h)
	emails := []string{"ann.lee@example.com", "bob.ray@example.com", "cy.dub@example.com"}
	for i := range trialsOf(3) {
		r.Trials++
		dir := a.rootDir(t, fmt.Sprintf("f2-%d", i))
		db := filepath.Join(dir, "app.db")
		must(t, sqlitetest.BuildFromSQL(context.Background(), db, false, strings.NewReader(
			`CREATE TABLE users (id INTEGER PRIMARY KEY, doc TEXT);
INSERT INTO users (doc) VALUES ('{"email":"`+emails[0]+`"}'), ('{"email":"`+emails[1]+`"}'), ('{"email":"`+emails[2]+`"}');`)))
		must(t, os.Chmod(db, 0o644))
		udir := a.userDir(t, fmt.Sprintf("f2-%d", i))
		prof := filepath.Join(udir, "mine.json")
		must(t, os.WriteFile(prof, []byte(`{"name":"mine","agent":"opencode","tables":[{"table":"users","column":"doc","sites":[{"path":"$.email","kind":"call"}]}]}`), 0o644))
		a.own(t, prof)
		plan := filepath.Join(udir, "plan.json")
		// --force: root's database is not the user's, and fix refuses another user's file
		// without it (issue 23 item 8); the attacker forces the plan to name it.
		if b, err := a.command(a.bin, "fix", "--force", "--profile", prof, "--plan-out", plan, db).CombinedOutput(); err != nil {
			r.fail("trial %d: the user's fix --plan-out: %v: %s", i, err, firstLine(string(b)))
			continue
		}
		code, out, _ := a.root(time.Minute, "fix", "--apply", "--yes", "--quiet", "--state-dir", filepath.Join(dir, "state"), "--plan", plan)
		r.note(fmt.Sprintf("exit%d", code))
		dump, err := dumpText(db)
		if err != nil {
			r.fail("trial %d: dump: %v", i, err)
			continue
		}
		gone := 0
		for _, e := range emails {
			if !strings.Contains(dump, e) {
				gone++
				r.BytesLost += int64(len(e))
			}
		}
		if gone > 0 {
			r.fail("trial %d: root's app.db: %d of 3 e-mail addresses rewritten by the user's plan (exit %d): %s", i, gone, code, firstLine(out))
		}
	}
}

// rootFollowsUserLink (finding 3): the user's ~/.qwen is a link to a root-owned Qwen Code
// directory (trial "qwen"), and the user's Codex home's sessions/ a link to a root-owned
// sessions directory (trial "codex"); root runs `fix --apply` over the user's path. A root file
// rewritten is a failure; bytes lost are the sizes of root's files rewritten.
func rootFollowsUserLink(h *harness, r *report) {
	t := h.t
	a := newAttacker(h)
	rollout, err := os.ReadFile("../../fixtures/codex-real/rollout-codex-0.50.0.jsonl")
	must(t, err)
	codexCfg, err := os.ReadFile("../../fixtures/codex-real/config.toml") // its server keys name the session's tools
	must(t, err)
	check := func(trial, dir string, before map[string]string, code int, out string) {
		after := sums(t, dir)
		changed := 0
		for rel, s := range before {
			if after[rel] != s {
				changed++
				if fi, err := os.Stat(filepath.Join(dir, rel)); err == nil {
					r.BytesLost += fi.Size()
				}
			}
		}
		if changed > 0 {
			r.fail("%s: root followed the user's link and rewrote %d of root's files (exit %d): %s", trial, changed, code, firstLine(out))
		}
	}
	for i := range trialsOf(3) {
		r.Trials++
		rq := filepath.Join(a.rootDir(t, fmt.Sprintf("f3-%d", i)), "qwen")
		copyTree(t, "../../fixtures/qwen-real/dot-qwen", rq)
		before := sums(t, rq)
		uhome := a.userDir(t, fmt.Sprintf("f3-%d", i))
		must(t, os.Symlink(rq, filepath.Join(uhome, ".qwen")))
		a.own(t, uhome)
		code, out, _ := a.root(time.Minute, "fix", "--apply", "--yes", "--quiet", "--state-dir", filepath.Join(a.base, fmt.Sprintf("state-f3q-%d", i)), filepath.Join(uhome, ".qwen"))
		r.note(fmt.Sprintf("qwen-exit%d", code))
		check(fmt.Sprintf("trial %d qwen", i), rq, before, code, out)

		r.Trials++
		rs := filepath.Join(a.rootDir(t, fmt.Sprintf("f3c-%d", i)), "sessions")
		p := filepath.Join(rs, strings.TrimPrefix(codexRollout, "sessions/"))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, rollout, 0o644))
		before = sums(t, rs)
		ch := filepath.Join(uhome, ".codex")
		must(t, os.MkdirAll(ch, 0o755))
		must(t, os.WriteFile(filepath.Join(ch, "config.toml"), codexCfg, 0o644))
		must(t, os.Symlink(rs, filepath.Join(ch, "sessions")))
		a.own(t, ch)
		code, out, _ = a.root(time.Minute, "fix", "--apply", "--yes", "--quiet", "--agent", "codex", "--state-dir", filepath.Join(a.base, fmt.Sprintf("state-f3c-%d", i)), ch)
		r.note(fmt.Sprintf("codex-exit%d", code))
		check(fmt.Sprintf("trial %d codex", i), rs, before, code, out)
	}
}

// userQwen copies the harness corpus (the Qwen fixtures and a 20 MB session) into the user's
// directory name, owned by them; it returns the copy and the big session's path.
func userQwen(h *harness, a *attacker, name string) (dir, big string) {
	dir = filepath.Join(a.userDir(h.t, name), "dot-qwen")
	copyTree(h.t, h.corpus, dir)
	a.own(h.t, filepath.Dir(dir))
	return dir, filepath.Join(dir, h.big)
}

// rootTempSwap (finding 4): while root runs `fix --apply` over the user's sessions, the user
// (who owns the directory) swaps each temp file sessionfix creates there (".<name><digits>")
// for a symlink to a root-only file. A changed mtime or content of the root-only file, or a
// session left a symlink, is a failure; bytes lost are the sizes of the sessions no longer at
// their path.
func rootTempSwap(h *harness, r *report) {
	t := h.t
	a := newAttacker(h)
	for i := range trialsOf(5) {
		r.Trials++
		victim := filepath.Join(a.rootDir(t, fmt.Sprintf("f4-%d", i)), "root-only")
		must(t, os.WriteFile(victim, []byte("root only\n"), 0o600))
		t0 := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
		must(t, os.Chtimes(victim, t0, t0))
		dir, big := userQwen(h, a, fmt.Sprintf("f4-%d", i))
		bigSize := int64(0)
		if fi, err := os.Stat(big); err == nil {
			bigSize = fi.Size()
		}
		chats := filepath.Dir(big)
		stop := a.loop(t, fmt.Sprintf(`cd %s || exit 1
while :; do
  for f in .*.jsonl[0-9]*; do
    [ -f "$f" ] && [ ! -L "$f" ] && ln -sfn %s "$f.l" 2>/dev/null && mv -f "$f.l" "$f" 2>/dev/null
  done
done`, chats, victim))
		time.Sleep(100 * time.Millisecond)
		code, out, timedOut := a.root(2*time.Minute, "fix", "--apply", "--yes", "--quiet", "--state-dir", filepath.Join(a.base, fmt.Sprintf("state-f4-%d", i)), dir)
		stop()
		r.note(fmt.Sprintf("exit%d", code))
		trial := fmt.Sprintf("trial %d", i)
		if timedOut {
			r.fail("%s: fix did not end in 2 minutes", trial)
		}
		if fi, err := os.Stat(victim); err != nil || !fi.ModTime().Equal(t0) {
			r.fail("%s: root set the root-only file's mtime (exit %d): %v", trial, code, statTime(fi, err))
		}
		if b, _ := os.ReadFile(victim); string(b) != "root only\n" {
			r.fail("%s: the root-only file's content changed", trial)
		}
		_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode()&os.ModeSymlink != 0 && !strings.HasPrefix(fi.Name(), ".") {
				r.fail("%s: session %s is a symbolic link after the run (exit %d): %s", trial, p, code, firstLine(out))
				if p == big {
					r.BytesLost += bigSize
				}
			}
			return nil
		})
	}
}

func statTime(fi os.FileInfo, err error) string {
	if err != nil {
		return err.Error()
	}
	return "mtime now " + fi.ModTime().UTC().Format(time.RFC3339)
}

const swapEnv = "SESSIONFIX_TORTURE_SWAP"

// TestHelperSwapper is not a test: it is the user's process of root-fifo-swap and
// root-link-swap-disclosure. SESSIONFIX_TORTURE_SWAP is "SESSION|SCRATCH|ALT|GOOD": until
// killed it renames over SESSION, in turn, an ALT ("fifo": a new FIFO; else a symbolic link to
// ALT) and a hard link to GOOD, both made in SCRATCH (the same file system), as fast as it can.
func TestHelperSwapper(t *testing.T) {
	spec := os.Getenv(swapEnv)
	if spec == "" {
		t.Skip("helper process of root-fifo-swap and root-link-swap-disclosure (" + swapEnv + ")")
	}
	f := strings.Split(spec, "|")
	session, a, g := f[0], filepath.Join(f[1], ".a"), filepath.Join(f[1], ".g")
	for {
		_ = os.Remove(a)
		if f[2] == "fifo" {
			_ = syscall.Mkfifo(a, 0o644)
		} else {
			_ = os.Symlink(f[2], a)
		}
		_ = os.Rename(a, session)
		_ = os.Remove(g)
		_ = os.Link(f[3], g)
		_ = os.Rename(g, session)
	}
}

// swapper starts the user's TestHelperSwapper exchanging session with alt ("fifo", or a link to
// alt) and good; the returned stop kills it.
func (a *attacker) swapper(t *testing.T, session, scratch, alt, good string) (stop func()) {
	cmd := a.command(a.helper, "-test.run=^TestHelperSwapper$")
	cmd.Env = append(cmd.Env, swapEnv+"="+strings.Join([]string{session, scratch, alt, good}, "|"))
	must(t, cmd.Start())
	return func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

// smallSession is the user's Qwen home holding one session (a fixture's), the session path, a
// scratch directory of theirs on the same file system and a copy of the session's content.
func smallSession(h *harness, a *attacker, name string) (dir, session, scratch, good string) {
	t := h.t
	ud := a.userDir(t, name)
	dir = filepath.Join(ud, "dot-qwen")
	src := "../../fixtures/qwen-real/dot-qwen/projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl"
	session = filepath.Join(dir, "projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl")
	must(t, os.MkdirAll(filepath.Dir(session), 0o755))
	copyFile(t, src, session, 0o644)
	scratch = filepath.Join(ud, "scratch")
	must(t, os.Mkdir(scratch, 0o755))
	good = filepath.Join(ud, "good.jsonl")
	copyFile(t, src, good, 0o644)
	a.own(t, ud)
	return dir, session, scratch, good
}

// rootFIFOSwap (finding 5): the user exchanges their session with a FIFO in a loop while root
// scans their home. A scan still running after 5 s is a failure; so is one still running 1 s
// after SIGTERM (then killed).
func rootFIFOSwap(h *harness, r *report) {
	t := h.t
	a := newAttacker(h)
	for i := range trialsOf(10) {
		r.Trials++
		dir, session, scratch, good := smallSession(h, a, fmt.Sprintf("f5-%d", i))
		stop := a.swapper(t, session, scratch, "fifo", good)
		time.Sleep(50 * time.Millisecond)
		cmd := exec.Command(a.bin, "scan", dir)
		cmd.Env = append(os.Environ(), "HOME="+filepath.Join(a.base, "root-home"))
		must(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		trial := fmt.Sprintf("trial %d", i)
		select {
		case err := <-done:
			r.note(fmt.Sprintf("exit%d", exitCode(err)))
		case <-time.After(5 * time.Second):
			r.note("past-5s")
			r.fail("%s: root's scan still running after 5 s", trial)
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-done:
				r.note(fmt.Sprintf("sigterm-exit%d", exitCode(err)))
			case <-time.After(time.Second):
				r.note("ignored-sigterm")
				r.fail("%s: root's scan still running 1 s after SIGTERM", trial)
				_ = cmd.Process.Kill()
				<-done
			}
		}
		stop()
	}
}

// rootLinkSwapDisclosure (finding 6): the user exchanges their session with a symlink to a
// root-only session (its names made distinctive: "rootonly.secret") in a loop while root scans
// their home. A scan output naming the root-only file's names is a failure (disclosure).
func rootLinkSwapDisclosure(h *harness, r *report) {
	t := h.t
	a := newAttacker(h)
	for i := range trialsOf(10) {
		r.Trials++
		dir, session, scratch, good := smallSession(h, a, fmt.Sprintf("f6-%d", i))
		b, err := os.ReadFile(good)
		must(t, err)
		victim := filepath.Join(a.rootDir(t, fmt.Sprintf("f6-%d", i)), "secret.jsonl")
		must(t, os.WriteFile(victim, bytes.ReplaceAll(b, []byte("foo.bar"), []byte("rootonly.secret")), 0o600))
		stop := a.swapper(t, session, scratch, victim, good)
		time.Sleep(50 * time.Millisecond)
		code, out, timedOut := a.root(30*time.Second, "scan", dir)
		stop()
		r.note(fmt.Sprintf("exit%d", code))
		if timedOut {
			r.fail("trial %d: scan did not end in 30 s", i)
		}
		if strings.Contains(out, "rootonly.secret") {
			r.note("disclosed")
			r.fail("trial %d: root's scan printed names of a root-only file (exit %d)", i, code)
		}
	}
}

// sbin is the path of a system administration tool (useradd, userdel): from PATH, else
// /usr/sbin or /sbin, which a root shell's PATH may lack (env -i, some cron jobs); the bare
// name when none exists (the exec error then names it).
func sbin(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p
		}
	}
	return name
}

// isExecutable says whether p is a regular file with an execute bit.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
