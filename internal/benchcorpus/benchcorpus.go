// Package benchcorpus is the contract between make bench (cmd/sessionfix-bench) and an agent's
// benchmark corpus generator, as agent is the contract between the engine and an agent
// room: an agent's bench package (agent/<agent>/<agent>bench, in the room) describes
// its corpus with a JSONL or SQLite value, and agent/all/allbench lists them. The bench tool
// names no agent; it measures every listed corpus against the floor of its engine (cat | wc -l
// and cp -r && sync for JSONL; the sqlite3 shell's SELECT and single-transaction UPDATE for
// SQLite) and labels the rows of its one table with Store. It is for make bench and tests only.
package benchcorpus

import "context"

// Stats describes a generated corpus.
type Stats struct {
	// Bytes is the size written (for SQLite: the database file and its -wal).
	Bytes int64
	// Summary is one line for the bench tool's log, e.g. "100 files, 16.0 MiB, 48198 records,
	// 17190 legacy dotted names" or "3000 parts, 3000 events, 450 legacy name sites, 1.4 MiB".
	Summary string
}

// JSONL is a generator of a JSONL session tree (the engine/jsonl engine).
type JSONL struct {
	// Name is the corpus's short id (unique in allbench.JSONL): -corpus NAME picks it for
	// sessionfix-bench -generate.
	Name string
	// Store labels the corpus's rows in the table: the engine and the agent, "JSONL (<Agent>)".
	Store string
	// Fixture is the directory, relative to the repository's fixtures/, whose real records seed
	// the corpus ("<agent>-real/…").
	Fixture string
	// Generate writes a corpus of about bytes bytes (whole records) under dir, which it creates,
	// from the fixture directory fixture (an existing path: fixtures/ + Fixture), in session files
	// of about fileBytes bytes on average; the same arguments give the same bytes. Errors name
	// the file.
	Generate func(dir, fixture string, bytes, fileBytes int64) (Stats, error)
	// SizesMiB are the sizes make bench measures the corpus at; nil: sessionfix-bench's -jsonl
	// sizes (a -jsonl given on the command line applies to every corpus).
	SizesMiB []int64
	// Dense says every record carries names (issue 29): the scan row's CPU target is then the
	// wall target, 2× the floor's CPU, where a corpus of mostly large text and tool output
	// (issue 12) is held to 2.5×.
	Dense bool
}

// SQLite is a generator of one agent's SQLite database (the engine/sqlite engine).
type SQLite struct {
	// Name is the corpus's short id (unique in allbench.SQLite): -corpus NAME picks it for
	// sessionfix-bench -generate-sqlite.
	Name string
	// Store labels the corpus's rows in the table: "SQLite (<agent>)".
	Store string
	// Fixture is the file, relative to the repository's fixtures/, whose schema and row shapes
	// the generator copies ("<agent>-real/<dump>.sql"); the generator embeds what it needs.
	Fixture string
	// File is the database's file name as the agent writes it ("<agent>.db"): sessionfix
	// detects the store by it, and names its backup "<n>-" + File.
	File string
	// Version names the generator's output in the stamp beside a database kept by -dir
	// (BENCH_DIR): change it when Generate writes different rows, so kept databases are rebuilt.
	Version string
	// Generate creates the database at path (it must not exist) with at least parts rows in
	// the agent's largest table, in WAL mode, deterministically.
	Generate func(ctx context.Context, path string, parts int) (Stats, error)
	// FloorScan is the SQL the sqlite3 shell runs as the scan floor: it reads every column
	// sessionfix scans for names ("SELECT sum(length(data)) FROM part; …").
	FloorScan string
	// Rewritten are the columns fix --apply rewrites: the apply floor is one transaction of
	// UPDATEs of the rows whose value there differs after sessionfix's run.
	Rewritten []Column
}

// Column is one table column of a SQLite corpus.
type Column struct {
	Table, Column string
}
