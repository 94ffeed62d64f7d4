// Command sessionfix-bench measures how sessionfix's cost grows with the store (make bench): it
// generates every JSONL corpus and SQLite database of the bench list (agent/all/allbench: each
// agent room's generator, building from its fixture) in a temp dir, times sessionfix against the
// floor of the same work done by plain tools on the same data, in the same run, and prints ONE
// table, a row's store labelled by its corpus:
//
//	JSONL  scan         vs  cat FILES | wc -l      target ≤ 2.0× wall, CPU ≤ 2.5× (dense: 2.0×), peak RSS < 64 MiB
//	JSONL  fix --apply  vs  cp -r DST DST2 && sync  target ≤ 2.5×, peak RSS < 64 MiB
//
// (each JSONL corpus at its own sizes, or -jsonl's: a realistic corpus at 256 MiB, 1 and 4 GiB,
// a dense one — every record carries names, issue 29 — at 512 MiB; an apply row's
// note gives the run directory's bytes per name rewritten: journal, manifest and recorded
// sites, not the backups)
//
//	SQLite scan         vs  the sqlite3 shell reading the same columns   (see sqlite.go)
//	SQLite fix --apply  vs  the sqlite3 shell's single-transaction UPDATE (see sqlite.go)
//	PostgreSQL scan        vs  psql SELECT of the same column      (see postgres.go)
//	PostgreSQL fix --apply vs  psql's UPDATE of the same rows      target ≤ 3×, RSS < 128 MiB
//
// (-postgres 100000,1000000: chats of the web chat store; the server is $SESSIONFIX_TEST_PG with
// PGPASSWORD, else a private cluster started and stopped with scripts/pgcluster)
//
// Each measurement runs the floor and sessionfix in turn (floor, sessionfix, floor, …, after a
// warm-up of the page cache); the ratio is the median of the per-pair ratios, the times are the
// medians, the RSS the largest of the sessionfix runs (getrusage of the child). A JSONL apply
// turn, floor or sessionfix alike, starts from a fresh synced copy DST of the corpus made
// untimed: sessionfix rewrites DST, the floor copies it (jsonl.go says why both need the copy).
//
// Usage: sessionfix-bench [-bin bin/sessionfix] [-dir DIR] [-jsonl 256,1024,4096] [-sqlite
// 100000,1000000] [-postgres 100000,1000000] [-large] [-runs 3]; sessionfix-bench -generate DIR -size-mib N and
// -generate-sqlite DB -parts N only build a corpus (the engine's first in the list, or the one
// -corpus NAME names). With -dir (BENCH_DIR) the generated SQLite databases are kept there and
// reused by the next run (the JSONL corpora are not). BENCH_DIR and BENCH_LARGE=1 are read by
// the Makefile.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/sessionfix/sessionfix/agent/all/allbench"
)

// config is what every case gets.
type config struct {
	Bin      string // absolute path of the sessionfix binary
	Dir      string // work directory (generated data; removed afterwards unless -keep)
	Keep     bool   // -dir or -keep: generated SQLite databases stay there for the next run
	Large    bool   // BENCH_LARGE=1: the opt-in large cases too
	Runs     int    // floor/sessionfix pairs per measurement (a case may use fewer for huge data)
	Fixtures string // the repository's fixtures/ directory
}

func main() {
	bin := flag.String("bin", "bin/sessionfix", "sessionfix binary to measure")
	dir := flag.String("dir", "", "work directory (default: a new temp dir, removed afterwards)")
	fixtures := flag.String("fixtures", "fixtures", "the repository's fixtures directory")
	jsonlSizes := flag.String("jsonl", "256,1024,4096", "JSONL corpus sizes in MiB (comma-separated; empty: none)")
	sqliteSizes := flag.String("sqlite", "100000,1000000", "SQLite database sizes in parts (comma-separated; empty: none); -large adds 10000000")
	pgSizes := flag.String("postgres", "100000,1000000", "PostgreSQL database sizes in chats (comma-separated; empty: none); the server: $SESSIONFIX_TEST_PG, else a private cluster (scripts/pgcluster)")
	large := flag.Bool("large", os.Getenv("BENCH_LARGE") == "1", "also the opt-in large cases (BENCH_LARGE=1)")
	runs := flag.Int("runs", 3, "floor/sessionfix pairs per measurement")
	keep := flag.Bool("keep", false, "keep the work directory")
	generate := flag.String("generate", "", "only generate a JSONL corpus of -size-mib MiB into this directory and exit")
	sizeMiB := flag.Int64("size-mib", 512, "with -generate: the corpus size in MiB")
	genSQLite := flag.String("generate-sqlite", "", "only generate a SQLite database (agent/all/allbench) of -parts parts at this path (it must not exist) and exit")
	genParts := flag.Int("parts", 1_000_000, "with -generate-sqlite: the number of parts")
	corpus := flag.String("corpus", "", "with -generate or -generate-sqlite: the corpus of agent/all/allbench by name (default: the engine's first); otherwise: measure only that corpus")
	flag.Parse()
	if *genSQLite != "" {
		c, err := allbench.SQLiteNamed(*corpus)
		if err != nil {
			fatal(err)
		}
		st, err := c.Generate(context.Background(), *genSQLite, *genParts)
		if err != nil {
			fatal(err)
		}
		fmt.Printf("database %s: %s\n", *genSQLite, st.Summary)
		return
	}
	if *generate != "" {
		c, err := allbench.JSONLNamed(*corpus)
		if err == nil {
			err = generateOnly(c, *generate, *fixtures, *sizeMiB)
		}
		if err != nil {
			fatal(err)
		}
		return
	}
	js, err := parseSizes(*jsonlSizes)
	if err != nil {
		fatal(fmt.Errorf("-jsonl: %w", err))
	}
	sq, err := parseSizes(*sqliteSizes)
	if err != nil {
		fatal(fmt.Errorf("-sqlite: %w", err))
	}
	if *large && *sqliteSizes != "" {
		sq = append(sq, 10_000_000)
	}
	cfg := config{Large: *large, Runs: max(1, *runs), Fixtures: *fixtures, Keep: *keep || *dir != ""}
	if cfg.Bin, err = filepath.Abs(*bin); err != nil {
		fatal(err)
	}
	if _, err := os.Stat(cfg.Bin); err != nil {
		fatal(fmt.Errorf("sessionfix binary: %w (make build first)", err))
	}
	cfg.Dir = *dir
	if cfg.Dir == "" {
		if cfg.Dir, err = os.MkdirTemp("", "sessionfix-bench-"); err != nil {
			fatal(err)
		}
		if !*keep {
			defer os.RemoveAll(cfg.Dir)
		}
	} else if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		fatal(err)
	}
	var rows []Row
	fail := false
	jsonlSet := false // -jsonl given: its sizes for every corpus
	flag.Visit(func(f *flag.Flag) { jsonlSet = jsonlSet || f.Name == "jsonl" })
	for _, c := range allbench.JSONL {
		if *corpus != "" && c.Name != *corpus {
			continue
		}
		sizes := js
		if c.SizesMiB != nil && !jsonlSet {
			sizes = c.SizesMiB
		}
		for _, mib := range sizes {
			r, err := jsonlRows(cfg, c, mib)
			rows = append(rows, r...)
			if err != nil {
				fmt.Fprintf(os.Stderr, "sessionfix-bench: %s %d MiB: %v\n", c.Store, mib, err)
				fail = true
			}
		}
	}
	for _, c := range allbench.SQLite {
		if *corpus != "" && c.Name != *corpus {
			continue
		}
		for _, parts := range sq {
			r, err := sqliteRows(cfg, c, parts)
			rows = append(rows, r...)
			if err != nil {
				fmt.Fprintf(os.Stderr, "sessionfix-bench: %s %d parts: %v\n", c.Store, parts, err)
				fail = true
			}
		}
	}
	if pg, err := parseSizes(*pgSizes); err != nil {
		fatal(fmt.Errorf("-postgres: %w", err))
	} else if len(pg) > 0 && *corpus == "" {
		srv, err := startPG(cfg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "sessionfix-bench: the PostgreSQL rows are not run: %v\n", err)
			fail = true
		} else {
			for _, n := range pg {
				r, err := postgresRows(cfg, srv, n)
				rows = append(rows, r...)
				if err != nil {
					fmt.Fprintf(os.Stderr, "sessionfix-bench: postgres %d chats: %v\n", n, err)
					fail = true
				}
			}
			srv.stop()
		}
	}
	fmt.Printf("\nsessionfix-bench: %d cores (GOMAXPROCS %d), %s/%s, %d pairs per measurement (fewer where the row says); "+
		"times are medians, ratios the median of per-pair ratios, warm page cache; on a shared machine expect noise.\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, cfg.Runs)
	printTable(os.Stdout, rows)
	if fail {
		os.Exit(1)
	}
}

func parseSizes(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad size %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "sessionfix-bench:", err)
	os.Exit(1)
}
