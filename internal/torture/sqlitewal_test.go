package torture

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/mattn/go-sqlite3" // the agent helper process's own SQLite

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
)

// The WAL-mode SQLite scenarios, and an agent writing to a SQLite store while it is fixed
// (review8 D1: the apply gave its POSIX locks away mid-transaction by closing a descriptor of
// the main file; an agent's row was lost).
func init() {
	scenarios = append(scenarios,
		scenario{"kill-fix-sqlite-wal", killFixSQLiteWAL},
		scenario{"writer-inserts-during-sqlite-fix", writerInsertsDuringSQLiteFix},
	)
}

// agentStateRow is the part the agent helper keeps updating: a text part, no name site.
const agentStateRow = "prt_agentstate0000000000000000"

// agentRowPrefix starts the id of every part the agent helper inserts.
const agentRowPrefix = "prt_agentrow"

// walHeader reports whether the main file's header says WAL (bytes 18 and 19 = 2).
func walHeader(db string) bool {
	f, err := os.Open(db)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 20)
	if _, err := io.ReadFull(f, b); err != nil {
		return false
	}
	return b[18] == 2 && b[19] == 2
}

// dumpText is sqlitetest.Dump into a string.
func dumpText(db string) (string, error) {
	var b bytes.Buffer
	err := sqlitetest.Dump(context.Background(), db, &b)
	return b.String(), err
}

// logOnlyDump copies the main file and its -wal (not the -shm: SQLite rebuilds the wal-index
// from the log) to a new directory and dumps the copy: a log that is not a valid log of the
// main file shows up as a different dump or an error.
func logOnlyDump(h *harness, db string) (string, error) {
	dir := h.t.TempDir()
	cp := filepath.Join(dir, filepath.Base(db))
	for _, suf := range []string{"", "-wal"} {
		b, err := os.ReadFile(db + suf)
		if os.IsNotExist(err) && suf != "" {
			continue
		}
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(cp+suf, b, 0o644); err != nil {
			return "", err
		}
	}
	return sqlitetest.DumpSHA256(context.Background(), cp)
}

// killFixSQLiteWAL: SIGKILL at a random instant of fix on a WAL-mode database (built like
// kill-fix-sqlite's, 3000 parts: the apply takes about a second). The kill leaves the -wal and
// -shm beside it; the database read through them is old or new (every row: the dump), its
// -wal alone (the -shm dropped) gives the same content, integrity_check says ok; undo --last
// then restores the pre-image dump exactly (or says there is nothing to undo when the kill came
// before the journal, and the database is the pre-image), and the store stays in WAL mode.
func killFixSQLiteWAL(h *harness, r *report) {
	ctx := context.Background()
	db0, oldDump, newDump, dur := buildSQLiteCorpus(h, true, 20000)
	if !walHeader(db0) {
		h.t.Fatalf("the WAL corpus %s is not in WAL mode", db0)
	}
	fmt.Printf("torture: kill-fix-sqlite-wal: a complete fix takes %s\n", dur.Round(time.Millisecond))
	for i := range trialsOf(20) {
		r.Trials++
		trial := fmt.Sprintf("sqlite-wal trial %d", i)
		dir, state := freshDB(h, db0)
		db := filepath.Join(dir, "opencode.db")
		cmd, _ := h.start("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir)
		time.Sleep(time.Duration(rand.Int64N(int64(dur) + 1)))
		_ = cmd.Process.Kill()
		r.note(fmt.Sprintf("exit%d", exitCode(cmd.Wait())))
		if fi, err := os.Stat(db + "-wal"); err == nil && fi.Size() > 0 {
			r.note("wal-left")
		}
		if _, err := os.Stat(db + "-shm"); err == nil {
			r.note("shm-left")
		}
		after := ""
		if d, err := logOnlyDump(h, db); err != nil {
			r.fail("%s: read of the main file and its -wal after the kill: %v", trial, err)
		} else {
			after = d
		}
		switch d, err := sqlitetest.DumpSHA256(ctx, db); {
		case err != nil:
			r.fail("%s: read after the kill: %v", trial, err)
		case d != oldDump && d != newDump:
			r.fail("%s: the database is neither old nor new after the kill", trial)
		case after != "" && d != after:
			r.fail("%s: the main file and its -wal without the -shm hold other content than with it", trial)
		case d == newDump:
			r.note("new")
		default:
			r.note("old")
		}
		if ok, err := sqlite.IntegrityCheck(ctx, db); err != nil || ok != "ok" {
			r.fail("%s: integrity_check after the kill: %q %v", trial, ok, err)
		}
		code, out := h.sessionfix("undo", "--last", "--state-dir", state)
		switch {
		case strings.Contains(out, "changes left to undo") || strings.Contains(out, "no such run"):
			r.note("nothing-to-undo")
		case code == 0:
			r.note("undone")
		default:
			r.fail("%s: undo exit %d: %s", trial, code, out)
		}
		if d, err := sqlitetest.DumpSHA256(ctx, db); err != nil || d != oldDump {
			r.fail("%s: after undo (exit %d: %s) the database is not the original (%v)", trial, code, strings.TrimSpace(out), err)
		}
		if ok, err := sqlite.IntegrityCheck(ctx, db); err != nil || ok != "ok" {
			r.fail("%s: integrity_check after undo: %q %v", trial, ok, err)
		}
		if !walHeader(db) {
			r.fail("%s: after undo the database is no longer in WAL mode", trial)
		}
	}
}

// TestHelperSQLiteAgent is not a test: it is the agent process of
// writer-inserts-during-sqlite-fix. Until its standard input ends it repeats, each through a
// new connection (open, statement, close, as a short-lived agent command does) with a busy
// timeout of 0 (a locked database is an error; the next round tries again): insert a part,
// read the session count, update agentStateRow's text. No connection is kept open or waits: the
// close of a WAL database's last connection (an EXCLUSIVE lock on the main file obtained)
// checkpoints and deletes the -wal and -shm, so only the locks of fix's own connection keep
// a close from doing that in the middle of fix's transaction. It prints
// "row <id>" or "state <n>" once each commit returned, "err <message>" otherwise.
func TestHelperSQLiteAgent(t *testing.T) {
	path := os.Getenv("SESSIONFIX_TORTURE_AGENT_DB")
	if path == "" {
		t.Skip("helper process of writer-inserts-during-sqlite-fix (SESSIONFIX_TORTURE_AGENT_DB)")
	}
	dsn := "file:" + path + "?mode=rw&_busy_timeout=0"
	var stop atomic.Bool
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop.Store(true)
	}()
	w := bufio.NewWriter(os.Stdout)
	shell := os.Getenv("SESSIONFIX_TORTURE_AGENT_SHELL")
	// run runs one statement (no parameters: the literals are the agent's own, quote-free)
	// through a new connection: the driver's SQLite, or with shell the sqlite3 shell's.
	run := func(stmt string) error {
		if shell != "" {
			out, err := exec.Command(shell, "-bail", path, "PRAGMA busy_timeout=0;", stmt+";", "SELECT 'committed';").CombinedOutput()
			if err != nil || !bytes.Contains(out, []byte("committed")) {
				return fmt.Errorf("sqlite3: %v: %s", err, bytes.TrimSpace(out))
			}
			return nil
		}
		db, err := sqlx.Open("sqlite3", dsn)
		if err == nil {
			_, err = db.Exec(stmt)
			db.Close()
		}
		return err
	}
	for n := 1; !stop.Load(); n++ {
		id := fmt.Sprintf("%s%06d", agentRowPrefix, n)
		if err := run(fmt.Sprintf(`INSERT INTO part VALUES ('%s', 'msg_legacy00000000000000000002', 'ses_legacy00000000000000000001', %d, %d, '{"type":"text","text":"agent row %d"}')`,
			id, 1800000000000+n, 1800000000000+n, n)); err != nil {
			fmt.Fprintln(w, "err insert", err)
		} else {
			fmt.Fprintln(w, "row", id)
		}
		if err := run("SELECT count(*) FROM session"); err != nil {
			fmt.Fprintln(w, "err read", err)
		}
		if err := run(fmt.Sprintf(`UPDATE part SET data = '{"type":"text","text":"agent state %d"}' WHERE id = '%s'`, n, agentStateRow)); err != nil {
			fmt.Fprintln(w, "err update", err)
		} else {
			fmt.Fprintln(w, "state", n)
		}
		w.Flush()
		time.Sleep(time.Duration(1+rand.IntN(3)) * time.Millisecond)
	}
	w.Flush()
	os.Exit(0)
}

// withoutAgent takes the agent's changes out of a dump: its inserted parts' lines removed and
// agentStateRow's line put back as it is in base (the pre-image dump).
func withoutAgent(dump, base string) string {
	stateLine := ""
	for _, l := range strings.SplitAfter(base, "\n") {
		if strings.Contains(l, "'"+agentStateRow+"'") {
			stateLine = l
		}
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(dump, "\n") {
		switch {
		case strings.Contains(l, "'"+agentRowPrefix):
		case strings.Contains(l, "'"+agentStateRow+"'"):
			b.WriteString(stateLine)
		default:
			b.WriteString(l)
		}
	}
	return b.String()
}

// agentKept checks that every part the agent committed, and its last committed state, are in
// the dump; it counts the lost rows' bytes.
func agentKept(r *report, trial, when, dump string, rows []string, state int) {
	lost := 0
	for _, id := range rows {
		if !strings.Contains(dump, "'"+id+"'") {
			lost++
			r.BytesLost += int64(len(id))
		}
	}
	if lost > 0 {
		r.fail("%s: %s: %d of the %d parts the agent committed are not in the database", trial, when, lost, len(rows))
	}
	if state > 0 && !strings.Contains(dump, fmt.Sprintf(`agent state %d"}`, state)) {
		r.fail("%s: %s: the agent's last committed update (state %d) is not in the database", trial, when, state)
	}
}

// writerInsertsDuringSQLiteFix: an agent process (TestHelperSQLiteAgent) inserts parts, reads
// through short-lived connections and updates an unrelated part while fix --apply rewrites a
// WAL-mode and a rollback-journal opencode database (the latter small enough for SQLite's page
// cache: no spill takes the locks again, review8 D1). fix exits 0 having rewritten the store,
// or 4 having refused it as in use; every row the agent committed is in the database after fix
// and after undo; apart from the agent's rows the database is the post-image (exit 0) or the
// pre-image (exit 4), and after undo the pre-image; integrity_check says ok.
func writerInsertsDuringSQLiteFix(h *harness, r *report) {
	shell, _ := exec.LookPath("sqlite3")
	for _, mode := range []struct {
		name  string
		wal   bool
		parts int
		shell bool // the agent's SQLite is the sqlite3 shell's (Debian 12: 3.40), not the driver's
	}{{"wal", true, 20000, false}, {"wal-sqlite3-shell", true, 20000, true}, {"rollback-journal", false, 800, false}} {
		if mode.shell && shell == "" {
			r.note("skipped-wal-sqlite3-shell-not-on-PATH")
			fmt.Printf("torture: writer-inserts-during-sqlite-fix (wal-sqlite3-shell) skipped: no sqlite3 shell on PATH\n")
			continue
		}
		db0, _, _, dur := buildSQLiteCorpus(h, mode.wal, mode.parts)
		oldText, err := dumpText(db0)
		if err != nil {
			h.t.Fatal(err)
		}
		dir, state := freshDB(h, db0)
		if code, out := h.sessionfix("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir); code != 0 {
			h.t.Fatalf("reference fix (%s): exit %d: %s", mode.name, code, out)
		}
		newText, err := dumpText(filepath.Join(dir, "opencode.db"))
		if err != nil {
			h.t.Fatal(err)
		}
		fmt.Printf("torture: writer-inserts-during-sqlite-fix (%s): a complete fix takes %s\n", mode.name, dur.Round(time.Millisecond))
		for i := range trialsOf(6) {
			r.Trials++
			trial := fmt.Sprintf("%s trial %d", mode.name, i)
			dir, state := freshDB(h, db0)
			db := filepath.Join(dir, "opencode.db")
			agent := exec.Command(os.Args[0], "-test.run=^TestHelperSQLiteAgent$", "-test.count=1")
			agent.Env = append(os.Environ(), "SESSIONFIX_TORTURE_AGENT_DB="+db)
			if mode.shell {
				agent.Env = append(agent.Env, "SESSIONFIX_TORTURE_AGENT_SHELL="+shell)
			}
			stdin, err := agent.StdinPipe()
			if err != nil {
				h.t.Fatal(err)
			}
			var aout bytes.Buffer
			agent.Stdout, agent.Stderr = &aout, &aout
			// Even trials: the agent is writing when fix starts (a WAL store's -wal then holds
			// frames: the apply backs it up through the online backup API). Odd trials: it
			// starts at a random instant of fix (a WAL store's -wal is empty when the apply
			// begins: the main file is copied through a descriptor of fix's own, D1's path).
			var fix *exec.Cmd
			var out *bytes.Buffer
			if i%2 == 1 {
				fix, out = h.start("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir)
				time.Sleep(time.Duration(rand.Int64N(int64(dur) + 1)))
			}
			if err := agent.Start(); err != nil {
				h.t.Fatal(err)
			}
			if i%2 == 0 {
				time.Sleep(time.Duration(rand.Int64N(int64(dur)/4 + 1)))
				fix, out = h.start("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir)
			}
			code := exitCode(fix.Wait())
			time.Sleep(50 * time.Millisecond) // the agent writes on after fix exited
			stdin.Close()
			if err := agent.Wait(); err != nil {
				r.fail("%s: agent: %v: %s", trial, err, aout.String())
				continue
			}
			var rows []string
			last, errs := 0, 0
			for _, l := range strings.Split(aout.String(), "\n") {
				switch f := strings.Fields(l); {
				case len(f) == 2 && f[0] == "row":
					rows = append(rows, f[1])
				case len(f) == 2 && f[0] == "state":
					last, _ = strconv.Atoi(f[1])
				case len(f) > 0 && f[0] == "err":
					errs++
				}
			}
			if errs > 0 {
				r.note("agent-errors")
			}
			if len(rows) == 0 {
				r.note("agent-wrote-nothing")
			}
			r.note(fmt.Sprintf("%s-exit%d", mode.name, code))
			after, err := dumpText(db)
			if err != nil {
				r.fail("%s: read after fix: %v", trial, err)
				continue
			}
			agentKept(r, trial, fmt.Sprintf("after fix (exit %d)", code), after, rows, last)
			switch rest := withoutAgent(after, oldText); {
			case code == 0 && rest == newText:
			case code == 4 && rest == oldText:
			default:
				r.fail("%s: fix exit %d and, apart from the agent's rows, the database is %s: %s", trial, code,
					map[bool]string{true: "the pre-image", false: "neither the pre- nor the post-image"}[rest == oldText], strings.TrimSpace(out.String()))
			}
			if ok, err := sqlite.IntegrityCheck(context.Background(), db); err != nil || ok != "ok" {
				r.fail("%s: integrity_check after fix: %q %v", trial, ok, err)
			}
			ucode, uout := h.sessionfix("undo", "--last", "--state-dir", state)
			if ucode != 0 && !strings.Contains(uout, "changes left to undo") && !strings.Contains(uout, "no such run") {
				r.fail("%s: undo exit %d: %s", trial, ucode, uout)
			}
			undone, err := dumpText(db)
			if err != nil {
				r.fail("%s: read after undo: %v", trial, err)
				continue
			}
			agentKept(r, trial, "after undo", undone, rows, last)
			if withoutAgent(undone, oldText) != oldText {
				r.fail("%s: after undo (exit %d), apart from the agent's rows, the database is not the pre-image", trial, ucode)
			} else if len(rows) > 0 {
				r.note("undo-kept-rows")
			}
			if ok, err := sqlite.IntegrityCheck(context.Background(), db); err != nil || ok != "ok" {
				r.fail("%s: integrity_check after undo: %q %v", trial, ok, err)
			}
		}
	}
}
