// Package postgres is the engine for agents' session stores kept in a PostgreSQL database (Open
// WebUI's chat and chat_message tables on a team's server), described by the same profiles as
// the SQLite engine (sqlite.Profile: tables, key column, JSON column, name paths; an agent
// room's or a user's --profile FILE): it knows no agent. It is the store contract's first
// database-backed store (store.go, "Database-backed stores").
//
// A store is named by a reference: a postgres:// or postgresql:// URL given as PATH. Its Ref is
// the URL without its password (store.Redact); the password comes only from the URL, from
// PGPASSWORD or from ~/.pgpass (pgx reads both), is kept in the Store, and never reaches a
// Ref, a report, a run manifest or an error (every error is scrubbed of it). Undo reopens the
// store from the redacted reference: a password given in the URL must then come from PGPASSWORD
// or ~/.pgpass.
//
// Reading (Scan, ScanBatches): one REPEATABLE READ, READ ONLY transaction (one snapshot of
// every table; writers go on), each table read through a cursor in the order its rows are stored
// (a sequential scan, synchronize_seqscans off), BatchRows rows
// per fetch (two fetches parsed at once, Parsers, merged in fetch order), each value as the text the server stores (json and text columns: the exact bytes;
// a jsonb column is read, but the store is then not writable, Snapshot.NotWritable: jsonb keeps
// no text, so a byte-exact rewrite is impossible, and sessionfix never changes a column's type;
// a name that needs rewriting is kept and makes the run partial, exit 3, as for any store refused
// as not rewritable; its other tables are not written either). A site's Loc carries the
// row label ("chat id=…", parsed back by the writer), the row's xmin (RowVersion) and the
// 63-bit XXH3 of the value's text (RowSum).
//
// Writing (Apply, ApplyBatches): one transaction per batch (at most BatchRows rows; a table
// whose profile spec names a parent, TableSpec.Parent, is read with its parent's rows, so
// both places of one chat are in the same batch and transaction): SELECT … FOR UPDATE SKIP
// LOCKED of the batch's rows by key (a row another transaction holds is skipped and reported:
// the store is in use, exit 4), each row's xmin compared with the plan's (a quick first check)
// and, when it differs, the checksum of its text (which decides: a row whose text changed since
// the plan is skipped and reported), the tokens checked and spliced byte for byte, then one
// statement per table puts the old text into sessionfix_backup (run id, table, key column and
// value, column, old text, MD5 of the old and the new text, the transaction's xid) and the new
// text into each row where the lock found it (its ctid), COMMIT. The statements of a step go in
// one round trip (pgconn.Batch): a batch's writes, its COMMIT and the next batch's BEGIN and locks,
// so a batch costs one round trip; two writers (Writers: two connections, batches taken in
// turn, two transactions in flight) keep the server working while a batch is checked and
// spliced. After the last batch a verify pass reports each row the
// run wrote that an application overwrote since (its fix is gone; nothing is lost: the old text
// is in sessionfix_backup): per batch, the rows still carrying the batch's xmin on the heap pages
// its new versions went to are counted (PostgreSQL 14 or later: a TID range scan of those pages
// only); a batch whose count is short, or every batch on an older server, is compared row by
// row (its xmin still the run's, else the MD5 of its text). statement_timeout and lock_timeout
// bound every statement (Options). A kill between batches leaves whole batches only, each with
// its backup rows.
//
// Undo (Restore) reads the run's backup rows in batches, and in one transaction per batch puts
// the old text back into each row that still holds what the run wrote (its MD5 is new_hash)
// and marks the backup row restored; every other row (rewritten by an application since,
// deleted, locked) is left as it is and named in the error.
//
// postgres owns every use of the PostgreSQL driver: pgx's database/sql adapter with sqlx for
// the schema, the read transaction's cursors, undo and the verify pass; the hot paths — the
// scan's fetches (conn.Raw on the read transaction's connection) and the writer's round trips
// (a round trip per batch of hundreds of kilobytes) — through pgx's protocol layer, pgconn,
// parameters and results in PostgreSQL's binary format encoded by wire.go (pgx's typed encoder
// spent a tenth of the client's CPU growing buffers value by value; database/sql copied each
// value read twice). The
// profile format and the per-value site finder are the SQLite engine's (sqlite.Profile,
// sqlite.Compiled), which need no SQLite database.
package postgres
