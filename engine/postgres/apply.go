package postgres

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/splice"
	"github.com/sessionfix/sessionfix/store"
)

// verifyInfo is Change.Verify of a PostgreSQL change: where undo finds the run's backup rows.
type verifyInfo struct {
	RunID  string `json:"run_id"`
	Schema string `json:"schema"`
	Table  string `json:"backup_table"`
	// Rows and Batches count what was written, in committed transactions.
	Rows    int64 `json:"rows"`
	Batches int64 `json:"batches"`
}

// backupDDL creates the backup table (and its run index) when missing.
func backupDDL() []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + ident(BackupTable) + ` (
	id bigserial PRIMARY KEY,
	run_id text NOT NULL,
	table_name text NOT NULL,
	key_column text NOT NULL,
	key_value text NOT NULL,
	column_name text NOT NULL,
	old_text text NOT NULL,
	old_hash text NOT NULL,
	new_hash text NOT NULL,
	new_xmin bigint,
	written_at timestamptz NOT NULL DEFAULT now(),
	restored_at timestamptz
)`,
		`CREATE INDEX IF NOT EXISTS ` + ident(BackupTable+"_run") + ` ON ` + ident(BackupTable) + ` (run_id, id)`,
	}
}

// md5Hex is PostgreSQL's md5(text) of b.
func md5Hex(b []byte) string {
	h := md5.Sum(b)
	return hex.EncodeToString(h[:])
}

// rowEdits are the edits of one row.
type rowEdits struct {
	tr       *tableRead
	key      string
	label    string
	version  int64
	sum      int64
	edits    []store.Edit
	readOnly bool
}

// skipList names rows left out, the first 20 of them.
type skipList struct {
	n     int
	names []string
}

func (l *skipList) add(label string) {
	l.n++
	if len(l.names) < maxProblemsPerKind {
		l.names = append(l.names, label)
	}
}

func (l *skipList) String() string {
	s := strings.Join(l.names, ", ")
	if l.n > len(l.names) {
		s += fmt.Sprintf(" and %d more", l.n-len(l.names))
	}
	return s
}

// applier is one ApplyBatches.
type applier struct {
	s        *Store
	db       *sqlx.DB
	reads    []*tableRead
	aopt     store.ApplyOptions
	ch       *store.Change
	info     verifyInfo
	started  bool // BeforeCommit was called
	locked   skipList
	changed  skipList
	deleted  skipList
	held     skipList // not written: a row of their group
	tokenErr error    // a name token not where the plan saw it (store.ErrTokenMismatch) a row of their group that could not be
}

// Apply is ApplyBatches with every edit in one call (still written in transactions of at most
// BatchRows rows).
func (s *Store) Apply(ctx context.Context, snap *store.Snapshot, edits []store.Edit, opt store.ApplyOptions) (*store.Change, error) {
	done := false
	return s.ApplyBatches(ctx, snap, func() ([]store.Edit, error) {
		if done {
			return nil, io.EOF
		}
		done = true
		return edits, nil
	}, opt)
}

// ApplyBatches rewrites the planned rows, one transaction per batch next hands in, split into
// transactions of at most BatchRows rows (never between a parent row and its child rows): see the package doc. It returns the
// Change once a batch committed; rows skipped (locked: store.ErrInUse; changed since the plan;
// deleted) and rows an application overwrote after the commit (the verify pass) are named in a
// *fileio.CommittedError wrapping a *store.InUseError (exit 4, the change still recorded).
// When no batch committed it returns no Change and the error.
func (s *Store) ApplyBatches(ctx context.Context, snap *store.Snapshot, next func() ([]store.Edit, error), opt store.ApplyOptions) (_ *store.Change, err error) {
	defer func() { err = s.scrub(err) }()
	db, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	sch, err := readSchema(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.ref, err)
	}
	if s.prof == nil {
		if s.prof = detectProfile(sch, append([]*Profile{s.opt.Profile}, s.opt.Profiles...)...); s.prof == nil {
			return nil, &NoProfileError{Ref: s.ref, Tables: sch.names}
		}
	}
	reads := resolve(s.prof, sch, &store.Snapshot{})
	for _, q := range backupDDL() {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("%s: create %s: %w", s.ref, BackupTable, err)
		}
	}
	run := opt.RunID
	if run == "" {
		run = filepath.Base(filepath.Dir(filepath.Dir(opt.BackupPath)))
	}
	if b := filepath.Base(opt.BackupPath); opt.BackupPath != "" {
		run += "/" + b
	}
	a := &applier{s: s, db: db, reads: reads, aopt: opt,
		info: verifyInfo{RunID: run, Schema: sch.schema, Table: BackupTable}}
	a.ch = &store.Change{Ref: s.Ref(), Backup: fmt.Sprintf("%s.%s run_id=%s", sch.schema, BackupTable, run)}
	n := s.opt.batch()
	var pending []*rowEdits
	index := map[string]*rowEdits{}
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		err := a.write(ctx, pending)
		pending, index = nil, map[string]*rowEdits{}
		return err
	}
	for {
		edits, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return a.result(ctx, err)
		}
		for _, e := range edits {
			tr := a.specOf(&e.Site)
			if tr == nil {
				return a.result(ctx, fmt.Errorf("%s: %s %s: no table of the profile holds this site", s.ref, e.Site.Loc.Row, e.Site.Path))
			}
			k := fmt.Sprint(tr.idx) + "\x00" + e.Site.Loc.Row
			r := index[k]
			if r == nil {
				key, ok := parseLabel(e.Site.Loc.Row, tr.spec.Table, tr.key.name)
				if !ok {
					return a.result(ctx, fmt.Errorf("%s: row %q: not a row label of table %s", s.ref, e.Site.Loc.Row, tr.spec.Table))
				}
				if len(pending) >= n && tr.parent < 0 {
					if err := flush(); err != nil {
						return a.result(ctx, err)
					}
				}
				r = &rowEdits{tr: tr, key: key, label: e.Site.Loc.Row, version: e.Site.Loc.RowVersion, sum: e.Site.Loc.RowSum}
				index[k] = r
				pending = append(pending, r)
			}
			r.edits = append(r.edits, e)
			r.readOnly = r.readOnly || e.Site.ReadOnly || tr.readOnly
		}
		// A batch handed in is a batch of the scan (whole parent rows with their children): its
		// own transaction, but for its last group (a parent row and its children), which the
		// next batch may go on with (a caller that cuts a row's edits in two).
		cut := len(pending)
		for cut > 0 && pending[cut-1].tr.parent >= 0 {
			cut--
		}
		if cut > 0 {
			cut--
		}
		if cut > 0 {
			rest := pending[cut:]
			pending = pending[:cut]
			if err := flush(); err != nil {
				return a.result(ctx, err)
			}
			pending = rest
			for _, r := range rest {
				index[fmt.Sprint(r.tr.idx)+"\x00"+r.label] = r
			}
		}
	}
	if err := flush(); err != nil {
		return a.result(ctx, err)
	}
	return a.result(ctx, nil)
}

// specOf is the table read a site belongs to: the spec whose "table key=" starts the row label
// (the longest such table name) and whose column starts the site path.
func (a *applier) specOf(site *store.Site) *tableRead {
	var best *tableRead
	for _, tr := range a.reads {
		if tr == nil {
			continue
		}
		if strings.HasPrefix(site.Loc.Row, tr.spec.Table+" "+tr.key.name+"=") && strings.HasPrefix(site.Path, tr.spec.Column+":") &&
			(best == nil || len(tr.spec.Table) > len(best.spec.Table)) {
			best = tr
		}
	}
	return best
}

// current is a row as the writer locked it.
type current struct {
	val   []byte
	xmin  int64
	group string // the parent key of a child row, the key of any other
}

// write writes one batch of rows in one transaction. A row that cannot be written (locked,
// changed since the plan, deleted) holds back every row of its group (a parent row and its
// child rows: both places of one chat change together or not at all).
func (a *applier) write(ctx context.Context, rows []*rowEdits) (err error) {
	s := a.s
	tx, err := a.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: begin: %w", s.ref, err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback()
		}
	}()
	var order []*tableRead
	byTable := map[*tableRead][]*rowEdits{}
	for _, r := range rows {
		if r.readOnly {
			return fmt.Errorf("%s: %s: the row's sites are read-only", s.ref, r.label)
		}
		if byTable[r.tr] == nil {
			order = append(order, r.tr)
		}
		byTable[r.tr] = append(byTable[r.tr], r)
	}
	// Pass 1: lock and check every row, splice the ones that may be written.
	type cand struct {
		r      *rowEdits
		group  string
		old    []byte
		nv     []byte
		reason *skipList // why it is not written (nil: it may be)
	}
	var cands []*cand
	held := map[string]bool{}
	for _, tr := range order {
		rs := byTable[tr]
		keys := make([]string, len(rs))
		for i, r := range rs {
			keys[i] = r.key
		}
		groupCol := tr.key
		if tr.parent >= 0 {
			groupCol = tr.pcol
		}
		groupOf := func(g string) string {
			if tr.parent >= 0 || a.hasChildren(tr) {
				return fmt.Sprint(a.rootOf(tr)) + "\x00" + g
			}
			return fmt.Sprint(tr.idx) + "\x00" + g
		}
		keyMatch := fmt.Sprintf("%s = ANY(($1::text[])::%s[])", ident(tr.key.name), tr.key.typ)
		got := map[string]current{}
		q := fmt.Sprintf("SELECT %s::text, %s::text, xmin::text::bigint, %s::text FROM %s WHERE %s FOR UPDATE SKIP LOCKED",
			ident(tr.key.name), ident(tr.col.name), ident(groupCol.name), ident(tr.tb.name), keyMatch)
		if err := queryRows(ctx, tx, q, []any{keys}, func(k string, v []byte, x int64, g string) { got[k] = current{val: v, xmin: x, group: g} }); err != nil {
			return fmt.Errorf("%s: lock rows of %s: %w", s.ref, tr.spec.Table, err)
		}
		var missing []string
		for _, k := range keys {
			if _, ok := got[k]; !ok {
				missing = append(missing, k)
			}
		}
		exists := map[string]string{}
		if len(missing) > 0 {
			q := fmt.Sprintf("SELECT %s::text, NULL::text, 0::bigint, %s::text FROM %s WHERE %s", ident(tr.key.name), ident(groupCol.name), ident(tr.tb.name), keyMatch)
			if err := queryRows(ctx, tx, q, []any{missing}, func(k string, _ []byte, _ int64, g string) { exists[k] = g }); err != nil {
				return fmt.Errorf("%s: read rows of %s: %w", s.ref, tr.spec.Table, err)
			}
		}
		for _, r := range rs {
			cur, ok := got[r.key]
			c := &cand{r: r, group: groupOf(cur.group)}
			cands = append(cands, c)
			g, there := exists[r.key]
			switch {
			case !ok && there:
				c.group, c.reason = groupOf(g), &a.locked
			case !ok:
				c.group, c.reason = fmt.Sprint(tr.idx)+"\x00deleted\x00"+r.key, &a.deleted
			case cur.val == nil:
				c.reason = &a.changed
			case r.sum != 0 && cur.xmin != r.version && RowSum(cur.val) != r.sum:
				// xmin moved (a quick first check) and the text is not the planned text.
				c.reason = &a.changed
			}
			if c.reason == nil {
				sort.SliceStable(r.edits, func(i, j int) bool { return r.edits[i].Site.Loc.Offset < r.edits[j].Site.Loc.Offset })
				nv, err := splice.Bytes(cur.val, r.edits)
				if err != nil {
					c.reason = &a.changed
					if errors.Is(err, store.ErrTokenMismatch) {
						a.tokenErr = err
					}
				} else {
					c.old, c.nv = cur.val, nv
				}
			}
			if c.reason != nil {
				held[c.group] = true
			}
		}
	}
	// Pass 2: write the rows whose group is whole.
	write := map[*tableRead][]*cand{}
	for _, c := range cands {
		switch {
		case c.reason != nil:
			c.reason.add(c.r.label)
		case held[c.group]:
			a.held.add(c.r.label)
		default:
			write[c.r.tr] = append(write[c.r.tr], c)
		}
	}
	written := int64(0)
	for _, tr := range order {
		cs := write[tr]
		if len(cs) == 0 {
			continue
		}
		ks, olds, news, hashes := make([]string, len(cs)), make([]string, len(cs)), make([]string, len(cs)), make([]string, len(cs))
		for i, c := range cs {
			ks[i], olds[i], news[i], hashes[i] = c.r.key, string(c.old), string(c.nv), md5Hex(c.nv)
		}
		// new_xmin is the xid this transaction gives the rows it writes (their xmin): the verify
		// pass's quick first check.
		ins := fmt.Sprintf(`INSERT INTO %s (run_id, table_name, key_column, key_value, column_name, old_text, old_hash, new_hash, new_xmin)
SELECT $1, $2, $3, u.k, $4, u.o, md5(u.o), u.h, txid_current() %% 4294967296 FROM unnest($5::text[], $6::text[], $7::text[]) AS u(k, o, h)`, ident(BackupTable))
		if _, err := tx.ExecContext(ctx, ins, a.info.RunID, tr.tb.name, tr.key.name, tr.col.name, ks, olds, hashes); err != nil {
			return fmt.Errorf("%s: back up rows of %s: %w", s.ref, tr.spec.Table, err)
		}
		upd := fmt.Sprintf("UPDATE %s AS t SET %s = u.v::%s FROM unnest($1::text[], $2::text[]) AS u(k, v) WHERE t.%s = u.k::%s",
			ident(tr.tb.name), ident(tr.col.name), tr.col.typ, ident(tr.key.name), tr.key.typ)
		res, err := tx.ExecContext(ctx, upd, ks, news)
		if err != nil {
			return fmt.Errorf("%s: write rows of %s: %w", s.ref, tr.spec.Table, err)
		}
		if n, err := res.RowsAffected(); err == nil && n != int64(len(ks)) {
			return fmt.Errorf("%s: write rows of %s: %d rows matched %d keys", s.ref, tr.spec.Table, n, len(ks))
		}
		written += int64(len(ks))
	}
	if written == 0 {
		return nil
	}
	if !a.started {
		a.started = true
		if a.aopt.BeforeCommit != nil {
			if err := a.aopt.BeforeCommit(a.change()); err != nil {
				return err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: commit: %w", s.ref, err)
	}
	committed = true
	a.info.Rows += written
	a.info.Batches++
	return nil
}

// rootOf is the index of the spec whose rows group tr's: its parent, or itself.
func (a *applier) rootOf(tr *tableRead) int {
	if tr.parent >= 0 {
		return tr.parent
	}
	return tr.idx
}

// hasChildren reports whether another spec names tr as its parent.
func (a *applier) hasChildren(tr *tableRead) bool {
	for _, c := range a.reads {
		if c != nil && c.parent == tr.idx {
			return true
		}
	}
	return false
}

// queryRows runs q and calls fn with each row's key text, value text (nil for NULL), xmin and
// group text (a fourth column, "" when q selects three).
func queryRows(ctx context.Context, tx *sqlx.Tx, q string, args []any, fn func(string, []byte, int64, string)) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v sql.RawBytes
		var x int64
		var g sql.NullString
		dst := []any{&k, &v, &x}
		if cols, _ := rows.Columns(); len(cols) > 3 {
			dst = append(dst, &g)
		}
		if err := rows.Scan(dst...); err != nil {
			return err
		}
		var val []byte
		if v != nil {
			val = append([]byte{}, v...)
		}
		fn(k, val, x, g.String)
	}
	return rows.Err()
}

// change is the Change as it stands (Verify with the counts so far).
func (a *applier) change() *store.Change {
	v, _ := json.Marshal(a.info)
	a.ch.Verify = v
	return a.ch
}

// result ends ApplyBatches: the verify pass when a batch committed, then the Change and what
// was left out or overwritten.
func (a *applier) result(ctx context.Context, failed error) (*store.Change, error) {
	var why []string
	if a.locked.n > 0 {
		why = append(why, fmt.Sprintf("%d rows locked by another transaction were skipped (lock_timeout; not rewritten): %s", a.locked.n, &a.locked))
	}
	if a.changed.n > 0 {
		why = append(why, fmt.Sprintf("%d rows changed since the plan were skipped (not rewritten): %s", a.changed.n, &a.changed))
	}
	if a.deleted.n > 0 {
		why = append(why, fmt.Sprintf("%d rows deleted since the plan: %s", a.deleted.n, &a.deleted))
	}
	if a.held.n > 0 {
		why = append(why, fmt.Sprintf("%d rows held back with a row of their chat (parent) that could not be rewritten: %s", a.held.n, &a.held))
	}
	if a.info.Batches == 0 {
		switch {
		case failed != nil:
			return nil, failed
		case len(why) > 0:
			return nil, &store.InUseError{Path: a.s.ref, Reason: strings.Join(why, "; "), Err: a.tokenErr}
		}
		return nil, fmt.Errorf("%s: no row to rewrite", a.s.ref)
	}
	ch := a.change()
	over, err := a.verify(ctx)
	if err != nil {
		ch.Warnings = append(ch.Warnings, "the check after the commit could not run: "+a.s.scrub(err).Error())
	}
	if over.n > 0 {
		why = append(why, fmt.Sprintf("%d rows rewritten by this run were overwritten since (an application wrote its own copy back; the fix is gone from them, their old text is in %s): %s", over.n, BackupTable, &over))
	}
	ch.Warnings = append(ch.Warnings, why...)
	switch {
	case failed != nil:
		return ch, &fileio.CommittedError{Err: failed}
	case len(why) > 0:
		return ch, &fileio.CommittedError{Err: &store.InUseError{Path: a.s.ref, Reason: strings.Join(why, "; "), Err: a.tokenErr}}
	}
	return ch, nil
}

// verify lists the rows the run wrote that no longer hold what it wrote: a row whose xmin is
// still the one the run's transaction gave it is unchanged (the quick first check); any other
// is compared by the MD5 of its text (an application that wrote the same text back is not
// reported).
func (a *applier) verify(ctx context.Context) (skipList, error) {
	var out skipList
	for _, tr := range a.reads {
		if tr == nil || tr.readOnly {
			continue
		}
		q := fmt.Sprintf(`SELECT b.key_value FROM %s b WHERE b.run_id = $1 AND b.table_name = $2 AND b.column_name = $3 AND b.restored_at IS NULL
AND NOT EXISTS (SELECT 1 FROM %s t WHERE t.%s = b.key_value::%s AND (t.xmin::text::bigint = b.new_xmin OR md5(t.%s::text) = b.new_hash)) ORDER BY b.id`,
			ident(BackupTable), ident(tr.tb.name), ident(tr.key.name), tr.key.typ, ident(tr.col.name))
		rows, err := a.db.QueryContext(ctx, q, a.info.RunID, tr.tb.name, tr.col.name)
		if err != nil {
			return out, err
		}
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return out, err
			}
			out.add(label(tr.spec.Table, tr.key.name, k))
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
