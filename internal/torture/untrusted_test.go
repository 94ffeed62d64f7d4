package torture

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
)

// The SQLite and tampered-run scenarios (issue 9, findings 5 and 8).
func init() {
	scenarios = append(scenarios,
		scenario{"kill-fix-sqlite", killFixSQLite},
		scenario{"tampered-manifest", tamperedManifest},
	)
}

// sqliteCorpus builds (once per harness) a rollback-journal opencode database whose rewrite
// spills out of SQLite's page cache (3000 tool parts of 1.6 KB with a dotted name), so a kill
// in the middle of fix can leave a hot journal; it returns its path, the dump SHA-256 before
// and after a complete fix, and how long that fix takes.
func sqliteCorpus(h *harness) (db, oldDump, newDump string, dur time.Duration) {
	return buildSQLiteCorpus(h, false, 3000)
}

// buildSQLiteCorpus is sqliteCorpus with the journal mode (wal: the database is switched to WAL
// mode, as the agents run it) and the number of 1.6 KB tool parts to rewrite as parameters. The
// database also holds agentStateRow, a text part with no name site (the row the writer
// scenarios' agent updates).
func buildSQLiteCorpus(h *harness, wal bool, parts int) (db, oldDump, newDump string, dur time.Duration) {
	t := h.t
	ctx := context.Background()
	db = filepath.Join(t.TempDir(), "opencode.db")
	var rs []io.Reader
	for _, p := range []string{"../../fixtures/opencode-real/opencode.sql", "../../engine/sqlite/testdata/opencode-legacy.sql"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, bytes.NewReader(b))
	}
	if err := sqlitetest.BuildFromSQL(ctx, db, wal, rs...); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 1500)
	if err := sqlitetest.InsertRows(ctx, db, "part", []string{"id", "message_id", "session_id", "time_created", "time_updated", "data"},
		func(emit func(...any) error) error {
			if err := emit(agentStateRow, "msg_legacy00000000000000000002", "ses_legacy00000000000000000001", int64(1700000003999), int64(1700000003999), `{"type":"text","text":"agent state 0"}`); err != nil {
				return err
			}
			for i := range parts {
				data := fmt.Sprintf(`{"type":"tool","tool":"lit_literature.search_pubmed","callID":"call_bulk%d","state":{"status":"completed","input":{},"output":"%s","title":"","time":{"start":1,"end":2}}}`, i, pad)
				if err := emit(fmt.Sprintf("prt_bulk%06d", i), "msg_legacy00000000000000000002", "ses_legacy00000000000000000001", int64(1700000004000+i), int64(1700000004000+i), data); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
		t.Fatal(err)
	}
	var err error
	if oldDump, err = sqlitetest.DumpSHA256(ctx, db); err != nil {
		t.Fatal(err)
	}
	dir, state := freshDB(h, db)
	start := time.Now()
	if code, out := h.sessionfix("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir); code != 0 {
		t.Fatalf("reference SQLite fix: exit %d\n%s", code, out)
	}
	dur = time.Since(start)
	if newDump, err = sqlitetest.DumpSHA256(ctx, filepath.Join(dir, "opencode.db")); err != nil {
		t.Fatal(err)
	}
	return db, oldDump, newDump, dur
}

// freshDB copies the database into a new directory; it returns the directory and a state dir.
func freshDB(h *harness, db string) (dir, state string) {
	base := h.t.TempDir()
	dir = filepath.Join(base, "opencode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	b, err := os.ReadFile(db)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "opencode.db"), b, 0o644); err != nil {
		h.t.Fatal(err)
	}
	return dir, filepath.Join(base, "state")
}

// killFixSQLite: SIGKILL at a random instant of fix on a rollback-journal database. The
// database is then old or new (or has a hot journal, which a read-only scan reports with exit
// 3); the next undo rolls a hot journal back and leaves exactly the original, with integrity.
func killFixSQLite(h *harness, r *report) {
	ctx := context.Background()
	db0, oldDump, newDump, dur := sqliteCorpus(h)
	for i := range trialsOf(30) {
		r.Trials++
		trial := fmt.Sprintf("sqlite trial %d", i)
		dir, state := freshDB(h, db0)
		db := filepath.Join(dir, "opencode.db")
		cmd, _ := h.start("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir)
		time.Sleep(time.Duration(rand.Int64N(int64(dur) + 1)))
		_ = cmd.Process.Kill()
		r.note(fmt.Sprintf("exit%d", exitCode(cmd.Wait())))
		if _, hot := sqlite.HotJournal(db); hot {
			r.note("hot-journal")
			if code, out := h.sessionfix("scan", dir); code != 3 || !strings.Contains(out, "a crashed writer left a hot journal") {
				r.fail("%s: scan of a hot journal: exit %d: %s", trial, code, out)
			}
		} else if d, err := sqlitetest.DumpSHA256(ctx, db); err != nil {
			r.fail("%s: read after the kill: %v", trial, err)
		} else if d != oldDump && d != newDump {
			r.fail("%s: the database is neither old nor new after the kill", trial)
		}
		code, out := h.sessionfix("undo", "--last", "--state-dir", state)
		switch {
		case strings.Contains(out, "changes left to undo") || strings.Contains(out, "no such run"):
			r.note("nothing-to-undo")
			// killed before the change was journaled: a hot journal is still there for fix
			if code, out := h.sessionfix("fix", "--state-dir", state, "--apply", "--yes", "--quiet", dir); code != 0 {
				r.fail("%s: fix after the kill: exit %d: %s", trial, code, out)
			} else if code, out := h.sessionfix("undo", "--last", "--state-dir", state); code != 0 {
				r.fail("%s: undo of the fix after the kill: exit %d: %s", trial, code, out)
			}
		case code == 0:
			r.note("undone")
		default:
			r.fail("%s: undo exit %d: %s", trial, code, out)
		}
		if _, hot := sqlite.HotJournal(db); hot {
			r.fail("%s: a hot journal is left after undo", trial)
		}
		if d, err := sqlitetest.DumpSHA256(ctx, db); err != nil || d != oldDump {
			r.fail("%s: after undo the database is not the original (%v)", trial, err)
		}
		if ok, err := sqlite.IntegrityCheck(ctx, db); err != nil || ok != "ok" {
			r.fail("%s: integrity_check after undo: %q %v", trial, ok, err)
		}
	}
}

// reseal gives manifest.json (decoded as m) a valid checksum, as someone who knows the scheme
// would: the structural checks must hold without it.
func reseal(path string, m map[string]any) error {
	m["checksum"] = "sha256:" + strings.Repeat("0", 64)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	prefix := []byte("{\n  \"checksum\": \"sha256:")
	sum := sha256.Sum256(b)
	hex.Encode(b[len(prefix):len(prefix)+64], sum[:])
	return os.WriteFile(path, b, 0o600)
}

// forgeBefore records b as the original in a manifest entry's before (decoded), with the
// checksum in the spelling the entry uses — a file rewrite's "fingerprint" (XXH3-128, manifest
// version 4), else "sha256" — as a forger who knows the format would: a checksum added beside
// the recorded one would be refused for that alone ("both recorded"), hiding whether the check
// the variant is about holds.
func forgeBefore(before map[string]any, b []byte) {
	before["size"] = len(b)
	if _, ok := before["fingerprint"]; ok {
		s := xxh3.Hash128(b).Bytes()
		before["fingerprint"] = "xxh3-128:" + hex.EncodeToString(s[:])
		return
	}
	before["sha256"] = sha(b)
}

// tamperedManifest: every way of pointing undo outside the run (store path outside the roots
// or with "..", backup outside the run directory or a symlink, a setuid mode, an edited
// journal line, an edited manifest) is refused (exit 1), and no file changes, inside or
// outside the roots.
func tamperedManifest(h *harness, r *report) {
	fileSum := func(p string) string {
		b, _ := os.ReadFile(p)
		return sha(b)
	}
	variants := []struct {
		name string
		edit func(runDir string, m, f map[string]any, victim string) bool // false: do not reseal
	}{
		{"outside-roots", func(_ string, _, f map[string]any, v string) bool {
			f["store"].(map[string]any)["path"] = v
			f["after"].(map[string]any)["sha256"] = fileSum(v)
			return true
		}},
		{"dotdot", func(_ string, m, f map[string]any, v string) bool {
			root := m["roots"].([]any)[0].(string)
			rel, _ := filepath.Rel(root, v)
			f["store"].(map[string]any)["path"] = root + "/" + rel
			f["after"].(map[string]any)["sha256"] = fileSum(v)
			return true
		}},
		{"backup-outside", func(_ string, _, f map[string]any, v string) bool {
			f["backup"], f["backup_is_link"] = v, false
			b, _ := os.ReadFile(v)
			forgeBefore(f["before"].(map[string]any), b)
			return true
		}},
		{"symlink-backup", func(_ string, _, f map[string]any, v string) bool {
			bk := f["backup"].(string)
			_ = os.Remove(bk)
			_ = os.Symlink(v, bk)
			b, _ := os.ReadFile(v)
			forgeBefore(f["before"].(map[string]any), b)
			return true
		}},
		{"setuid", func(_ string, _, f map[string]any, _ string) bool {
			f["before"].(map[string]any)["mode"] = float64(0o755 | int(os.ModeSetuid))
			return true
		}},
		{"edited-manifest", func(_ string, _, f map[string]any, v string) bool {
			f["store"].(map[string]any)["path"] = v
			return false
		}},
		{"edited-journal", func(runDir string, _, f map[string]any, v string) bool {
			jp := filepath.Join(runDir, "journal.jsonl")
			j, _ := os.ReadFile(jp)
			p := f["store"].(map[string]any)["path"].(string)
			_ = os.WriteFile(jp, bytes.Replace(j, []byte(p), []byte(v), 1), 0o600)
			return true // the manifest itself untouched (resealed as it was)
		}},
	}
	for i := range trialsOf(2) {
		for _, v := range variants {
			r.Trials++
			trial := fmt.Sprintf("%s trial %d", v.name, i)
			dir, state := h.fresh()
			outside := h.t.TempDir()
			victim := filepath.Join(outside, "victim.jsonl")
			_ = os.WriteFile(victim, []byte("{\"victim\":true}\n"), 0o644)
			if code, out := h.sessionfix("fix", "--apply", "--yes", "--quiet", "--state-dir", state, dir); code != 0 {
				r.fail("%s: fix exit %d: %s", trial, code, out)
				continue
			}
			runs, _ := os.ReadDir(filepath.Join(state, "runs"))
			if len(runs) != 1 {
				r.fail("%s: %d runs", trial, len(runs))
				continue
			}
			runDir := filepath.Join(state, "runs", runs[0].Name())
			mp := filepath.Join(runDir, "manifest.json")
			var m map[string]any
			b, _ := os.ReadFile(mp)
			if err := json.Unmarshal(b, &m); err != nil {
				r.fail("%s: %v", trial, err)
				continue
			}
			f := m["files"].([]any)[0].(map[string]any)
			if v.edit(runDir, m, f, victim) {
				if v.name != "edited-journal" {
					if err := reseal(mp, m); err != nil {
						r.fail("%s: %v", trial, err)
					}
				}
			} else {
				nb, _ := json.MarshalIndent(m, "", "  ")
				_ = os.WriteFile(mp, append(nb, '\n'), 0o600)
			}
			inside, out0 := sums(h.t, dir), sums(h.t, outside)
			code, out := h.sessionfix("undo", "--state-dir", state, runs[0].Name())
			if code != 1 || !strings.Contains(out, "nothing was restored") {
				r.fail("%s: undo of a tampered run: exit %d: %s", trial, code, out)
			} else {
				r.note(fmt.Sprintf("refused-exit%d", code))
			}
			if fmt.Sprint(sums(h.t, outside)) != fmt.Sprint(out0) {
				r.fail("%s: a file outside the roots changed", trial)
			}
			if fmt.Sprint(sums(h.t, dir)) != fmt.Sprint(inside) {
				r.fail("%s: a file inside the roots changed", trial)
			}
		}
	}
}
