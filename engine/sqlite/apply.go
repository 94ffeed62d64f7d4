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

	"github.com/jmoiron/sqlx"
	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/splice"
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
	// File is set when the backup is a byte copy of the database file: what undo needs to
	// put the file's bytes back (filerestore.go); absent in runs before it was recorded.
	File *fileRecord `json:"file,omitempty"`
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
	spec  int
	rowid int64
	keyed bool
	keys  []any // keyed: the key values
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
//  2. copy the database to opt.BackupPath (one self-contained rollback-journal file) and
//     record its SHA-256 as Change.Before.SHA256: a plain copy of the main file, hashed as it
//     is written, when that file holds the whole database (a WAL checkpointed before the
//     transaction began, or a rollback journal; see copyBackup), else the online backup API.
//     In WAL mode the main file stays as it is until the commit, so that copy runs while
//     steps 3 and 4 go on (written with direct I/O where the file system takes it, so it
//     costs no page cache: copyBackup) and is complete (written, hashed, synced) before step 5;
//  3. for each row: re-read the value by its rowid (or key), check every old name token at its
//     offset (a row changed or deleted since the scan refuses the whole store as in use),
//     splice the new names in (every other byte of the JSON text stays, the storage class is
//     kept), UPDATE it (one SELECT and one UPDATE per table, prepared once on the connection's
//     handle and bound in C: rows.go) and record the before/after hashes in a rows file beside the backup;
//  4. PRAGMA integrity_check must say "ok" (PRAGMA quick_check when the change cannot touch
//     an index: see writeCheck);
//  5. opt.BeforeCommit (the caller journals the change), then COMMIT;
//  6. when the backup is a byte copy of the main file, record the file as the commit left it
//     (afterCommit, filerestore.go: verifyInfo.File), for undo to put the original bytes back.
//
// Any failure rolls back: the store is then unchanged and the backup removed. UPDATE triggers
// are kept from changing other columns (Change.Warnings names them). The edits may come in
// any order; ApplyBatches takes them in scan order, batch by batch.
func (s *Store) Apply(ctx context.Context, snap *store.Snapshot, edits []store.Edit, opt store.ApplyOptions) (*store.Change, error) {
	if len(edits) == 0 {
		return nil, fmt.Errorf("rewrite %s: no edits", s.path)
	}
	if ex := store.StateOf[scanExtra](snap); ex != nil {
		sorted := make([]store.Edit, len(edits))
		copy(sorted, edits)
		if err := sortEdits(ex, sorted); err != nil {
			return nil, fmt.Errorf("rewrite %s: %w", s.path, err)
		}
		edits = sorted
	}
	done := false
	return s.ApplyBatches(ctx, snap, func() ([]store.Edit, error) {
		if done {
			return nil, io.EOF
		}
		done = true
		return edits, nil
	}, opt)
}

// ApplyBatches is Apply with the edits read batch by batch from next until io.EOF
// (store.BatchWriter), in the order ScanBatches gave their sites: the edits of one row
// together (a row whose edits are split across two batches is carried over, copied). Memory
// holds one batch and one row; what undo needs per row is written to the rows file as it goes.
func (s *Store) ApplyBatches(ctx context.Context, snap *store.Snapshot, next func() ([]store.Edit, error), opt store.ApplyOptions) (ch *store.Change, err error) {
	if snap.NotWritable != "" {
		return nil, fmt.Errorf("rewrite %s: %w: %s", s.path, store.ErrNotWritable, snap.NotWritable)
	}
	ex := store.StateOf[scanExtra](snap)
	if ex == nil {
		return nil, fmt.Errorf("rewrite %s: the snapshot does not come from a SQLite scan", s.path)
	}
	busy := s.opt.busy()
	defer func() {
		// Nothing was written (the transaction rolled back or never began): a database on a
		// read-only mount or one this user may not write says so (SQLite: "unable to open
		// database file: no such file or directory").
		if err != nil && ch == nil && !errors.Is(err, store.ErrInUse) && ctx.Err() == nil {
			if why := writeDenied(s.path); why != nil {
				err = fmt.Errorf("cannot write %w; nothing was written (%w)", why, err)
			} else if diskFull(err) {
				err = &DiskFullError{Path: s.path, Err: err}
			}
		}
	}()
	// The backup copy's descriptor of the main file is closed after the database (this defer
	// runs after db.Close): closing it sooner drops SQLite's locks (openMainFile).
	var bk backupJob
	defer func() {
		if bk.mainFile != nil {
			bk.mainFile.Close()
		}
	}()
	db, err := openDB(s.path, modeRW, busy, s.opt.Pin)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	defer conn.Close()
	guard := newTargetGuard(nil)
	if err := guard.install(ctx, conn); err != nil {
		return nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	checkpointBeforeWrite(ctx, conn, busy)
	before, err := fileState(s.path)
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", s.path, err)
	}
	tx, err := beginWrite(ctx, conn, s.path, busy)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() // nothing to undo once committed

	// The backup is taken while we hold the write lock: it is exactly what we change
	// (startBackup). It is waited for before anything is journaled or committed, and on every
	// way out; a failed run stops it early and removes it and the rows file.
	rowsPath := opt.BackupPath + ".rows.jsonl"
	keep := false
	defer func() {
		if !keep {
			bk.stop()
		}
		bk.wait()
		if !keep {
			os.Remove(opt.BackupPath)
			os.Remove(rowsPath)
		}
	}()
	if err := s.startBackup(ctx, tx, db, opt.BackupPath, busy, &bk); err != nil {
		return nil, err
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

	w := &rowWriter{s: s, ex: ex, guard: guard, sql: make([]*specSQL, len(ex.comp.tables))}
	nrows, nedits, err := w.writeAll(ctx, conn, next, enc)
	if err != nil {
		return nil, err
	}
	if nrows == 0 {
		return nil, fmt.Errorf("rewrite %s: no edits", s.path)
	}
	check := writeCheck(ctx, tx, w.targets)
	if res, err := runCheck(ctx, tx, check); err != nil {
		return nil, fmt.Errorf("check %s: %w", s.path, err)
	} else if res != "ok" {
		return nil, fmt.Errorf("rewrite %s: %s after the change says %q; nothing was changed", s.path, check, res)
	}
	if err := bk.wait(); err != nil {
		return nil, err
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
	// Whether another connection commits between our COMMIT and afterCommit's look at the file.
	var version int64
	frec := bk.frec
	if frec != nil {
		if version, err = dataVersion(ctx, tx); err != nil {
			return nil, fmt.Errorf("read %s: %w", s.path, err)
		}
	}
	vinfo := verifyInfo{Version: 1, Profile: ex.comp.prof.Name, Targets: w.targets,
		RowsFile: rowsPath, RowsSHA256: hex.EncodeToString(rh.Sum(nil)), Rows: nrows, File: frec}
	v, err := json.Marshal(vinfo)
	if err != nil {
		return nil, err
	}
	before.SHA256 = bk.sum
	ch = &store.Change{Ref: s.Ref(), Backup: opt.BackupPath, Before: before, After: before, Edits: nedits,
		Verify: v, Warnings: guard.warnings()}
	if opt.BeforeCommit != nil {
		if err := opt.BeforeCommit(ch); err != nil {
			return nil, fmt.Errorf("journal change of %s: %w", s.path, err)
		}
	}
	keep = true
	fileio.BeforeCheck(ctx, s.path)
	if err := commit(tx, s.path, busy); err != nil {
		keep = false
		return nil, err
	}
	if frec != nil {
		// The file the run left, for undo to put the original bytes back (the "done" line
		// records it; a run killed before that is undone row by row).
		frec.After, frec.NoAfter = afterCommit(ctx, conn, bk.mainFile, version, busy)
		if b, err := json.Marshal(vinfo); err == nil {
			ch.Verify = b
		}
	}
	if st, err := fileState(s.path); err == nil {
		ch.After = st
	}
	return ch, nil
}

// backupJob is the backup of one ApplyBatches run (startBackup): the main file's descriptor
// and record when the main file holds the whole database, the backup's SHA-256 (hex) once
// taken, and, for a copy running beside the row rewrites, how to wait for it and stop it.
type backupJob struct {
	mainFile *os.File    // the main file, opened by openMainFile (nil: a WAL with frames)
	frec     *fileRecord // the main file's bytes can be put back (filerestore.go)
	sum      string      // the backup's SHA-256, set when the copy is done
	done     chan struct{}
	err      error
	cancel   context.CancelFunc
	ctx      context.Context
}

// wait waits for a copy running beside the rewrites (none: it returns nil at once) and
// returns its error; a later call returns the same. The run's context being done stops the copy.
func (b *backupJob) wait() error {
	if b.done == nil {
		return nil
	}
	if b.ctx.Err() != nil {
		b.cancel()
	}
	<-b.done
	b.cancel()
	return b.err
}

// stop stops a copy running beside the rewrites early (a failed run; wait still waits for it).
func (b *backupJob) stop() {
	if b.cancel != nil {
		b.cancel()
	}
}

// startBackup takes the backup of the database tx holds the write lock of, into dst. When the
// main file holds the whole database it is copied and hashed in one pass (backup.go); otherwise
// (a WAL with frames) through the online backup API, then hashed. In WAL mode the main file
// does not change until we commit (mainFileIsDatabase: frozen), so the copy runs beside the
// row rewrites and the check, and the caller waits for it (b.wait) before it journals or
// commits. b.mainFile, once set, is the caller's to close after the database.
func (s *Store) startBackup(ctx context.Context, tx *sqlx.Tx, db *handle, dst string, busy time.Duration, b *backupJob) (err error) {
	file, whole, frozen := mainFileIsDatabase(ctx, tx)
	if whole {
		if b.mainFile, err = openMainFile(file, db.pin); err != nil {
			return err
		}
		if b.frec, err = recordFile(b.mainFile); err != nil {
			return fmt.Errorf("back up %s: %w", s.path, err)
		}
	}
	switch {
	case frozen:
		// The rows file goes beside the backup: the directory is made before either.
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return fmt.Errorf("create backup directory: %w", err)
		}
		b.ctx = ctx
		var bctx context.Context
		bctx, b.cancel = context.WithCancel(ctx)
		b.done = make(chan struct{})
		go func() {
			defer close(b.done)
			b.sum, b.err = copyBackup(bctx, b.mainFile, dst, true)
		}()
	case whole:
		if b.sum, err = copyBackup(ctx, b.mainFile, dst, false); err != nil {
			return err
		}
	default:
		if err := onlineBackup(ctx, db, dst, busy); err != nil {
			return err
		}
		if b.sum, err = fileio.HashFile(dst); err != nil {
			return fmt.Errorf("read backup of %s: %w", s.path, err)
		}
	}
	return nil
}

// writeAll rewrites every row of the edits next gives, batch by batch until io.EOF, on the
// write connection's own handle (rows.go: one prepared SELECT and one UPDATE per table, values
// bound in C, no database/sql round trip per row; inside Raw the transaction is only used
// through that handle), and writes each row's change record line with enc. The edits of one
// row come together; a row whose edits go on in the next batch is carried over (copied, as next
// may reuse its batch). It returns the rows and edits written.
func (w *rowWriter) writeAll(ctx context.Context, conn *sqlx.Conn, next func() ([]store.Edit, error), enc *json.Encoder) (nrows, nedits int, err error) {
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("unexpected SQLite driver connection %T", dc)
		}
		w.conn = c
		defer w.close()
		write := func(g *rowEdits) error {
			line, err := w.rewrite(ctx, g)
			if err != nil {
				return err
			}
			nrows++
			nedits += len(g.edits)
			if err := enc.Encode(line); err != nil {
				return fmt.Errorf("write change record of %s: %w", w.s.path, err)
			}
			return nil
		}
		var cur *rowEdits
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			batch, err := next()
			if errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return fmt.Errorf("rewrite %s: %w", w.s.path, err)
			}
			if cur, err = w.group(batch, cur, write); err != nil {
				return err
			}
		}
		if cur != nil {
			return write(cur)
		}
		return nil
	})
	return nrows, nedits, err
}

// group splits batch into rows (edits of one row are adjacent), writes every row the batch
// completes with write, and returns the batch's last row, its edits copied: it may go on in
// the next batch. cur is the previous batch's last row (nil at the start).
func (w *rowWriter) group(batch []store.Edit, cur *rowEdits, write func(*rowEdits) error) (*rowEdits, error) {
	var err error
	for i := 0; i < len(batch); {
		j := i + 1
		for j < len(batch) && batch[j].Site.Loc.Row == batch[i].Site.Loc.Row {
			j++
		}
		if cur != nil && cur.label == batch[i].Site.Loc.Row {
			cur.edits = append(cur.edits, batch[i:j]...) // the row went on in this batch
		} else {
			if cur != nil {
				if err := write(cur); err != nil {
					return nil, err
				}
			}
			if cur, err = w.ex.group(batch[i:j]); err != nil {
				return nil, fmt.Errorf("rewrite %s: %w", w.s.path, err)
			}
		}
		i = j
	}
	if cur != nil {
		cur.edits = copyEdits(cur.edits)
	}
	return cur, nil
}

// copyEdits copies edits with their Raw tokens.
func copyEdits(edits []store.Edit) []store.Edit {
	out := make([]store.Edit, len(edits))
	for i, e := range edits {
		out[i] = e
		out[i].Site.Raw = bytes.Clone(e.Site.Raw)
	}
	return out
}

// specSQL holds the statements of one table spec, rendered once and prepared on the write
// connection's handle when first used.
type specSQL struct {
	where  string // finds the row: by rowid, or by its key columns
	sel    string
	update string
	width  int // columns of sel
	selSt  *rowStmt
	updSt  *rowStmt
	batch  *rowBatch // sel's rows (at most 2: LIMIT 2), reused
}

// rowWriter rewrites rows of one Apply.
type rowWriter struct {
	s       *Store
	ex      *scanExtra
	conn    *sqlite3.SQLiteConn // the write transaction's connection (inside its Raw)
	guard   *targetGuard
	sql     []*specSQL
	targets []string
}

// close finalizes the prepared statements.
func (w *rowWriter) close() {
	for _, q := range w.sql {
		if q == nil {
			continue
		}
		if q.selSt != nil {
			q.selSt.close()
			q.selSt = nil
		}
		if q.updSt != nil {
			q.updSt.close()
			q.updSt = nil
		}
	}
}

// specSQL returns the statements of table spec i, prepared; its table.column becomes a target
// of the change (the trigger guard lets it be updated) before the first of them is prepared.
func (w *rowWriter) specSQL(i int, keyed bool) (*specSQL, error) {
	if q := w.sql[i]; q != nil {
		return q, nil
	}
	ts, keyCols := w.ex.comp.tables[i].spec, w.ex.keyCols[i]
	t := ts.Table + "." + ts.Column
	if w.guard.add(t) {
		w.targets = append(w.targets, t)
	}
	q := &specSQL{where: "rowid = ?"}
	if keyed {
		q.where, _ = keyWhere(keyCols, nil)
	}
	cols := []string{"NULL", "typeof(" + quoteIdent(ts.Column) + ")", "+" + quoteIdent(ts.Column)}
	if !keyed {
		cols[0] = "rowid"
	}
	for _, k := range keyCols {
		cols = append(cols, "+"+quoteIdent(k))
	}
	q.width = len(cols)
	q.sel = fmt.Sprintf("SELECT %s FROM %s WHERE %s LIMIT 2", strings.Join(cols, ", "), quoteIdent(ts.Table), q.where)
	q.update = fmt.Sprintf("UPDATE %s SET %s = ? WHERE %s", quoteIdent(ts.Table), quoteIdent(ts.Column), q.where)
	var err error
	if q.selSt, err = prepareRows(w.conn, q.sel); err != nil {
		return nil, err
	}
	if q.updSt, err = prepareRows(w.conn, q.update); err != nil {
		q.selSt.close()
		return nil, err
	}
	q.batch = newRowBatch(q.width, 2)
	w.sql[i] = q
	return q, nil
}

// group makes the row group of the edits of one row (consecutive, same Loc.Row).
func (ex *scanExtra) group(edits []store.Edit) (*rowEdits, error) {
	e := edits[0]
	if e.Site.ReadOnly {
		return nil, fmt.Errorf("%s %s: the site is read-only (%s)", e.Site.Loc.Row, e.Site.Path, e.Site.Name)
	}
	spec, ok := ex.specOf(&e.Site)
	if !ok {
		return nil, fmt.Errorf("%s: row not found in the scan", e.Site.Loc.Row)
	}
	g := &rowEdits{label: e.Site.Loc.Row, spec: spec, rowid: e.Site.Loc.RowID, edits: edits}
	if k, ok := ex.keyed[g.label]; ok {
		g.keyed, g.keys = true, k.keys
	}
	return g, nil
}

// checkEdits sorts a row's edits by offset and refuses read-only sites and overlapping edits.
func checkEdits(g *rowEdits) error {
	sort.SliceStable(g.edits, func(i, j int) bool { return g.edits[i].Site.Loc.Offset < g.edits[j].Site.Loc.Offset })
	for i, e := range g.edits {
		if e.Site.ReadOnly {
			return fmt.Errorf("%s %s: the site is read-only (%s)", e.Site.Loc.Row, e.Site.Path, e.Site.Name)
		}
		if i > 0 {
			p := g.edits[i-1].Site
			if p.Loc.Offset+int64(len(p.Raw)) > e.Site.Loc.Offset {
				return fmt.Errorf("%s: overlapping edits at offsets %d and %d", g.label, p.Loc.Offset, e.Site.Loc.Offset)
			}
		}
	}
	return nil
}

// rewrite re-reads one row (by the rowid or key it was scanned with, checking it is still the
// same row), checks and splices its name tokens, and writes it back.
func (w *rowWriter) rewrite(ctx context.Context, g *rowEdits) (*rowLine, error) {
	s := w.s
	if err := checkEdits(g); err != nil {
		return nil, fmt.Errorf("rewrite %s: %w", s.path, err)
	}
	ts := w.ex.comp.tables[g.spec].spec
	keyCols := w.ex.keyCols[g.spec]
	q, err := w.specSQL(g.spec, g.keyed)
	if err != nil {
		return nil, fmt.Errorf("rewrite %s of %s: %w", g.label, s.path, err)
	}
	args := []any{g.rowid}
	if g.keyed {
		args = g.keys
	}
	rowid, typ, val, keys, err := q.readRow(ctx, ts.Table, args)
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
	nv, err := splice.Bytes(val, g.edits)
	if err != nil {
		return nil, &store.InUseError{Path: s.path, Reason: fmt.Sprintf("%s: %v (content changed since it was scanned)", g.label, err), Err: err}
	}
	if err := q.updSt.startAt(2, args); err != nil {
		return nil, fmt.Errorf("update %s of %s: %w", g.label, s.path, err)
	}
	n, err := q.updSt.exec(typ == "text", nv)
	if err != nil {
		return nil, fmt.Errorf("update %s of %s: %w", g.label, s.path, err)
	}
	if n != 1 {
		return nil, fmt.Errorf("update %s of %s: %d rows matched its key", g.label, s.path, n)
	}
	return &rowLine{Table: ts.Table, Column: ts.Column, KeyCols: cols, Key: kv, Row: g.label, Names: len(g.edits),
		Before: valueHash(typ, val), After: valueHash(typ, nv)}, nil
}

// readRow runs sel (rowid or NULL, typeof(column), column, the key columns; see specSQL)
// with args and returns the one row it finds (sql.ErrNoRows when none, an error when the key
// finds two). val is valid until the next call.
func (q *specSQL) readRow(ctx context.Context, table string, args []any) (sql.NullInt64, string, []byte, []any, error) {
	var rowid sql.NullInt64
	b := q.batch
	b.n, b.used = 0, 0
	if err := q.selSt.start(args); err != nil {
		return rowid, "", nil, nil, err
	}
	_, err := q.selSt.read(ctx, b, 2)
	q.selSt.reset() // the statement lets go of the row (its errors came back from read)
	if err != nil {
		return rowid, "", nil, nil, err
	}
	switch b.n {
	case 0:
		return rowid, "", nil, nil, sql.ErrNoRows
	case 1:
	default:
		return rowid, "", nil, nil, fmt.Errorf("the key of %s does not identify one row", table)
	}
	row := b.row(0)
	if row[0].kind == kindInt {
		rowid = sql.NullInt64{Int64: int64(row[0].i), Valid: true}
	}
	typ := b.str(&row[1])
	keys := make([]any, q.width-3)
	for i := range keys {
		keys[i] = b.value(&row[3+i])
	}
	return rowid, typ, b.bytes(&row[2]), keys, nil
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

// sortEdits puts edits in scan order: by table spec, rowid (or label, for keyed rows) and
// offset, so the edits of each row are together.
func sortEdits(ex *scanExtra, edits []store.Edit) error {
	type key struct {
		spec  int
		rowid int64
	}
	keys := make(map[string]key, len(edits))
	for _, e := range edits {
		if _, ok := keys[e.Site.Loc.Row]; ok {
			continue
		}
		spec, ok := ex.specOf(&e.Site)
		if !ok {
			return fmt.Errorf("%s: row not found in the scan", e.Site.Loc.Row)
		}
		keys[e.Site.Loc.Row] = key{spec, e.Site.Loc.RowID}
	}
	sort.SliceStable(edits, func(i, j int) bool {
		a, b := &edits[i].Site, &edits[j].Site
		ka, kb := keys[a.Loc.Row], keys[b.Loc.Row]
		switch {
		case ka.spec != kb.spec:
			return ka.spec < kb.spec
		case ka.rowid != kb.rowid:
			return ka.rowid < kb.rowid
		case a.Loc.Row != b.Loc.Row:
			return a.Loc.Row < b.Loc.Row
		}
		return a.Loc.Offset < b.Loc.Offset
	})
	return nil
}

// onlineBackup copies the database at src into a new file dst through the SQLite online backup
// API (a consistent image, whatever the journal mode), then makes dst a self-contained
// rollback-journal database and syncs it. dst must not exist.
func onlineBackup(ctx context.Context, held *handle, dst string, busy time.Duration) error {
	src := held.path
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
	sdb, err := openHeldDB(held.path, modeRO, busy, held.pin) // inside our write transaction: no probe (readMode)
	if err != nil {
		return err
	}
	defer sdb.Close()
	ddb, err := openDB(dst, modeRW, busy, store.FileID{})
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
