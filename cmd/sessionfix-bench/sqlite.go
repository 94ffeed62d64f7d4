package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/sessionfix/sessionfix/store/sqlite/sqlitebench"
)

// SQLite targets (issue 12 items 2 and 3).
const (
	sqliteScanTarget  = 3.0
	sqliteApplyTarget = 3.0
	sqliteRSSTarget   = 128 << 20
)

// sqliteRows generates an opencode database of parts parts (store/sqlite/sqlitebench: one tool
// part in ten and its two events hold a legacy name) and measures, against the sqlite3 shell on
// the same database in the same run:
//
//	scan         vs  sqlite3 DB "SELECT sum(length(data)) FROM part; … FROM event"
//	fix --apply  vs  sqlite3 DB < update.sql: BEGIN; the UPDATEs of the same rows to the same
//	                 values (taken from a database sessionfix rewrote, untimed); COMMIT
//
// Each apply run (floor or sessionfix) gets a fresh copy of the database, made and synced
// untimed.
func sqliteRows(cfg config, parts int64) ([]Row, error) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		return nil, fmt.Errorf("the sqlite3 shell is the floor: %w", err)
	}
	base := filepath.Join(cfg.Dir, fmt.Sprintf("sqlite-%d", parts))
	defer os.RemoveAll(base)
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, err
	}
	src := filepath.Join(base, "opencode.db")
	fmt.Fprintf(os.Stderr, "SQLite %d parts: generating %s …\n", parts, src)
	t0 := time.Now()
	st, err := sqlitebench.Generate(context.Background(), src, int(parts))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "  %d parts, %d events, %d legacy name sites, %.1f MiB (%s)\n",
		st.Parts, st.Events, st.Legacy, float64(st.Bytes)/(1<<20), time.Since(t0).Round(time.Millisecond))
	size := partsLabel(parts)
	runs, applyRuns := cfg.Runs, cfg.Runs
	if parts >= 1_000_000 {
		applyRuns = 1 // a fresh 1.5 GiB copy per run: the 15-minute budget
	}
	if parts >= 10_000_000 {
		runs = 1
	}
	var rows []Row

	// scan: warm the cache with one floor run, then floor and scan in turn.
	floorScan := []string{"sqlite3", src, "SELECT sum(length(data)) FROM part; SELECT sum(length(data)) FROM event;"}
	if _, err := timeCmd(floorScan...); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "SQLite %d parts: scan vs sqlite3 SELECT\n", parts)
	sc, err := pair(runs, nil, func(int) []string { return floorScan }, func(int) []string {
		return []string{cfg.Bin, "scan", src}
	})
	if err != nil {
		return rows, err
	}
	rows = append(rows, Row{Store: "SQLite (opencode)", Size: size, Work: "scan", Time: sc.sf, Floor: "sqlite3 SELECT", FloorTime: sc.floor,
		Ratio: sc.ratio, Target: sqliteScanTarget, RSS: sc.maxRSS, RSSTarget: sqliteRSSTarget, Exit: sc.exit, Note: pairsNote(runs, cfg.Runs)})

	// The floor's statement: the rows sessionfix changes, with the values it writes.
	ref := filepath.Join(base, "ref.db")
	if err := copyDB(src, ref); err != nil {
		return rows, err
	}
	if r, err := timeCmd(cfg.Bin, "fix", "--apply", "--yes", "--state-dir", filepath.Join(base, "state-ref"), ref); err != nil || r.exit != 0 {
		return rows, fmt.Errorf("fix --apply of the reference copy: exit %d %v", r.exit, err)
	}
	updates := filepath.Join(base, "update.sql")
	n, err := updateSQL(ref, src, updates)
	if err != nil {
		return rows, err
	}
	os.Remove(ref)
	os.RemoveAll(filepath.Join(base, "state-ref"))
	fmt.Fprintf(os.Stderr, "SQLite %d parts: fix --apply vs sqlite3 UPDATE of the same %d rows in one transaction\n", parts, n)
	work := filepath.Join(base, "work.db")
	state := func(i int) string { return filepath.Join(base, fmt.Sprintf("state-%d", i)) }
	prep := func(i int, floor bool) error {
		os.RemoveAll(state(i))
		return copyDB(src, work)
	}
	ap, err := pair(applyRuns, prep, func(int) []string { return shell(fmt.Sprintf("sqlite3 %q < %q", work, updates)) },
		func(i int) []string {
			return []string{cfg.Bin, "fix", "--apply", "--yes", "--state-dir", state(i), work}
		})
	if err != nil {
		return rows, err
	}
	rows = append(rows, Row{Store: "SQLite (opencode)", Size: size, Work: "fix --apply", Time: ap.sf, Floor: "sqlite3 UPDATE", FloorTime: ap.floor,
		Ratio: ap.ratio, Target: sqliteApplyTarget, RSS: ap.maxRSS, RSSTarget: sqliteRSSTarget, Exit: ap.exit, Note: pairsNote(applyRuns, cfg.Runs)})
	return rows, nil
}

func partsLabel(n int64) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM parts", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk parts", n/1000)
	}
	return fmt.Sprintf("%d parts", n)
}

func pairsNote(n, want int) string {
	switch {
	case n == want:
		return ""
	case n == 1:
		return "1 pair"
	}
	return fmt.Sprintf("%d pairs", n)
}

// updateSQL writes to path the script that turns orig into rewritten: BEGIN, one UPDATE per
// row whose data differs (part and event), COMMIT; synchronous=FULL as sessionfix writes. It
// returns the number of UPDATEs.
func updateSQL(rewritten, orig, path string) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "PRAGMA synchronous=FULL;\nBEGIN;")
	n := 0
	for _, t := range []string{"part", "event"} {
		q := fmt.Sprintf("ATTACH '%s' AS o; SELECT 'UPDATE %s SET data=' || quote(a.data) || ' WHERE rowid=' || a.rowid || ';' FROM main.%s a JOIN o.%s b ON a.rowid = b.rowid WHERE a.data IS NOT b.data;",
			orig, t, t, t)
		cmd := exec.Command("sqlite3", rewritten, q)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return n, err
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return n, err
		}
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			w.Write(sc.Bytes())
			w.WriteByte('\n')
			n++
		}
		if err := sc.Err(); err != nil {
			return n, err
		}
		if err := cmd.Wait(); err != nil {
			return n, fmt.Errorf("list the rewritten rows of %s: %w", t, err)
		}
	}
	fmt.Fprintln(w, "COMMIT;")
	if err := w.Flush(); err != nil {
		return n, err
	}
	return n, f.Close()
}

// copyDB copies the database file src (a checkpointed WAL database: the generator closed it)
// to dst, replacing dst and its -wal/-shm, and syncs it.
func copyDB(src, dst string) error {
	for _, p := range []string{dst, dst + "-wal", dst + "-shm", dst + "-journal"} {
		os.Remove(p)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
