package main

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PostgreSQL targets (issue 28 item 5): fix --apply at most 3× psql's own UPDATE of the same
// rows, memory flat (the RSS target of the SQLite rows).
const (
	pgScanTarget  = 3.0
	pgApplyTarget = 3.0
	pgRSSTarget   = 128 << 20
)

// pgServer is the server the PostgreSQL rows run on: $SESSIONFIX_TEST_PG (with PGPASSWORD), else
// a private cluster of scripts/pgcluster in the work directory (stopped by stop).
type pgServer struct {
	admin string // URL of the postgres database, without password
	env   []string
	stop  func()
	data  string // the cluster's data directory when known (the server's CPU is then measured)
}

func startPG(cfg config) (*pgServer, error) {
	if u := os.Getenv("SESSIONFIX_TEST_PG"); u != "" {
		return &pgServer{admin: u, env: os.Environ(), stop: func() {}, data: os.Getenv("SESSIONFIX_BENCH_PGDATA")}, nil
	}
	script := filepath.Join(filepath.Dir(cfg.Fixtures), "scripts", "pgcluster")
	dir, err := pgClusterDir(cfg.Dir)
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(script, "start", dir).Output()
	if err != nil {
		return nil, fmt.Errorf("%s start: %w (set SESSIONFIX_TEST_PG to a server instead)", script, err)
	}
	s := &pgServer{env: os.Environ(), stop: func() { _ = exec.Command(script, "stop", dir).Run() }, data: filepath.Join(dir, "data")}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "SESSIONFIX_TEST_PG":
			s.admin = v
		case "PGPASSWORD":
			s.env = append(s.env, "PGPASSWORD="+v)
		}
	}
	if s.admin == "" {
		s.stop()
		return nil, fmt.Errorf("%s start printed no URL", script)
	}
	return s, nil
}

// pgClusterDir is the directory scripts/pgcluster makes the private cluster in, under the work
// directory dir. As root the cluster is made and run as nobody (initdb refuses root), which must
// pass through dir to reach it: dir is made 0711 (traversable, not listable; os.MkdirTemp makes
// it 0700, and initdb then failed with "could not open file …/pgcluster/pw: Permission denied").
func pgClusterDir(dir string) (string, error) {
	if os.Geteuid() == 0 {
		if err := os.Chmod(dir, 0o711); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "pgcluster"), nil
}

// cpu returns the CPU time (user + system) the server's processes have spent so far: the
// postmaster's own and its reaped children's (a backend that ended: /proc/PID/stat's cutime
// and cstime) and its live children's, read from /proc (Linux; clock ticks of 1/100 s). The
// background processes (checkpointer, autovacuum, WAL writer) are counted too: a run is
// charged what the server did while it ran. nil when the data directory is not known.
func (s *pgServer) cpu() func() (time.Duration, error) {
	if s.data == "" {
		return nil
	}
	return func() (time.Duration, error) {
		b, err := os.ReadFile(filepath.Join(s.data, "postmaster.pid"))
		if err != nil {
			return 0, err
		}
		pid, _, _ := strings.Cut(string(b), "\n")
		ticks := func(pid string, fields ...int) int64 {
			st, err := os.ReadFile("/proc/" + pid + "/stat")
			if err != nil {
				return 0
			}
			// after "PID (comm) ": field 3 (state) is f[0]
			i := strings.LastIndexByte(string(st), ')')
			f := strings.Fields(string(st[i+1:]))
			var n int64
			for _, k := range fields {
				if k-3 < len(f) {
					v, _ := strconv.ParseInt(f[k-3], 10, 64)
					n += v
				}
			}
			return n
		}
		total := ticks(pid, 14, 15, 16, 17)
		tasks, _ := filepath.Glob("/proc/" + pid + "/task/*/children")
		for _, t := range tasks {
			kids, _ := os.ReadFile(t)
			for _, k := range strings.Fields(string(kids)) {
				total += ticks(k, 14, 15)
			}
		}
		return time.Duration(total) * 10 * time.Millisecond, nil
	}
}

// cpuNote says the CPU of a pair's medians: sessionfix's and the server's during it, the
// floor's and the server's during it.
func cpuNote(r pairResult, floor string) string {
	if r.sfServer == 0 && r.floorServer == 0 {
		return fmt.Sprintf("CPU %.2f× floor CPU (client processes only)", r.cpuRatio)
	}
	sf := r.sfCPU + r.sfServer
	fl := r.floorCPU + r.floorServer
	return fmt.Sprintf("CPU: sessionfix %.1fs + server %.1fs = %.1fs, %s %.1fs + server %.1fs = %.1fs (%.2f×)",
		r.sfCPU.Seconds(), r.sfServer.Seconds(), sf.Seconds(), floor, r.floorCPU.Seconds(), r.floorServer.Seconds(), fl.Seconds(), sf.Seconds()/fl.Seconds())
}

// db is the URL of database name on the server.
func (s *pgServer) db(name string) string {
	u, _ := url.Parse(s.admin)
	u.Path = "/" + name
	return u.String()
}

// psql runs sql (psql -c, or a file with -f when sql starts with "@") on database name.
func (s *pgServer) psql(name, sql string) (string, error) {
	args := []string{"-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", s.db(name)}
	if f, ok := strings.CutPrefix(sql, "@"); ok {
		args = append(args, "-f", f)
	} else {
		args = append(args, "-c", sql)
	}
	cmd := exec.Command("psql", args...)
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("psql %s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// The bench's rows: chats as the web chat store of the agent list writes them (its chat and
// chat_message tables, as pg_dump -s shows them in the repository's fixtures), each chat.chat with
// one call of lit_literature.search_pubmed in its history and its messages list (two name sites).
const (
	pgOldName = `"name": "lit_literature.search_pubmed"`
	pgNewName = `"name": "lit_literature_search_pubmed_138667s"`
)

const pgSchema = `CREATE TABLE chat (id character varying PRIMARY KEY, user_id character varying, title text, chat json,
 created_at bigint, updated_at bigint, share_id text UNIQUE, archived boolean, pinned boolean, meta json DEFAULT '{}'::json,
 variables json, folder_id text, tasks json, summary text, current_message_id text, last_read_at bigint, timer_at bigint);
CREATE TABLE chat_message (id text PRIMARY KEY, chat_id text NOT NULL REFERENCES chat(id) ON DELETE CASCADE, user_id text,
 role text NOT NULL, parent_id text, content json, output json, model_id text, files json, sources json, embeds json, meta json,
 done boolean, status_history json, error json, usage json, context_summary text, created_at bigint, updated_at bigint);
CREATE INDEX ix_chat_message_chat_id ON chat_message (chat_id);`

func pgGenerateSQL(rows int64) string {
	return fmt.Sprintf(`INSERT INTO chat (id, user_id, title, chat, created_at, updated_at, archived, pinned, meta)
SELECT 'c' || lpad(g::text, 8, '0'), 'u-' || (g %% 97), 'chat ' || g,
 ('{"id": "", "title": "chat ' || g || '", "models": ["gpt-4.1"], "params": {}, "history": {"messages": {"m-' || g || '": {"id": "m-' || g || '", "parentId": null, "childrenIds": [], "role": "assistant", "content": "Found 2 papers.", "model": "gpt-4.1", "done": true, "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_' || g || '", `+pgOldName+`, "arguments": "{\"query\": \"CRISPR off-target\", \"max\": 3}", "status": "completed"}, {"type": "function_call_output", "id": "fco_1", "call_id": "call_' || g || '", "output": [{"type": "input_text", "text": "PMID:1,PMID:2"}], "status": "completed"}]}}, "currentId": "m-' || g || '"}, "messages": [{"id": "m-' || g || '", "role": "assistant", "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_' || g || '", `+pgOldName+`, "arguments": "{}", "status": "completed"}]}]}')::json,
 1764975600 + g, 1764975600 + g, false, false, '{}'
FROM generate_series(1, %d) g`, rows)
}

// postgresRows measures rows chats, each run on a database of its own built for it (untimed:
// the schema, the rows, VACUUM ANALYZE, CHECKPOINT) and dropped before the next is built, so
// that the disk holds one database at a time (a 1M-chat database is ~1.3 GB before a run and
// ~4 GB after sessionfix's, with its backup table; a template and two copies filled a disk
// with 11 GB free):
//
//	scan         vs  psql SELECT sum(length(chat::text)) FROM chat (the text sessionfix reads)
//	fix --apply  vs  psql UPDATE chat SET chat = replace(chat::text, old, new)::json: psql's own
//	                 UPDATE of the same rows to the same text, one transaction (checked equal:
//	                 a checksum of every row's text in key order, taken after each run, untimed)
//
// fix --apply does more than the floor: the old text of each row into sessionfix_backup, a
// transaction per 500 rows, the verify pass after the last commit.
func postgresRows(cfg config, srv *pgServer, rows int64) ([]Row, error) {
	base := fmt.Sprintf("sfbench_%d", rows)
	size := strings.Replace(partsLabel(rows), "parts", "chats", 1)
	store := "postgres (chat json)"
	drop := func(name string) error {
		_, err := srv.psql("postgres", "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		return err
	}
	current := "" // the one database that exists, dropped before the next is built
	dropCurrent := func() error {
		if current == "" {
			return nil
		}
		err := drop(current)
		current = ""
		return err
	}
	defer dropCurrent()
	build := func(name string) error {
		if err := dropCurrent(); err != nil {
			return err
		}
		if err := srv.enoughDisk(rows); err != nil {
			return fmt.Errorf("database %s not built: %w", name, err)
		}
		if err := drop(name); err != nil {
			return err
		}
		if _, err := srv.psql("postgres", "CREATE DATABASE "+name); err != nil {
			return err
		}
		current = name
		for _, sql := range []string{pgSchema, pgGenerateSQL(rows), "VACUUM ANALYZE chat", "CHECKPOINT"} {
			if _, err := srv.psql(name, sql); err != nil {
				return err
			}
		}
		return nil
	}
	psqlArgv := func(name, sql string) []string {
		return shell(fmt.Sprintf("exec psql -X -q -v ON_ERROR_STOP=1 %q -c %q > /dev/null", srv.db(name), sql))
	}
	// psql and sessionfix get the password from PGPASSWORD, as a user's run would.
	if pw := envValue(srv.env, "PGPASSWORD"); pw != "" {
		os.Setenv("PGPASSWORD", pw)
	}
	runs := cfg.Runs
	if rows >= 1_000_000 {
		runs = 1
	}
	var out []Row

	// scan: one database, read-only, both sides read it in turn.
	fmt.Fprintf(os.Stderr, "postgres %d chats: scan vs psql SELECT (building the database)\n", rows)
	scanDB := base + "_scan"
	if err := build(scanDB); err != nil {
		return out, err
	}
	scanOut := filepath.Join(cfg.Dir, "pg-scan.out")
	sc, err := pairs(pairSpec{n: runs, server: srv.cpu(),
		floor: func(int) []string { return psqlArgv(scanDB, "SELECT sum(length(chat::text)) FROM chat") },
		sf: func(int) []string {
			return shell(fmt.Sprintf("exec %q scan %q > %q", cfg.Bin, srv.db(scanDB), scanOut))
		}})
	if err != nil {
		return out, err
	}
	out = append(out, Row{Store: store, Size: size, Work: "scan", Time: sc.sf, Floor: "psql SELECT", FloorTime: sc.floor,
		Ratio: sc.ratio, Target: pgScanTarget, RSS: sc.maxRSS, RSSTarget: pgRSSTarget, Exit: sc.exit, Note: join(cpuNote(sc, "psql"), pairsNote(runs, cfg.Runs))})

	// fix --apply vs the UPDATE: each run on a database built for it, checked, dropped.
	fmt.Fprintf(os.Stderr, "postgres %d chats: fix --apply vs psql UPDATE of the same rows (a database built for each run)\n", rows)
	update := fmt.Sprintf("UPDATE chat SET chat = replace(chat::text, '%s', '%s')::json", pgOldName, pgNewName)
	state := func(i int) string { return filepath.Join(cfg.Dir, fmt.Sprintf("pg-state-%d", i)) }
	work := func(i int, floor bool) string { return fmt.Sprintf("%s_w%d_%v", base, i, floor) }
	// The text every run leaves: an MD5 over each row's MD5 in key order (one string of the
	// whole column would pass PostgreSQL's 1 GB limit at 1M chats).
	const sumSQL = "SELECT md5(string_agg(md5(chat::text), '' ORDER BY id)) FROM chat"
	sums := map[bool][]string{}
	backups := ""
	after := func(i int, floor bool) error {
		s, err := srv.psql(work(i, floor), sumSQL)
		if err != nil {
			return err
		}
		sums[floor] = append(sums[floor], s)
		if !floor {
			if backups, err = srv.psql(work(i, floor), "SELECT count(*) FROM sessionfix_backup"); err != nil {
				return err
			}
			os.RemoveAll(state(i))
		}
		return dropCurrent()
	}
	ap, err := pairs(pairSpec{n: runs, sfFirst: true, server: srv.cpu(),
		prep: func(i int, floor bool) error {
			os.RemoveAll(state(i))
			return build(work(i, floor))
		},
		sf: func(i int) []string {
			return shell(fmt.Sprintf("exec %q fix --apply --yes --state-dir %q %q > %q", cfg.Bin, state(i), srv.db(work(i, false)), filepath.Join(cfg.Dir, "pg-fix.out")))
		},
		afterSF: func(i int) error { return after(i, false) },
		floor:   func(i int) []string { return psqlArgv(work(i, true), update) },
		afterFl: func(i int) error { return after(i, true) },
	})
	if err != nil {
		return out, err
	}
	// The floor wrote what sessionfix wrote: the same text in every row, in every run.
	note := join(cpuNote(ap, "psql"), pairsNote(runs, cfg.Runs))
	same := len(sums[true]) > 0 && len(sums[true]) == len(sums[false])
	for i := range sums[true] {
		same = same && sums[true][i] == sums[false][i]
	}
	if same {
		note = join(note, "same text as the floor")
	} else {
		note = join(note, "THE FLOOR WROTE OTHER TEXT")
		ap.exit = 99
	}
	note = join(note, backups+" backup rows")
	out = append(out, Row{Store: store, Size: size, Work: "fix --apply", Time: ap.sf, Floor: "psql UPDATE", FloorTime: ap.floor,
		Ratio: ap.ratio, Target: pgApplyTarget, RSS: ap.maxRSS, RSSTarget: pgRSSTarget, Exit: ap.exit, Note: note})
	return out, nil
}

func envValue(env []string, k string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], k+"="); ok {
			return v
		}
	}
	return ""
}

// pgDiskPerChat is the disk a fix --apply run of the bench's chats needs at most, per chat: the
// database before the run, the new version of each row, its backup row and index entries, and
// the WAL written meanwhile (at 100k chats on PostgreSQL 15 the data directory peaked at 640 MB,
// ~6.4 KB a chat, WAL included; at 1M the WAL kept is bounded by max_wal_size).
const pgDiskPerChat = 6 << 10

// enoughDisk fails when the file system of the server's data directory (srv.data, else the
// server's own data_directory when this machine has it) has less room than a database of rows
// chats and a fix --apply run on it need, and says on standard error how much it has; a server
// whose data directory is not here is not checked.
func (s *pgServer) enoughDisk(rows int64) error {
	dir := s.data
	if dir == "" {
		dir, _ = s.psql("postgres", "SHOW data_directory")
	}
	var st syscall.Statfs_t
	if dir == "" || syscall.Statfs(dir, &st) != nil {
		return nil
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	need := rows * pgDiskPerChat
	fmt.Fprintf(os.Stderr, "  disk: %.1f GB free in %s (a run of %d chats needs about %.1f GB)\n", float64(free)/1e9, dir, rows, float64(need)/1e9)
	if free < need {
		return fmt.Errorf("%.1f GB free in %s, a run of %d chats needs about %.1f GB", float64(free)/1e9, dir, rows, float64(need)/1e9)
	}
	return nil
}
