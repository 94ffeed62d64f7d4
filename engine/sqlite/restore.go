package sqlite

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

// Restore undoes ch. When the database is still exactly the file the run left (no hot journal,
// no WAL holding frames, its main file's XXH3-128 the one the run recorded after its commit) and
// no other process holds it open for writing, the backup's bytes are put back (restoreFile,
// filerestore.go: the file byte for byte, mode and mtime). Otherwise, row by row: under the write lock (BEGIN IMMEDIATE with the busy timeout), every value
// the change rewrote is checked to still hash to what the change wrote, and its original value
// is copied back from the backup (read through SQLite, never by copying the live database
// file). Rows the agent added or changed elsewhere since the run are kept. A rewritten value
// that changed or disappeared since the run refuses the undo with a *store.ChangedError, unless
// force is set (then the original values are put back where the rows still exist). PRAGMA
// integrity_check must say "ok" before COMMIT. The backup must still hash to ch.Before.SHA256.
// A row-by-row restore that changed anything tells the context's note recorder
// (fileio.WithNoteRecorder) why the file's bytes could not be put back.
func (s *Store) Restore(ctx context.Context, ch *store.Change, force bool) error {
	var v verifyInfo
	if err := json.Unmarshal(ch.Verify, &v); err != nil || v.Version != 1 || v.RowsFile == "" {
		return fmt.Errorf("restore %s: the run records no SQLite change (verify data: %v)", s.path, err)
	}
	if got, err := fileio.HashFile(ch.Backup); err != nil {
		return fmt.Errorf("read backup %s: %w", ch.Backup, err)
	} else if got != ch.Before.SHA256 {
		return fmt.Errorf("backup %s is damaged: sha256 %s, want %s", ch.Backup, got, ch.Before.SHA256)
	}
	// The change record is streamed (a run of millions of rows is not held in memory): hashed
	// first, then hashed again as it is decoded, so nothing is committed unless what was read
	// is what the run recorded.
	if got, err := fileio.HashFile(v.RowsFile); err != nil {
		return fmt.Errorf("read change record %s: %w", v.RowsFile, err)
	} else if got != v.RowsSHA256 {
		return fmt.Errorf("change record %s is damaged", v.RowsFile)
	}
	rf, err := os.Open(v.RowsFile)
	if err != nil {
		return fmt.Errorf("read change record %s: %w", v.RowsFile, err)
	}
	defer rf.Close()
	rh := sha256.New()
	rows := io.TeeReader(rf, rh)
	if _, err := os.Stat(s.path); err != nil {
		return &store.ChangedError{Path: s.path, Reason: fmt.Sprintf("the database is gone (%v)", err)}
	}
	// The file's own bytes when it is still exactly what the run left (filerestore.go), else
	// row by row below, saying why.
	done, why, err := s.restoreFile(ctx, ch, v.File)
	if done || err != nil {
		return err
	}

	busy := s.opt.busy()
	bdb, err := openDB(ch.Backup, modeRO, busy, store.FileID{})
	if err != nil {
		return err
	}
	defer bdb.Close()
	bconn, err := bdb.Connx(ctx)
	if err != nil {
		return fmt.Errorf("open backup %s: %w", ch.Backup, err)
	}
	defer bconn.Close()
	db, err := openDB(s.path, modeRW, busy, s.opt.Pin)
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return fmt.Errorf("open %s: %w", s.path, err)
	}
	defer conn.Close()
	if err := newTargetGuard(v.Targets).install(ctx, conn); err != nil {
		return fmt.Errorf("open %s: %w", s.path, err)
	}
	tx, err := beginWrite(ctx, conn, s.path, busy)
	if err != nil {
		return err
	}
	defer tx.Rollback() // nothing to undo once committed

	stmts, bstmts := newStmtCache(tx), newStmtCache(bconn)
	defer stmts.close()
	defer bstmts.close()
	rr := &rowRestorer{path: s.path, backup: ch.Backup, rowsFile: v.RowsFile, force: force, stmts: stmts, bstmts: bstmts}
	dec := json.NewDecoder(bufio.NewReaderSize(rows, 64<<10))
	dec.UseNumber()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var l rowLine
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("read change record %s: %w", v.RowsFile, err)
		}
		if err := rr.row(ctx, &l); err != nil {
			return err
		}
	}
	if _, err := io.Copy(io.Discard, rows); err != nil {
		return fmt.Errorf("read change record %s: %w", v.RowsFile, err)
	}
	if hex.EncodeToString(rh.Sum(nil)) != v.RowsSHA256 {
		return fmt.Errorf("change record %s is damaged", v.RowsFile)
	}
	if rr.nchanged > 0 && !force {
		more := ""
		if rr.nchanged > 3 {
			more = fmt.Sprintf(" and %d more", rr.nchanged-3)
		}
		return &store.ChangedError{Path: s.path, Reason: fmt.Sprintf("rows changed: %s%s", strings.Join(rr.changed, ", "), more)}
	}
	if res, err := integrityCheck(ctx, tx); err != nil {
		return fmt.Errorf("check %s: %w", s.path, err)
	} else if res != "ok" {
		return fmt.Errorf("restore %s: integrity_check says %q; nothing was changed", s.path, res)
	}
	if err := commit(tx, s.path, busy); err != nil {
		return err
	}
	if rr.updated > 0 {
		fileio.Note(ctx, rowLevelNote(why))
	}
	return nil
}

// rowRestorer puts back the rows of one Restore, row by row, from the backup database: what
// it refused (changed: the first few, nchanged: how many) and how many rows it updated.
type rowRestorer struct {
	path, backup, rowsFile string
	force                  bool
	stmts, bstmts          *stmtCache
	changed                []string
	nchanged, updated      int
}

// note records a row changed or deleted since the run.
func (r *rowRestorer) note(what string) {
	r.nchanged++
	if len(r.changed) < 3 {
		r.changed = append(r.changed, what)
	}
}

// row puts back the original value of one change record line l when the row still holds
// what the run wrote (or, with force, anything else but the original); a row deleted or
// changed since is noted. The backup must hold the original the run recorded.
func (r *rowRestorer) row(ctx context.Context, l *rowLine) error {
	keys, err := decodeKeys(l.Key)
	if err != nil {
		return fmt.Errorf("read change record %s: %s: %w", r.rowsFile, l.Row, err)
	}
	where, args := keyWhere(l.KeyCols, keys)
	btyp, bval, err := readValue(ctx, r.bstmts, "main", l.Table, l.Column, where, args)
	if err != nil {
		return fmt.Errorf("read %s from backup %s: %w", l.Row, r.backup, err)
	}
	if valueHash(btyp, bval) != l.Before {
		return fmt.Errorf("backup %s does not hold the original of %s", r.backup, l.Row)
	}
	typ, val, err := readValue(ctx, r.stmts, "main", l.Table, l.Column, where, args)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		r.note(l.Row + " was deleted")
		return nil
	case err != nil:
		return fmt.Errorf("read %s of %s: %w", l.Row, r.path, err)
	}
	switch valueHash(typ, val) {
	case l.Before:
		return nil // already the original
	case l.After:
	default:
		r.note(l.Row + " changed")
		if !r.force {
			return nil
		}
	}
	if _, err := r.stmts.ExecContext(ctx, fmt.Sprintf("UPDATE %s SET %s = ? WHERE %s", quoteIdent(l.Table), quoteIdent(l.Column), where),
		append([]any{bindValue(btyp, bval)}, args...)...); err != nil {
		return fmt.Errorf("restore %s of %s: %w", l.Row, r.path, err)
	}
	r.updated++
	return nil
}

// decodeKeys turns JSON key values back into driver values (integers stay int64).
func decodeKeys(raw []any) ([]any, error) {
	out := make([]any, len(raw))
	for i, k := range raw {
		switch v := k.(type) {
		case string:
			out[i] = v
		case json.Number:
			if n, err := v.Int64(); err == nil {
				out[i] = n
			} else if f, err := v.Float64(); err == nil {
				out[i] = f
			} else {
				return nil, fmt.Errorf("bad key %s", v)
			}
		default:
			return nil, fmt.Errorf("bad key %v", k)
		}
	}
	return out, nil
}
