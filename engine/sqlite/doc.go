// Package sqlite is the engine for agents' SQLite session stores, each described by a Profile
// (an agent room's, see agent, or a user's JSON profile): it knows no agent. It finds tool-name sites inside JSON columns, rewrites them in place with the same byte-exact
// splicing as the JSONL backend, and undoes a rewrite from its backup (stores.md §3).
//
// A store is described by a Profile: for each table, the key columns, the JSON column, the JSON
// paths of its name sites (with an optional condition such as `$.type == "tool"`), and which
// sites hold permission rules or raw identities (reported, never rewritten). The agent rooms'
// profiles come in through Options.Profiles; Detect picks one from the schema (PRAGMA
// table_info) and ReadProfile reads a JSON profile for any other store. A table or column
// a profile names but the database lacks is reported as a problem, never assumed.
//
// Reading: a connection opened read-only (mode=ro; a WAL database without -wal and -shm through
// a query_only read-write one, so that its close removes the two files again: db.go readMode) reads each table in rowid batches inside one
// read transaction (WAL databases: writers are never blocked) or one short transaction per batch
// (rollback-journal databases: a writer waits at most one batch). Rows are stepped by a small cgo
// reader on the driver connection's own handle (rows.go: a batch of rows copied into a reused
// buffer per crossing, no Go value per column). For a table spec whose site and helper paths are
// plain key chains, a C extractor (extract.go: sfx_batch, one cgo call per 256 rows, in a
// pipeline stage of its own between the row reader and the site goroutine) checks each value in
// one pass and returns where the strings at those paths are (fast.go); the same parser is
// registered on the read connection as the SQL function sessionfix_extract, for the fuzz target
// against SQLite's JSON functions. Every other value is fed to internal/jsonscan one row at a
// time: memory stays flat
// whatever the table size. Payloads starting with the zstd magic (28 b5 2f fd) are reported as
// compressed and never parsed.
//
// Writing (Apply): one BEGIN IMMEDIATE transaction per store with a busy timeout (a store whose
// write lock another process holds longer is refused with store.ErrInUse); while the lock is
// held, a copy of the database is taken into the run directory (the main file copied and
// hashed in one pass when it holds the whole database — in WAL mode beside the row rewrites,
// waited for before the commit —, its descriptor of the main file closed only after the
// connection, as closing it drops every POSIX lock the process holds on the file, SQLite's
// too —, else through the SQLite online backup API: backup.go); each
// changed row is re-read, its name tokens are checked byte for byte and spliced (nothing else
// in the JSON text changes, the storage class TEXT/BLOB is kept), and written back by one
// SELECT and one UPDATE per table prepared on the write connection's handle (rows.go); PRAGMA
// integrity_check must say "ok" before COMMIT. UPDATE triggers of the agent's schema (one that bumps
// an updated_at column) are kept from changing any other column, so only the planned JSON values
// change. Undo (Restore) puts the database file's bytes back when it is still exactly the file the
// run left and no process holds it open for writing (filerestore.go); otherwise it checks that
// every rewritten value still hashes to what the run wrote and copies the original values back
// from the backup under the write lock, saying why the file's bytes differ; a live WAL database
// file is never copied byte-wise.
//
// sqlite is the only product package that uses the SQLite driver (github.com/mattn/go-sqlite3,
// through github.com/jmoiron/sqlx; rows.go and extract.go call the C API of the SQLite the
// driver links in); the test-only engine/sqlite/sqlitetest (building, dumping and locking
// databases for tests, the demo and benchmarks) opens its own connections.
package sqlite
