package sqlite

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
)

// verifyInfo is Change.Verify for a SQLite store: where the per-row record of the change is.
type verifyInfo struct {
	Version int    `json:"v"`
	Profile string `json:"profile"`
	// Targets are the "table.column" pairs the change wrote.
	Targets []string `json:"targets"`
	// RowsFile holds one rowLine per changed row (JSON Lines, beside the backup).
	RowsFile   string `json:"rows_file"`
	RowsSHA256 string `json:"rows_sha256"`
	Rows       int    `json:"rows"`
}

// rowLine records one rewritten value: how to find the row again and the hashes of the value
// before and after (valueHash).
type rowLine struct {
	Table   string   `json:"table"`
	Column  string   `json:"column"`
	KeyCols []string `json:"key_columns"`
	Key     []any    `json:"key"`
	Row     string   `json:"row"`
	Names   int      `json:"names"`
	Before  string   `json:"before"`
	After   string   `json:"after"`
}

// rowEdits are the edits of one row's JSON value, in offset order.
type rowEdits struct {
	label string
	loc   rowLoc
	edits []store.Edit
}

// valueHash identifies a column value with its storage class: hex SHA-256 of typeof, NUL, bytes.
func valueHash(typ string, val []byte) string {
	h := sha256.New()
	h.Write([]byte(typ))
	h.Write([]byte{0})
	h.Write(val)
	return hex.EncodeToString(h.Sum(nil))
}

// bindValue returns val as the driver binds it with storage class typ (TEXT or BLOB).
func bindValue(typ string, val []byte) any {
	if typ == "blob" {
		return val
	}
	return string(val)
}

// Apply rewrites the given sites of a store scanned as snap, in one BEGIN IMMEDIATE transaction:
//
//  1. take the write lock, waiting up to the busy timeout (else an *store.InUseError: "the
//     database is locked by another process");
//  2. copy the database through the online backup API to opt.BackupPath (one self-contained
//     file) and record its SHA-256 as Change.Before.SHA256;
//  3. for each row: re-read the value by its key, check every old name token at its offset (a
//     row changed or deleted since the scan refuses the whole store as in use), splice the new
//     names in (every other byte of the JSON text stays, the storage class is kept), UPDATE it
//     and record the before/after hashes in a rows file beside the backup;
//  4. PRAGMA integrity_check must say "ok";
//  5. opt.BeforeCommit (the caller journals the change), then COMMIT.
//
// Any failure rolls back: the store is then unchanged and the backup removed. UPDATE triggers
// are kept from changing other columns (Change.Warnings names them).
func (s *Store) Apply(ctx context.Context, snap *store.Snapshot, edits []store.Edit, opt store.ApplyOptions) (ch *store.Change, err error) {
	if snap.NotWritable != "" {
		return nil, fmt.Errorf("rewrite %s: %w: %s", s.path, store.ErrNotWritable, snap.NotWritable)
	}
	ex, ok := snap.Extra.(*scanExtra)
	if !ok {
		return nil, fmt.Errorf("rewrite %s: the snapshot does not come from a SQLite scan", s.path)
	}
	groups, err := groupEdits(ex, edits)
	if err != nil {
		return nil, fmt.Errorf("rewrite %s: %w", s.path, err)
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("rewrite %s: no edits", s.path)
	}
	var targets []string
	seen := map[string]bool{}
	for _, g := range groups {
		ts := ex.comp.tables[g.loc.spec].spec
		t := ts.Table + "." + ts.Column
		if !seen[t] {
			seen[t] = true
			targets = append(targets, t)
		}
	}
	busy := s.opt.busy()
	db, err := openDB(s.path, modeRW, busy)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	defer conn.Close()
	guard := newTargetGuard(targets)
	if err := guard.install(ctx, conn); err != nil {
		return nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	before, err := fileState(s.path)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", s.path, err)
	}
	if err := beginImmediate(ctx, conn, s.path, busy); err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			rollback(conn)
		}
	}()

	// The backup is taken while we hold the write lock: it is exactly what we change.
	if err := onlineBackup(ctx, s.path, opt.BackupPath, busy); err != nil {
		return nil, err
	}
	rowsPath := opt.BackupPath + ".rows.jsonl"
	keep := false
	defer func() {
		if !keep {
			os.Remove(opt.BackupPath)
			os.Remove(rowsPath)
		}
	}()
	bsum, err := fileio.HashFile(opt.BackupPath)
	if err != nil {
		return nil, fmt.Errorf("read backup of %s: %w", s.path, err)
	}
	rf, err := os.OpenFile(rowsPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create change record of %s: %w", s.path, err)
	}
	defer rf.Close()
	rh := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(rf, rh), 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)

	stmts := newStmtCache(conn)
	defer stmts.close()
	for _, g := range groups {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := s.rewriteRow(ctx, stmts, ex, g)
		if err != nil {
			return nil, err
		}
		if err := enc.Encode(line); err != nil {
			return nil, fmt.Errorf("write change record of %s: %w", s.path, err)
		}
	}
	if res, err := integrityCheck(ctx, conn); err != nil {
		return nil, fmt.Errorf("check %s: %w", s.path, err)
	} else if res != "ok" {
		return nil, fmt.Errorf("rewrite %s: integrity_check after the change says %q; nothing was changed", s.path, res)
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("write change record of %s: %w", s.path, err)
	}
	if err := rf.Sync(); err != nil {
		return nil, fmt.Errorf("sync change record of %s: %w", s.path, err)
	}
	if err := fileio.SyncDir(filepath.Dir(rowsPath)); err != nil {
		return nil, err
	}
	v, err := json.Marshal(verifyInfo{Version: 1, Profile: ex.comp.prof.Name, Targets: targets,
		RowsFile: rowsPath, RowsSHA256: hex.EncodeToString(rh.Sum(nil)), Rows: len(groups)})
	if err != nil {
		return nil, err
	}
	before.SHA256 = bsum
	ch = &store.Change{Ref: s.Ref(), Backup: opt.BackupPath, Before: before, After: before, Edits: len(edits),
		Verify: v, Warnings: guard.warnings()}
	if opt.BeforeCommit != nil {
		if err := opt.BeforeCommit(ch); err != nil {
			return nil, fmt.Errorf("journal change of %s: %w", s.path, err)
		}
	}
	keep = true
	if opt.BeforeCheck != nil {
		opt.BeforeCheck()
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		keep = false
		if isBusy(err) {
			return nil, inUse(s.path, busy)
		}
		return nil, fmt.Errorf("commit %s: %w", s.path, err)
	}
	committed = true
	if st, err := fileState(s.path); err == nil {
		ch.After = st
	}
	return ch, nil
}

// rewriteRow re-reads one row (by the rowid or key it was scanned with, checking it is still
// the same row), checks and splices its name tokens, and writes it back.
func (s *Store) rewriteRow(ctx context.Context, conn *stmtCache, ex *scanExtra, g rowEdits) (*rowLine, error) {
	ts := ex.comp.tables[g.loc.spec].spec
	keyCols := ex.keyCols[g.loc.spec]
	where, args := "rowid = ?", []any{g.loc.rowid}
	if g.loc.keyed {
		where, args = keyWhere(keyCols, ex.keyed[g.label])
	}
	rowid, typ, val, keys, err := readRow(ctx, conn, ts.Table, ts.Column, keyCols, !g.loc.keyed, where, args)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, &store.InUseError{Path: s.path, Reason: fmt.Sprintf("%s was deleted since it was scanned", g.label)}
	case err != nil:
		return nil, fmt.Errorf("read %s of %s: %w", g.label, s.path, err)
	case typ != "text" && typ != "blob":
		return nil, &store.InUseError{Path: s.path, Reason: fmt.Sprintf("%s.%s of %s is no longer text (%s)", ts.Table, ts.Column, g.label, typ)}
	}
	cols, kv, usable := rowKey(keyCols, keys, rowid)
	if lbl := rowLabel(ts.Table, cols, kv); g.label != lbl && !strings.HasPrefix(g.label, lbl+" ") {
		return nil, &store.InUseError{Path: s.path, Reason: fmt.Sprintf("%s moved since it was scanned (its rowid now holds %s)", g.label, lbl)}
	}
	if !usable {
		return nil, fmt.Errorf("rewrite %s of %s: the row has no key to find it again", g.label, s.path)
	}
	nv, err := splice(val, g.edits)
	if err != nil {
		return nil, &store.InUseError{Path: s.path, Reason: fmt.Sprintf("%s: %v (content changed since it was scanned)", g.label, err)}
	}
	res, err := conn.ExecContext(ctx, fmt.Sprintf("UPDATE %s SET %s = ? WHERE %s", quoteIdent(ts.Table), quoteIdent(ts.Column), where),
		append([]any{bindValue(typ, nv)}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("update %s of %s: %w", g.label, s.path, err)
	}
	if n, err := res.RowsAffected(); err == nil && n != 1 {
		return nil, fmt.Errorf("update %s of %s: %d rows matched its key", g.label, s.path, n)
	}
	return &rowLine{Table: ts.Table, Column: ts.Column, KeyCols: cols, Key: kv, Row: g.label, Names: len(g.edits),
		Before: valueHash(typ, val), After: valueHash(typ, nv)}, nil
}

// readRow reads the rowid (withRowid), the column value with its storage class and the key
// values of the one row matching where.
func readRow(ctx context.Context, conn *stmtCache, table, column string, keyCols []string, withRowid bool, where string, args []any) (sql.NullInt64, string, []byte, []any, error) {
	var rowid sql.NullInt64
	cols := []string{"NULL", "typeof(" + quoteIdent(column) + ")", "+" + quoteIdent(column)}
	if withRowid {
		cols[0] = "rowid"
	}
	for _, k := range keyCols {
		cols = append(cols, "+"+quoteIdent(k))
	}
	rows, err := conn.QueryContext(ctx, fmt.Sprintf("SELECT %s FROM %s WHERE %s LIMIT 2", strings.Join(cols, ", "), quoteIdent(table), where), args...)
	if err != nil {
		return rowid, "", nil, nil, err
	}
	defer rows.Close()
	var typ string
	var val []byte
	keys := make([]any, len(keyCols))
	dest := []any{&rowid, &typ, &val}
	for i := range keys {
		dest = append(dest, &keys[i])
	}
	n := 0
	for rows.Next() {
		n++
		if err := rows.Scan(dest...); err != nil {
			return rowid, "", nil, nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return rowid, "", nil, nil, err
	}
	switch n {
	case 0:
		return rowid, "", nil, nil, sql.ErrNoRows
	case 1:
		return rowid, typ, val, keys, nil
	}
	return rowid, "", nil, nil, fmt.Errorf("the key of %s does not identify one row", table)
}

// readValue reads one column value (with its storage class) of the row matching where; it
// fails with sql.ErrNoRows when no row matches and with an error when several do.
func readValue(ctx context.Context, conn *stmtCache, schema, table, column, where string, args []any) (string, []byte, error) {
	q := fmt.Sprintf("SELECT typeof(%s), +%s FROM %s.%s WHERE %s LIMIT 2", quoteIdent(column), quoteIdent(column),
		quoteIdent(schema), quoteIdent(table), where)
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		return "", nil, err
	}
	defer rows.Close()
	var typ string
	var val []byte
	n := 0
	for rows.Next() {
		n++
		if err := rows.Scan(&typ, &val); err != nil {
			return "", nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return "", nil, err
	}
	switch n {
	case 0:
		return "", nil, sql.ErrNoRows
	case 1:
		return typ, val, nil
	}
	return "", nil, fmt.Errorf("the key of %s does not identify one row", table)
}

// keyWhere renders the condition that finds a row by its key.
func keyWhere(cols []string, keys []any) (string, []any) {
	parts := make([]string, len(cols))
	for i, c := range cols {
		if c == "rowid" {
			parts[i] = "rowid = ?"
		} else {
			parts[i] = quoteIdent(c) + " = ?"
		}
	}
	return strings.Join(parts, " AND "), keys
}

// ErrTokenMismatch means the bytes at an edit's offset are not the token the scan saw.
var ErrTokenMismatch = errors.New("name token not found at its offset")

// splice replaces, at each edit's offset, the old token (checked byte for byte) by the new name
// written as a JSON string; edits are sorted by offset and do not overlap.
func splice(val []byte, edits []store.Edit) ([]byte, error) {
	out := make([]byte, 0, len(val)+64*len(edits))
	pos := 0
	for _, e := range edits {
		off := int(e.Site.Loc.Offset)
		end := off + len(e.Site.Raw)
		if off < pos || end > len(val) || !bytes.Equal(val[off:end], e.Site.Raw) {
			return nil, fmt.Errorf("%w (offset %d)", ErrTokenMismatch, off)
		}
		out = append(out, val[pos:off]...)
		out = jsonscan.AppendQuote(out, e.New)
		pos = end
	}
	return append(out, val[pos:]...), nil
}

// groupEdits groups edits by row, in (table, row) order, with each row's edits by offset.
func groupEdits(ex *scanExtra, edits []store.Edit) ([]rowEdits, error) {
	by := map[string]*rowEdits{}
	for _, e := range edits {
		if e.Site.ReadOnly {
			return nil, fmt.Errorf("%s %s: the site is read-only (%s)", e.Site.Loc.Row, e.Site.Path, e.Site.Name)
		}
		loc, ok := ex.rows[e.Site.Loc.Row]
		if !ok {
			return nil, fmt.Errorf("%s: row not found in the scan", e.Site.Loc.Row)
		}
		g := by[e.Site.Loc.Row]
		if g == nil {
			g = &rowEdits{label: e.Site.Loc.Row, loc: loc}
			by[e.Site.Loc.Row] = g
		}
		g.edits = append(g.edits, e)
	}
	out := make([]rowEdits, 0, len(by))
	for _, g := range by {
		sort.Slice(g.edits, func(i, j int) bool { return g.edits[i].Site.Loc.Offset < g.edits[j].Site.Loc.Offset })
		for i := 1; i < len(g.edits); i++ {
			p := g.edits[i-1].Site
			if p.Loc.Offset+int64(len(p.Raw)) > g.edits[i].Site.Loc.Offset {
				return nil, fmt.Errorf("%s: overlapping edits at offsets %d and %d", g.label, p.Loc.Offset, g.edits[i].Site.Loc.Offset)
			}
		}
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].loc.spec != out[j].loc.spec {
			return out[i].loc.spec < out[j].loc.spec
		}
		return out[i].loc.rowid < out[j].loc.rowid || (out[i].loc.rowid == out[j].loc.rowid && out[i].label < out[j].label)
	})
	return out, nil
}

// onlineBackup copies the database at src into a new file dst through the SQLite online backup
// API (a consistent image, whatever the journal mode), then makes dst a self-contained
// rollback-journal database and syncs it. dst must not exist.
func onlineBackup(ctx context.Context, src, dst string, busy time.Duration) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fmt.Errorf("create backup directory: %w", err)
	}
	// Created exclusively and private (a run never overwrites a backup); SQLite takes an empty
	// file as an empty database.
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create backup of %s: %w", src, err)
	}
	f.Close()
	sdb, err := openDB(src, modeRO, busy)
	if err != nil {
		return err
	}
	defer sdb.Close()
	ddb, err := openDB(dst, modeRW, busy)
	if err != nil {
		os.Remove(dst)
		return err
	}
	defer ddb.Close()
	sconn, err := sdb.Connx(ctx)
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer sconn.Close()
	dconn, err := ddb.Connx(ctx)
	if err != nil {
		return fmt.Errorf("create backup %s: %w", dst, err)
	}
	defer dconn.Close()
	err = dconn.Raw(func(d any) error {
		return sconn.Raw(func(s any) error {
			b, err := d.(*sqlite3.SQLiteConn).Backup("main", s.(*sqlite3.SQLiteConn), "main")
			if err != nil {
				return err
			}
			deadline := time.Now().Add(busy)
			for {
				if err := ctx.Err(); err != nil {
					b.Close()
					return err
				}
				done, err := b.Step(-1)
				if err != nil {
					b.Close()
					return err
				}
				if done {
					return b.Finish()
				}
				if time.Now().After(deadline) {
					b.Close()
					return &store.InUseError{Path: src, Reason: "the database stayed locked while it was being backed up"}
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	})
	if err != nil {
		os.Remove(dst)
		return fmt.Errorf("back up %s: %w", src, err)
	}
	if _, err := dconn.ExecContext(ctx, "PRAGMA journal_mode=DELETE"); err != nil {
		os.Remove(dst)
		return fmt.Errorf("back up %s: %w", src, err)
	}
	dconn.Close()
	ddb.Close()
	if err := syncFile(dst); err != nil {
		os.Remove(dst)
		return fmt.Errorf("sync backup of %s: %w", src, err)
	}
	return fileio.SyncDir(filepath.Dir(dst))
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
