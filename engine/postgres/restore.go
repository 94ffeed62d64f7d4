package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/sessionfix/sessionfix/store"
)

// backupRow is one row of sessionfix_backup.
type backupRow struct {
	ID      int64  `db:"id"`
	Table   string `db:"table_name"`
	KeyCol  string `db:"key_column"`
	Key     string `db:"key_value"`
	Column  string `db:"column_name"`
	Old     string `db:"old_text"`
	NewHash string `db:"new_hash"`
}

// Restore undoes ch: the run's backup rows (Change.Verify names the run) not yet restored are
// read in batches of BatchRows, and in one transaction per batch each row that still holds
// what the run wrote (the MD5 of its text is the backup's new_hash) gets its old text back and
// its backup row is marked restored. A row that holds something else since (an application
// wrote it), was deleted, or is locked is left as it is; they are named in a
// *store.ChangedError (a row that holds something else is restored all the same with force).
// Restoring again goes on with the rows not restored yet.
//
// Its steps: open (the run's backup table, in the schema the run wrote), then per batch
// restoreBatch (each table and column of the batch: restoreGroup), then the error naming what
// was left (restorer.result).
func (s *Store) Restore(ctx context.Context, ch *store.Change, force bool) (err error) {
	defer func() { err = s.scrub(err) }()
	var info verifyInfo
	if err := json.Unmarshal(ch.Verify, &info); err != nil || info.RunID == "" {
		return fmt.Errorf("%s: the change does not name its backup rows (verify: %v)", s.ref, err)
	}
	if info.Table != BackupTable {
		return fmt.Errorf("%s: the change names backup table %q, not %s", s.ref, info.Table, BackupTable)
	}
	db, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	sch, err := readSchema(ctx, db)
	if err != nil {
		return fmt.Errorf("%s: %w", s.ref, err)
	}
	if sch.schema != info.Schema {
		return fmt.Errorf("%s: the run wrote schema %s, the connection's schema is %s (set search_path in the reference: ?search_path=%s)", s.ref, info.Schema, sch.schema, info.Schema)
	}
	if sch.table(BackupTable) == nil {
		return &store.ChangedError{Path: s.ref, Reason: fmt.Sprintf("the backup table %s is gone", BackupTable)}
	}
	r := &restorer{s: s, db: db, sch: sch, force: force, run: info.RunID}
	var last int64
	n := s.opt.batch()
	for {
		var rows []backupRow
		q := fmt.Sprintf(`SELECT id, table_name, key_column, key_value, column_name, old_text, new_hash FROM %s
WHERE run_id = $1 AND restored_at IS NULL AND id > $2 ORDER BY id LIMIT %d`, ident(BackupTable), n)
		if err := db.SelectContext(ctx, &rows, q, info.RunID, last); err != nil {
			return fmt.Errorf("%s: read %s: %w", s.ref, BackupTable, err)
		}
		if len(rows) == 0 {
			break
		}
		last = rows[len(rows)-1].ID
		if err := r.restoreBatch(ctx, rows); err != nil {
			return err
		}
	}
	return r.result()
}

// restorer is one Restore: the store's schema and what was left, by reason.
type restorer struct {
	s     *Store
	db    *sqlx.DB
	sch   *schema
	force bool
	run   string // the run's id (backup rows' run_id)

	changed, locked, deleted, gone skipList
}

// restoreBatch restores one batch of backup rows in one transaction: the rows of each table
// and column (restoreGroup, in the order they first come), then their backup rows marked
// restored, commit.
func (r *restorer) restoreBatch(ctx context.Context, rows []backupRow) error {
	s := r.s
	tx, err := r.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: begin: %w", s.ref, err)
	}
	var order []string
	groups := map[string][]backupRow{}
	for _, b := range rows {
		k := b.Table + "\x00" + b.KeyCol + "\x00" + b.Column
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], b)
	}
	var done []int64
	for _, k := range order {
		ids, err := r.restoreGroup(ctx, tx, groups[k])
		if err != nil {
			_ = tx.Rollback()
			return err
		}
		done = append(done, ids...)
	}
	if len(done) > 0 {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("UPDATE %s SET restored_at = now() WHERE run_id = $1 AND id = ANY($2::bigint[])", ident(BackupTable)), r.run, done); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("%s: mark %s: %w", s.ref, BackupTable, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: commit: %w", s.ref, err)
	}
	return nil
}

// restoreGroup restores the backup rows of one table and column (rows, all of them naming the
// same): it locks the rows (FOR UPDATE SKIP LOCKED) with the MD5 of their text, tells a row
// locked by another transaction from a deleted one, and writes the old text back into each row
// whose MD5 is what the run wrote (any row with force). It returns the ids of the backup rows
// restored; the others are added to r's lists. A table or column that is gone is named, not an
// error.
func (r *restorer) restoreGroup(ctx context.Context, tx *sqlx.Tx, rows []backupRow) ([]int64, error) {
	s, r0 := r.s, rows[0]
	tb := r.sch.table(r0.Table)
	kc, okK := column{}, false
	vc, okV := column{}, false
	if tb != nil {
		kc, okK = tb.column(r0.KeyCol)
		vc, okV = tb.column(r0.Column)
	}
	if !okK || !okV {
		for _, b := range rows {
			r.gone.add(label(b.Table, b.KeyCol, b.Key))
		}
		return nil, nil
	}
	keys := make([]string, len(rows))
	for i, b := range rows {
		keys[i] = b.Key
	}
	keyMatch := fmt.Sprintf("%s = ANY(($1::text[])::%s[])", ident(kc.name), kc.typ)
	hashes := map[string]string{}
	q := fmt.Sprintf("SELECT %s::text, md5(%s::text), 0::bigint FROM %s WHERE %s FOR UPDATE SKIP LOCKED", ident(kc.name), ident(vc.name), ident(tb.name), keyMatch)
	if err := queryRows(ctx, tx, q, []any{keys}, func(k string, h []byte, _ int64, _ string) { hashes[k] = string(h) }); err != nil {
		return nil, fmt.Errorf("%s: lock rows of %s: %w", s.ref, tb.name, err)
	}
	exists := map[string]bool{}
	q = fmt.Sprintf("SELECT %s::text, NULL::text, 0::bigint FROM %s WHERE %s", ident(kc.name), ident(tb.name), keyMatch)
	if err := queryRows(ctx, tx, q, []any{keys}, func(k string, _ []byte, _ int64, _ string) { exists[k] = true }); err != nil {
		return nil, fmt.Errorf("%s: read rows of %s: %w", s.ref, tb.name, err)
	}
	var ks, olds []string
	var done []int64
	for _, b := range rows {
		h, ok := hashes[b.Key]
		l := label(b.Table, b.KeyCol, b.Key)
		switch {
		case !ok && exists[b.Key]:
			r.locked.add(l)
			continue
		case !ok:
			r.deleted.add(l)
			continue
		case h != b.NewHash && !r.force:
			r.changed.add(l)
			continue
		}
		ks, olds = append(ks, b.Key), append(olds, b.Old)
		done = append(done, b.ID)
	}
	if len(ks) == 0 {
		return nil, nil
	}
	upd := fmt.Sprintf("UPDATE %s AS t SET %s = u.v::%s FROM unnest($1::text[], $2::text[]) AS u(k, v) WHERE t.%s = u.k::%s",
		ident(tb.name), ident(vc.name), vc.typ, ident(kc.name), kc.typ)
	if _, err := tx.ExecContext(ctx, upd, ks, olds); err != nil {
		return nil, fmt.Errorf("%s: restore rows of %s: %w", s.ref, tb.name, err)
	}
	return done, nil
}

// result is Restore's error: the rows left, by reason (nil when none): a *store.InUseError when
// every row left was locked (undo again later), else a *store.ChangedError.
func (r *restorer) result() error {
	var why []string
	if r.changed.n > 0 {
		why = append(why, fmt.Sprintf("%d rows hold another value than the run wrote (an application wrote them since): not restored: %s", r.changed.n, &r.changed))
	}
	if r.locked.n > 0 {
		why = append(why, fmt.Sprintf("%d rows locked by another transaction: not restored (undo again later): %s", r.locked.n, &r.locked))
	}
	if r.deleted.n > 0 {
		why = append(why, fmt.Sprintf("%d rows deleted since the run: %s", r.deleted.n, &r.deleted))
	}
	if r.gone.n > 0 {
		why = append(why, fmt.Sprintf("%d rows of a table or column that is gone: %s", r.gone.n, &r.gone))
	}
	if len(why) == 0 {
		return nil
	}
	if r.locked.n > 0 && r.changed.n == 0 && r.deleted.n == 0 && r.gone.n == 0 {
		return &store.InUseError{Path: r.s.ref, Reason: strings.Join(why, "; ")}
	}
	return &store.ChangedError{Path: r.s.ref, Reason: strings.Join(why, "; ")}
}
