package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

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
	var changed, locked, deleted, gone skipList
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
		tx, err := db.BeginTxx(ctx, nil)
		if err != nil {
			return fmt.Errorf("%s: begin: %w", s.ref, err)
		}
		type group struct{ rows []backupRow }
		var order []string
		groups := map[string]*group{}
		for _, r := range rows {
			k := r.Table + "\x00" + r.KeyCol + "\x00" + r.Column
			if groups[k] == nil {
				groups[k] = &group{}
				order = append(order, k)
			}
			groups[k].rows = append(groups[k].rows, r)
		}
		var done []int64
		for _, k := range order {
			g := groups[k]
			r0 := g.rows[0]
			tb := sch.table(r0.Table)
			kc, okK := column{}, false
			vc, okV := column{}, false
			if tb != nil {
				kc, okK = tb.column(r0.KeyCol)
				vc, okV = tb.column(r0.Column)
			}
			if !okK || !okV {
				for _, r := range g.rows {
					gone.add(label(r.Table, r.KeyCol, r.Key))
				}
				continue
			}
			keys := make([]string, len(g.rows))
			for i, r := range g.rows {
				keys[i] = r.Key
			}
			keyMatch := fmt.Sprintf("%s = ANY(($1::text[])::%s[])", ident(kc.name), kc.typ)
			hashes := map[string]string{}
			q := fmt.Sprintf("SELECT %s::text, md5(%s::text), 0::bigint FROM %s WHERE %s FOR UPDATE SKIP LOCKED", ident(kc.name), ident(vc.name), ident(tb.name), keyMatch)
			if err := queryRows(ctx, tx, q, []any{keys}, func(k string, h []byte, _ int64, _ string) { hashes[k] = string(h) }); err != nil {
				_ = tx.Rollback()
				return fmt.Errorf("%s: lock rows of %s: %w", s.ref, tb.name, err)
			}
			exists := map[string]bool{}
			q = fmt.Sprintf("SELECT %s::text, NULL::text, 0::bigint FROM %s WHERE %s", ident(kc.name), ident(tb.name), keyMatch)
			if err := queryRows(ctx, tx, q, []any{keys}, func(k string, _ []byte, _ int64, _ string) { exists[k] = true }); err != nil {
				_ = tx.Rollback()
				return fmt.Errorf("%s: read rows of %s: %w", s.ref, tb.name, err)
			}
			var ks, olds []string
			for _, r := range g.rows {
				h, ok := hashes[r.Key]
				l := label(r.Table, r.KeyCol, r.Key)
				switch {
				case !ok && exists[r.Key]:
					locked.add(l)
					continue
				case !ok:
					deleted.add(l)
					continue
				case h != r.NewHash && !force:
					changed.add(l)
					continue
				}
				ks, olds = append(ks, r.Key), append(olds, r.Old)
				done = append(done, r.ID)
			}
			if len(ks) == 0 {
				continue
			}
			upd := fmt.Sprintf("UPDATE %s AS t SET %s = u.v::%s FROM unnest($1::text[], $2::text[]) AS u(k, v) WHERE t.%s = u.k::%s",
				ident(tb.name), ident(vc.name), vc.typ, ident(kc.name), kc.typ)
			if _, err := tx.ExecContext(ctx, upd, ks, olds); err != nil {
				_ = tx.Rollback()
				return fmt.Errorf("%s: restore rows of %s: %w", s.ref, tb.name, err)
			}
		}
		if len(done) > 0 {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("UPDATE %s SET restored_at = now() WHERE id = ANY($1::bigint[])", ident(BackupTable)), done); err != nil {
				_ = tx.Rollback()
				return fmt.Errorf("%s: mark %s: %w", s.ref, BackupTable, err)
			}
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("%s: commit: %w", s.ref, err)
		}
	}
	var why []string
	if changed.n > 0 {
		why = append(why, fmt.Sprintf("%d rows hold another value than the run wrote (an application wrote them since): not restored: %s", changed.n, &changed))
	}
	if locked.n > 0 {
		why = append(why, fmt.Sprintf("%d rows locked by another transaction: not restored (undo again later): %s", locked.n, &locked))
	}
	if deleted.n > 0 {
		why = append(why, fmt.Sprintf("%d rows deleted since the run: %s", deleted.n, &deleted))
	}
	if gone.n > 0 {
		why = append(why, fmt.Sprintf("%d rows of a table or column that is gone: %s", gone.n, &gone))
	}
	if len(why) > 0 {
		if locked.n > 0 && changed.n == 0 && deleted.n == 0 && gone.n == 0 {
			return &store.InUseError{Path: s.ref, Reason: strings.Join(why, "; ")}
		}
		return &store.ChangedError{Path: s.ref, Reason: strings.Join(why, "; ")}
	}
	return nil
}
