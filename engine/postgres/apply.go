package postgres

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
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

// backupDDL creates the backup table when missing. Its primary key is (run_id, id): the one
// index every reader of it uses (undo reads a run's rows in id order, the verify pass a
// batch's id range), so each backup row costs one index entry. A table made by an earlier
// version (primary key id, and an index sessionfix_backup_run on (run_id, id)) is used as it is.
func backupDDL() []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS ` + ident(BackupTable) + ` (
	id bigserial,
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
	restored_at timestamptz,
	PRIMARY KEY (run_id, id)
)`,
	}
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
	s       *Store
	db      *sqlx.DB // schema, DDL, the verify pass
	reads   []*tableRead
	aopt    store.ApplyOptions
	ch      *store.Change
	info    verifyInfo
	writers []*writer
	seq     int         // batches handed to the writers so far
	abandon atomic.Bool // the run failed before its last batch: a writer leaves its open batch

	mu       sync.Mutex   // what follows, written by the writers
	started  bool         // BeforeCommit was called
	startErr error        // and failed: no writer commits
	marks    []batchMark  // what each committed batch wrote, per table: the verify pass's quick check
	wrote    map[int]bool // the specs (tableRead.idx) a committed batch wrote rows of
	skipped  []*skips     // the rows each batch left out, by batch number
}

// skips are the rows of a batch (or of a run: applier.result merges them in batch order) left
// out, by reason.
type skips struct {
	locked   skipList
	changed  skipList
	deleted  skipList
	dup      skipList // a key matching more than one row
	held     skipList // not written: a row of their group
	tokenErr error    // a name token not where the plan saw it (store.ErrTokenMismatch)
}

// merge adds o's rows after k's.
func (k *skips) merge(o *skips) {
	for _, p := range [][2]*skipList{{&k.locked, &o.locked}, {&k.changed, &o.changed}, {&k.deleted, &o.deleted}, {&k.dup, &o.dup}, {&k.held, &o.held}} {
		for _, l := range p[1].names {
			if len(p[0].names) < maxProblemsPerKind {
				p[0].names = append(p[0].names, l)
			}
		}
		p[0].n += p[1].n
	}
	if o.tokenErr != nil {
		k.tokenErr = o.tokenErr
	}
}

// Writers is how many transactions an apply keeps in flight, each on its own connection: two
// (the server works on one batch while the other's rows are checked and spliced, and a server
// with two cores writes two batches at once); their batches hold disjoint rows.
const Writers = 2

// writer is one connection of an apply and the batch whose transaction is open on it.
type writer struct {
	a     *applier
	conn  *pgx.Conn    // pipelined statements (pgconn.Batch: wire.go)
	cur   *lockedBatch // the batch whose transaction is open (its rows locked), nil for none
	stmts map[string]*pgconn.StatementDescription
	// Buffers the writer's batches reuse, one batch after another (a batch's bytes are dead by
	// the time the next batch of this writer needs them): the texts of the rows locked (read
	// into vals, dead once the batch is checked and spliced), their new texts (spliced into
	// news, dead once the write statement's parameters are encoded into its round trip) and
	// the write statement's text[] parameter (param, copied into the round trip's message).
	// Without them a batch of 500 chats of 1 KB allocated ~1.5 MB for these three copies.
	vals, news, param []byte
}

// job is a batch handed to a writer: its number and its rows.
type job struct {
	seq  int
	rows []*rowEdits
}

// batchMark is what one committed batch wrote into one table: the rows' transaction id (their
// xmin), how many, the heap pages their new versions went to (runs of consecutive page numbers,
// first and last) and the ids of their backup rows.
type batchMark struct {
	seq      int // the batch's number
	tr       *tableRead
	xid      int64
	rows     int64
	pages    [][2]int64
	bLo, bHi int64
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
	if snap != nil && snap.NotWritable != "" {
		return nil, fmt.Errorf("rewrite %s: %w: %s", s.ref, store.ErrNotWritable, snap.NotWritable)
	}
	// The writers' connections are opened while the schema is read and the backup table made on
	// the pool's (each connection is a round trip or more and an authentication: one after the
	// other they were most of the time between the plan's end and the first lock).
	dials := s.dialWriters(ctx)
	var conns []*pgx.Conn
	defer func() {
		if conns == nil {
			conns, _ = dials()
		}
		for _, c := range conns {
			c.Close(context.WithoutCancel(ctx))
		}
	}()
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
	a := &applier{s: s, db: db, reads: reads, aopt: opt, wrote: map[int]bool{},
		info: verifyInfo{RunID: run, Schema: sch.schema, Table: BackupTable}}
	if conns, err = dials(); err != nil {
		return nil, err
	}
	for _, conn := range conns {
		a.writers = append(a.writers, &writer{a: a, conn: conn})
	}
	a.ch = &store.Change{Ref: s.Ref(), Backup: fmt.Sprintf("%s.%s run_id=%s", sch.schema, BackupTable, run)}
	p := a.startWriters(ctx)
	defer p.cleanup()
	wait := p.wait
	n := s.opt.batch()
	var pending []*rowEdits
	index := map[string]*rowEdits{}
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		j := job{seq: a.seq, rows: pending}
		a.seq++
		pending, index = nil, map[string]*rowEdits{}
		return p.send(j)
	}
	for {
		edits, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return a.result(ctx, wait(err))
		}
		for _, e := range edits {
			tr := a.specOf(&e.Site)
			if tr == nil {
				return a.result(ctx, wait(fmt.Errorf("%s: %s %s: no table of the profile holds this site", s.ref, e.Site.Loc.Row, e.Site.Path)))
			}
			k := fmt.Sprint(tr.idx) + "\x00" + e.Site.Loc.Row
			r := index[k]
			if r == nil {
				key, ok := parseLabel(e.Site.Loc.Row, tr.spec.Table, tr.key.name)
				if !ok {
					return a.result(ctx, wait(fmt.Errorf("%s: row %q: not a row label of table %s", s.ref, e.Site.Loc.Row, tr.spec.Table)))
				}
				if len(pending) >= n && tr.parent < 0 {
					if err := flush(); err != nil {
						return a.result(ctx, wait(err))
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
				return a.result(ctx, wait(err))
			}
			pending = rest
			for _, r := range rest {
				index[fmt.Sprint(r.tr.idx)+"\x00"+r.label] = r
			}
		}
	}
	if err := flush(); err != nil {
		return a.result(ctx, wait(err))
	}
	return a.result(ctx, wait(nil))
}

// dialWriters opens the Writers connections of an apply (connectPipe), each on its own
// goroutine; the function it returns waits for them: every connection, or the first error
// (the others closed).
func (s *Store) dialWriters(ctx context.Context) func() ([]*pgx.Conn, error) {
	conns := make([]*pgx.Conn, Writers)
	errs := make([]error, Writers)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conns[i], errs[i] = s.connectPipe(ctx)
		}()
	}
	return func() ([]*pgx.Conn, error) {
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			for _, c := range conns {
				if c != nil {
					c.Close(context.WithoutCancel(ctx))
				}
			}
			return nil, errs[slices.IndexFunc(errs, func(e error) bool { return e != nil })]
		}
		return conns, nil
	}
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

// lockedBatch is a batch of rows locked in the writer's open transaction, checked and spliced:
// what its write statements send.
type lockedBatch struct {
	seq   int // the batch's number
	order []*tableRead
	write map[*tableRead][]*cand
	n     int // rows to write
}

// cand is one row of a batch as the writer locked it.
type cand struct {
	r      *rowEdits
	group  string
	rel    uint32     // the table (a partition of a partitioned table) and place of the locked
	tid    pgtype.TID // version: the UPDATE's target
	nv     []byte     // the new text
	reason *skipList  // why it is not written (nil: it may be)
}

// The writer's round trips (pgconn.Batch, wire.go: the statements of one step sent together, one Sync):
//
//	first batch:  BEGIN; SELECT … FOR UPDATE SKIP LOCKED (one per table)
//	each next:    the current batch's write statement (one per table: backup rows and UPDATE);
//	              COMMIT; BEGIN; the next batch's SELECT … FOR UPDATE SKIP LOCKED
//	last:         write; COMMIT
//
// so a batch costs one round trip (plus one to read rows that were not locked, when some are
// missing), and the next batch is locked and read while the current one commits. There are
// Writers writers, each on its connection, batch k going to writer k mod Writers: while the
// server works on one writer's step, the other's batch is checked and spliced (or, on a server
// with two cores, written too). Their batches hold disjoint rows (a row is in one batch: a
// parent row with its child rows), so they never wait on each other's locks. A batch with
// nothing to write ends with ROLLBACK instead of COMMIT. A step that holds a COMMIT is sent
// without the run's cancellation (statement_timeout bounds it): a cancelled run never leaves a
// commit whose outcome it does not know; it stops before the next step.

// writerPool runs the writers of an apply, batch k on writer k mod Writers (so a batch commits
// when its writer locks the batch Writers after it, or at the end).
type writerPool struct {
	a      *applier
	ctx    context.Context // the run's
	wctx   context.Context // ends with ctx, or when a writer failed
	stop   context.CancelFunc
	jobs   []chan job
	wg     sync.WaitGroup
	once   sync.Once
	err    error // the first writer's error
	waited bool
}

// startWriters starts a goroutine per writer.
func (a *applier) startWriters(ctx context.Context) *writerPool {
	p := &writerPool{a: a, ctx: ctx, jobs: make([]chan job, len(a.writers))}
	p.wctx, p.stop = context.WithCancel(ctx)
	for i, w := range a.writers {
		p.jobs[i] = make(chan job)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if err := w.run(p.wctx, ctx, p.jobs[i]); err != nil {
				p.once.Do(func() { p.err = err })
				p.stop()
			}
		}()
	}
	return p
}

// send hands j to its writer; when a writer failed, its error (the run's, when it ended).
func (p *writerPool) send(j job) error {
	select {
	case p.jobs[j.seq%len(p.jobs)] <- j:
		return nil
	case <-p.wctx.Done():
		if err := p.ctx.Err(); err != nil {
			return err
		}
		return p.wait(nil) // a writer failed: its error
	}
}

// wait closes the jobs and waits for the writers: each commits its open batch, unless the run
// failed (failed not nil: returned), when it is left for applier.result to roll back. It
// returns failed, else the first writer's error.
func (p *writerPool) wait(failed error) error {
	if failed != nil {
		p.a.abandon.Store(true)
	}
	if !p.waited {
		p.waited = true
		for _, c := range p.jobs {
			close(c)
		}
		p.wg.Wait()
	}
	if failed != nil {
		return failed
	}
	return p.err
}

// cleanup stops the writers when ApplyBatches did not wait for them (next panicked or called
// runtime.Goexit) and rolls back their open batches.
func (p *writerPool) cleanup() {
	p.stop()
	if !p.waited {
		_ = p.wait(errors.New("abandoned"))
		for _, w := range p.a.writers {
			if w.cur != nil {
				w.abort()
			}
		}
	}
}

// run is one writer: each batch of jobs locked in the round trip that writes and commits the
// batch before it (step), then, when jobs are done, the last one written and committed — unless
// the run was abandoned, when it is left for abort. It stops before a step when wctx ends (the
// run was interrupted, or another writer failed: ctx's error, or context.Canceled).
func (w *writer) run(wctx, ctx context.Context, jobs <-chan job) error {
	for j := range jobs {
		if err := wctx.Err(); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			return err
		}
		if err := w.step(ctx, &j); err != nil {
			return err
		}
	}
	if w.cur == nil || w.a.abandon.Load() {
		return nil
	}
	return w.step(ctx, nil)
}

// abort rolls back the open batch's transaction (its rows are not written).
func (w *writer) abort() {
	w.cur = nil
	if w.conn != nil && !w.conn.IsClosed() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _ = w.conn.Exec(ctx, "ROLLBACK")
		cancel()
	}
}

// beforeCommit calls ApplyOptions.BeforeCommit once, before the run's first COMMIT on any
// writer (the others wait for it); its error stops every writer.
func (a *applier) beforeCommit() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started {
		a.started = true
		if a.aopt.BeforeCommit != nil {
			a.startErr = a.aopt.BeforeCommit(a.change())
		}
	}
	return a.startErr
}

// step sends one round trip: the open batch's writes and COMMIT (or ROLLBACK), then, when next
// is not nil, BEGIN and the locks of next, which becomes the open batch.
func (w *writer) step(ctx context.Context, next *job) (err error) {
	a := w.a
	s := a.s
	b := &pgconn.Batch{}
	cur := w.cur
	type written struct {
		tr *tableRead
		n  int
	}
	var writes []written
	if cur != nil {
		if cur.n > 0 {
			if err := a.beforeCommit(); err != nil {
				w.abort()
				return err
			}
			for _, tr := range cur.order {
				if cs := cur.write[tr]; len(cs) > 0 {
					if err := a.queueWrite(ctx, w, b, tr, cs); err != nil {
						w.abort()
						return fmt.Errorf("%s: write rows of %s: %w", s.ref, tr.spec.Table, err)
					}
					writes = append(writes, written{tr, len(cs)})
				}
			}
			b.ExecParams("COMMIT", nil, nil, nil, nil)
		} else {
			b.ExecParams("ROLLBACK", nil, nil, nil, nil)
		}
	}
	var lockOrder []*tableRead
	var byTable map[*tableRead][]*rowEdits
	if next != nil {
		lockOrder, byTable, err = a.group(next.rows)
		if err != nil {
			w.abort()
			return err
		}
		b.ExecParams("BEGIN", nil, nil, nil, nil)
		for _, tr := range lockOrder {
			if err := a.queueLock(ctx, w, b, tr, byTable[tr]); err != nil {
				w.abort()
				return fmt.Errorf("%s: lock rows of %s: %w", s.ref, tr.spec.Table, err)
			}
		}
	}
	sendCtx := ctx
	if cur != nil && cur.n > 0 {
		sendCtx = context.WithoutCancel(ctx)
	}
	w.cur = nil
	br := w.conn.PgConn().ExecBatch(sendCtx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("%s: %w", s.ref, cerr)
		}
		if err != nil {
			w.abort()
		}
	}()
	if cur != nil {
		var marks []batchMark
		for _, wr := range writes {
			m, err := a.readWrite(br, wr.tr, wr.n)
			if err != nil {
				return err
			}
			m.seq = cur.seq
			marks = append(marks, m)
		}
		if err := execResult(br); err != nil {
			return fmt.Errorf("%s: commit: %w", s.ref, err)
		}
		if cur.n > 0 {
			a.mu.Lock()
			a.marks = append(a.marks, marks...)
			for _, m := range marks {
				a.wrote[m.tr.idx] = true
				a.info.Rows += m.rows
			}
			a.info.Batches++
			a.mu.Unlock()
		}
	}
	if next == nil {
		return nil
	}
	if err := execResult(br); err != nil {
		return fmt.Errorf("%s: begin: %w", s.ref, err)
	}
	lb := &lockedBatch{seq: next.seq, order: lockOrder, write: map[*tableRead][]*cand{}}
	got := make([]map[string]*lockRow, len(lockOrder))
	w.vals = w.vals[:0]
	for i, tr := range lockOrder {
		if got[i], err = a.readLock(br, tr, &w.vals); err != nil {
			return fmt.Errorf("%s: lock rows of %s: %w", s.ref, tr.spec.Table, err)
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("%s: %w", s.ref, err)
	}
	w.cur = lb // the transaction is open: abort rolls it back from here
	return w.check(ctx, lb, lockOrder, byTable, got)
}

// group sorts a batch's rows by table, in the order they come.
func (a *applier) group(rows []*rowEdits) ([]*tableRead, map[*tableRead][]*rowEdits, error) {
	var order []*tableRead
	byTable := map[*tableRead][]*rowEdits{}
	for _, r := range rows {
		if r.readOnly {
			return nil, nil, fmt.Errorf("%s: %s: the row's sites are read-only", a.s.ref, r.label)
		}
		if byTable[r.tr] == nil {
			order = append(order, r.tr)
		}
		byTable[r.tr] = append(byTable[r.tr], r)
	}
	return order, byTable, nil
}

// skip records the rows batch seq left out.
func (a *applier) skip(seq int, k *skips) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.skipped) <= seq {
		a.skipped = append(a.skipped, nil)
	}
	a.skipped[seq] = k
}

// groupCol is the column whose value groups tr's rows: its parent column, or its key.
func (a *applier) groupCol(tr *tableRead) column {
	if tr.parent >= 0 {
		return tr.pcol
	}
	return tr.key
}

func (tr *tableRead) keyMatch() string {
	return fmt.Sprintf("%s = ANY(($1::text[])::%s[])", ident(tr.key.name), tr.key.typ)
}

// queueLock queues the SELECT … FOR UPDATE SKIP LOCKED of rows (one table's): the planned rows
// by key (the key column's index), each with where it is (ctid), its text, xmin and group.
func (a *applier) queueLock(ctx context.Context, w *writer, b *pgconn.Batch, tr *tableRead, rows []*rowEdits) error {
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.key
	}
	q := fmt.Sprintf("SELECT tableoid::oid, ctid, %s::text, %s, xmin, %s::text FROM %s WHERE %s FOR UPDATE SKIP LOCKED",
		ident(tr.key.name), lockedText(tr), ident(a.groupCol(tr).name), ident(tr.tb.name), tr.keyMatch())
	sd, err := w.prepared(ctx, q, []uint32{oidTextArray})
	if err != nil {
		return err
	}
	b.ExecStatement(sd, [][]byte{textArray(keys)}, binaryFormat, binaryFormat)
	return nil
}

// lockedText is the lock's expression of the value's text: a json column as it is (its binary
// form, json_send, is its text, the bytes the plan's ::text read: ::text is an output and an
// input conversion, two copies and a strlen of each row's text on the server), another column
// as text (of text and varchar a relabeling; of bpchar without its trailing spaces, as the plan
// read it).
func lockedText(tr *tableRead) string {
	if tr.col.base == "json" {
		return ident(tr.col.name)
	}
	return ident(tr.col.name) + "::text"
}

// lockRow is one row as the writer locked it.
type lockRow struct {
	rel   uint32
	tid   pgtype.TID
	val   []byte
	xmin  int64
	group string // the parent key of a child row, the key of any other
	dup   bool   // another row has the same key text
}

// readLock reads the result of queueLock (binary format: oid, tid, text, text or json or NULL,
// xid (4 bytes, unsigned), text or NULL); the rows' texts are appended to *vals (each row's val a slice of it: valid
// until *vals is reused).
func (a *applier) readLock(br *pgconn.MultiResultReader, tr *tableRead, vals *[]byte) (map[string]*lockRow, error) {
	rr, err := nextResult(br)
	if err != nil {
		return nil, err
	}
	got := map[string]*lockRow{}
	for rr.NextRow() {
		v := rr.Values()
		if len(v) != 6 || len(v[0]) != 4 || v[2] == nil {
			rr.Close()
			return nil, errWire
		}
		r := &lockRow{rel: binary.BigEndian.Uint32(v[0])}
		if r.tid, err = readTID(v[1]); err == nil {
			r.xmin, err = readXID(v[4])
		}
		if err != nil {
			rr.Close()
			return nil, err
		}
		if v[3] != nil {
			at := len(*vals)
			*vals = append(*vals, v[3]...)
			r.val = (*vals)[at:len(*vals):len(*vals)]
		}
		if v[5] != nil {
			r.group = string(v[5])
		}
		k := string(v[2])
		if o := got[k]; o != nil {
			o.dup = true
			continue
		}
		got[k] = r
	}
	if _, err := rr.Close(); err != nil {
		return nil, err
	}
	return got, nil
}

// check decides, for each row of a locked batch, whether it is written (its text is the planned
// one: xmin as planned, else the checksum of its text; its tokens where the plan saw them) and
// splices it. A row that cannot be written (locked, changed since the plan, deleted, its key on
// several rows) holds back every row of its group (a parent row and its child rows: both places
// of one chat change together or not at all).
func (w *writer) check(ctx context.Context, lb *lockedBatch, order []*tableRead, byTable map[*tableRead][]*rowEdits, got []map[string]*lockRow) error {
	a := w.a
	s := a.s
	sk := &skips{}
	defer a.skip(lb.seq, sk)
	w.news = w.news[:0]
	var cands []*cand
	held := map[string]bool{}
	for i, tr := range order {
		rs := byTable[tr]
		groupOf := func(g string) string {
			if tr.parent >= 0 || a.hasChildren(tr) {
				return fmt.Sprint(a.rootOf(tr)) + "\x00" + g
			}
			return fmt.Sprint(tr.idx) + "\x00" + g
		}
		var missing []string
		for _, r := range rs {
			if got[i][r.key] == nil {
				missing = append(missing, r.key)
			}
		}
		exists := map[string]string{}
		if len(missing) > 0 {
			q := fmt.Sprintf("SELECT %s::text, %s::text FROM %s WHERE %s", ident(tr.key.name), ident(a.groupCol(tr).name), ident(tr.tb.name), tr.keyMatch())
			rows, err := w.conn.Query(ctx, q, missing)
			if err != nil {
				return fmt.Errorf("%s: read rows of %s: %w", s.ref, tr.spec.Table, err)
			}
			for rows.Next() {
				var k string
				var g *string
				if err := rows.Scan(&k, &g); err != nil {
					rows.Close()
					return fmt.Errorf("%s: read rows of %s: %w", s.ref, tr.spec.Table, err)
				}
				if g == nil {
					g = new(string)
				}
				exists[k] = *g
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("%s: read rows of %s: %w", s.ref, tr.spec.Table, err)
			}
		}
		for _, r := range rs {
			cur := got[i][r.key]
			c := &cand{r: r}
			cands = append(cands, c)
			g, there := exists[r.key]
			switch {
			case cur == nil && there:
				c.group, c.reason = groupOf(g), &sk.locked
			case cur == nil:
				c.group, c.reason = fmt.Sprint(tr.idx)+"\x00deleted\x00"+r.key, &sk.deleted
			case cur.dup:
				c.group, c.reason = groupOf(cur.group), &sk.dup
			case cur.val == nil:
				c.group, c.reason = groupOf(cur.group), &sk.changed
			case r.sum != 0 && cur.xmin != r.version && RowSum(cur.val) != r.sum:
				// xmin moved (a quick first check) and the text is not the planned text.
				c.group, c.reason = groupOf(cur.group), &sk.changed
			default:
				c.group, c.rel, c.tid = groupOf(cur.group), cur.rel, cur.tid
			}
			if c.reason == nil {
				sort.SliceStable(r.edits, func(i, j int) bool { return r.edits[i].Site.Loc.Offset < r.edits[j].Site.Loc.Offset })
				at := len(w.news)
				news, err := splice.Append(w.news, cur.val, r.edits)
				if err != nil {
					c.reason = &sk.changed
					if errors.Is(err, store.ErrTokenMismatch) {
						sk.tokenErr = err
					}
				} else {
					w.news = news
					c.nv = news[at:len(news):len(news)]
				}
			}
			if c.reason != nil {
				held[c.group] = true
			}
		}
	}
	for _, c := range cands {
		switch {
		case c.reason != nil:
			c.reason.add(c.r.label)
		case held[c.group]:
			sk.held.add(c.r.label)
		default:
			lb.write[c.r.tr] = append(lb.write[c.r.tr], c)
			lb.n++
		}
	}
	return nil
}

// queueWrite queues one table's write statement of a batch: the old text of each row into
// sessionfix_backup (run id, table, key column and value, column, old text, MD5 of the old and
// the new text, the transaction's xid) and the new text into the row, found by where the lock
// found it (tableoid and ctid: the row is locked, so it is still there; a ctid alone repeats
// across the partitions of a partitioned table). The backup's old text is copied from the locked
// row by the server (every sub-statement sees the rows as they were before the statement), and
// both MD5s are the server's md5() of the texts as it stores them (what undo and the verify pass
// compare with): only the new texts cross the wire (the old ones came back with the lock), and
// the client computes no hash. It returns how many rows each part
// wrote, the xid (the xmin of the rows written), the range of the backup rows' ids and where
// the rows' new versions are; when the rows written or backed up are not the rows locked, the
// statement fails (a cast of its message to int, in a subquery: CASE cannot keep the planner
// from folding a constant branch), so the COMMIT after it in the step is not run.
func (a *applier) queueWrite(ctx context.Context, w *writer, b *pgconn.Batch, tr *tableRead, cs []*cand) error {
	keys := make([]string, len(cs))
	size := 0
	for i, c := range cs {
		keys[i] = c.r.key
		size += len(c.nv)
	}
	w.param = binAppend(w.param[:0], oidText, len(cs), size, func(b []byte, i int) []byte { return append(b, cs[i].nv...) })
	rels := binArray(oidOID, len(cs), 4*len(cs), func(b []byte, i int) []byte { return binary.BigEndian.AppendUint32(b, cs[i].rel) })
	tids := binArray(oidTID, len(cs), 6*len(cs), func(b []byte, i int) []byte { return tidBytes(b, cs[i].tid) })
	q := writeSQL(tr)
	sd, err := w.prepared(ctx, q, []uint32{oidOIDArray, oidTIDArray, oidTextArray, oidTextArray,
		oidText, oidText, oidText, oidText, oidInt8})
	if err != nil {
		return err
	}
	b.ExecStatement(sd, [][]byte{rels, tids, textArray(keys), w.param,
		[]byte(a.info.RunID), []byte(tr.tb.name), []byte(tr.key.name), []byte(tr.col.name), int8Bytes(int64(len(cs)))}, binaryFormat, binaryFormat)
	return nil
}

// writeSQL is queueWrite's statement for tr's table. Parameters: $1 the locked rows' tableoids
// (oid[]), $2 their ctids (tid[]), $3 their keys and $4 their new texts (text[]), $5–$8 the run
// id, table, key column and column (text), $9 how many rows (int8). The locked rows are read
// once per part by one TID scan of every ctid (t.ctid = ANY($2)) joined to the parameters by a
// hash join: the writer's connection plans without nested loops (connectPipe), where a nested
// loop rescanned a TID scan for each row — each rescan asks the kernel for the table's size (an
// lseek) — twice per row (2026-12-07, one connection, 60 batches of 500 chats of the bench,
// backend CPU at load 4–5: 28 → 20 µs a row).
func writeSQL(tr *tableRead) string {
	// The new text as the column will give it back: a bpchar value loses its trailing spaces.
	newText := "u.v"
	if tr.col.base == "bpchar" {
		newText = "u.v::bpchar::text"
	}
	return fmt.Sprintf(`WITH u AS (SELECT * FROM unnest($1::oid[], $2::tid[], $3::text[], $4::text[]) AS u(r, c, k, v)),
b AS (INSERT INTO %[1]s (run_id, table_name, key_column, key_value, column_name, old_text, old_hash, new_hash, new_xmin)
 SELECT $5, $6, $7, u.k, $8, t.%[3]s::text, md5(t.%[3]s::text), md5(%[5]s), txid_current() %% 4294967296
 FROM u JOIN %[2]s AS t ON t.ctid = u.c AND t.tableoid = u.r WHERE t.ctid = ANY($2::tid[]) RETURNING id),
w AS (UPDATE %[2]s AS t SET %[3]s = u.v::%[4]s FROM u WHERE t.ctid = u.c AND t.tableoid = u.r AND t.ctid = ANY($2::tid[]) RETURNING t.ctid)
SELECT (SELECT count(*) FROM w), (SELECT count(*) FROM b), (SELECT min(id) FROM b), (SELECT max(id) FROM b),
 txid_current() %% 4294967296, (SELECT array_agg(ctid) FROM w),
 CASE WHEN (SELECT count(*) FROM w) = $9 AND (SELECT count(*) FROM b) = $9 THEN 0
  ELSE (SELECT 'sessionfix: ' || count(*) || ' rows written for the ' || $9 || ' rows locked' FROM w)::int END`,
		ident(BackupTable), ident(tr.tb.name), ident(tr.col.name), ident(tr.col.base), newText)
}

// readWrite reads the result of queueWrite of n rows (binary format: five int8, a tid[], an int4).
func (a *applier) readWrite(br *pgconn.MultiResultReader, tr *tableRead, n int) (batchMark, error) {
	m := batchMark{tr: tr}
	var nw, nb int64
	var tids []pgtype.TID
	if err := readWriteRow(br, &nw, &nb, &m.bLo, &m.bHi, &m.xid, &tids); err != nil {
		return m, fmt.Errorf("%s: write rows of %s: %w", a.s.ref, tr.spec.Table, err)
	}
	if nw != int64(n) || nb != int64(n) {
		return m, fmt.Errorf("%s: write rows of %s: %d rows written and %d backed up of %d locked", a.s.ref, tr.spec.Table, nw, nb, n)
	}
	m.rows = nw
	m.pages = pageRuns(tids)
	return m, nil
}

// readWriteRow reads the one row of a write statement's result.
func readWriteRow(br *pgconn.MultiResultReader, nw, nb, bLo, bHi, xid *int64, tids *[]pgtype.TID) error {
	rr, err := nextResult(br)
	if err != nil {
		return err
	}
	if !rr.NextRow() {
		if _, err := rr.Close(); err != nil {
			return err
		}
		return errors.New("no result row")
	}
	v := rr.Values()
	if len(v) != 7 {
		rr.Close()
		return errWire
	}
	for i, p := range []*int64{nw, nb, bLo, bHi, xid} {
		if *p, err = readInt8(v[i]); err != nil {
			rr.Close()
			return err
		}
	}
	if *tids, err = readTIDArray(v[5]); err == nil {
		_, err = readInt4(v[6])
	}
	if err != nil {
		rr.Close()
		return err
	}
	_, err = rr.Close()
	return err
}

// pageRuns is the heap pages of tids as runs of consecutive page numbers, each [first, last].
func pageRuns(tids []pgtype.TID) [][2]int64 {
	pages := make([]int64, len(tids))
	for i, t := range tids {
		pages[i] = int64(t.BlockNumber)
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i] < pages[j] })
	var out [][2]int64
	for _, p := range pages {
		if n := len(out); n > 0 && p <= out[n-1][1]+1 {
			out[n-1][1] = max(out[n-1][1], p)
			continue
		}
		out = append(out, [2]int64{p, p})
	}
	return out
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
	for _, w := range a.writers {
		if w.cur != nil {
			w.abort()
		}
	}
	sort.SliceStable(a.marks, func(i, j int) bool { return a.marks[i].seq < a.marks[j].seq })
	sk := &skips{}
	for _, k := range a.skipped {
		if k != nil {
			sk.merge(k)
		}
	}
	var why []string
	if sk.locked.n > 0 {
		why = append(why, fmt.Sprintf("%d rows locked by another transaction were skipped (lock_timeout; not rewritten): %s", sk.locked.n, &sk.locked))
	}
	if sk.changed.n > 0 {
		why = append(why, fmt.Sprintf("%d rows changed since the plan were skipped (not rewritten): %s", sk.changed.n, &sk.changed))
	}
	if sk.deleted.n > 0 {
		why = append(why, fmt.Sprintf("%d rows deleted since the plan: %s", sk.deleted.n, &sk.deleted))
	}
	if sk.dup.n > 0 {
		why = append(why, fmt.Sprintf("%d rows whose key is on more than one row were skipped (not rewritten; the profile's key column must be unique): %s", sk.dup.n, &sk.dup))
	}
	if sk.held.n > 0 {
		why = append(why, fmt.Sprintf("%d rows held back with a row of their chat (parent) that could not be rewritten: %s", sk.held.n, &sk.held))
	}
	if a.info.Batches == 0 {
		switch {
		case failed != nil:
			return nil, failed
		case len(why) > 0:
			return nil, &store.InUseError{Path: a.s.ref, Reason: strings.Join(why, "; "), Err: sk.tokenErr}
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
		return ch, &fileio.CommittedError{Err: &store.InUseError{Path: a.s.ref, Reason: strings.Join(why, "; "), Err: sk.tokenErr}}
	}
	return ch, nil
}

// verify lists the rows the run wrote that no longer hold what it wrote. With the batches'
// marks (ApplyBatches) and a server of PostgreSQL 14 or later (TID range scans), it first counts,
// per batch and table, the rows on the heap pages the batch's new versions went to whose xmin
// is still the batch's transaction: a batch whose count is its rows' is whole (only that
// transaction gave rows that xmin, and a row an application wrote since is a new version with
// another xmin), and this reads only those pages. Each other batch (or, without marks, the whole
// run) is compared row by row from its backup rows: a row whose xmin is still the one the run
// gave it is unchanged, any other is compared by the MD5 of its text (an application that wrote
// the same text back is not reported).
func (a *applier) verify(ctx context.Context) (skipList, error) {
	var out skipList
	if len(a.marks) > 0 {
		var v int
		if err := a.db.GetContext(ctx, &v, "SELECT current_setting('server_version_num')::int"); err != nil {
			return out, err
		}
		if v >= 140000 {
			return a.verifyMarks(ctx)
		}
	}
	for _, tr := range a.reads {
		if tr == nil || tr.readOnly || (a.wrote != nil && !a.wrote[tr.idx]) {
			continue
		}
		if err := a.verifyRows(ctx, tr, 0, -1, &out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// verifyMarks is verify's count per batch (one query per table), then verifyRows of each batch
// whose count is short.
func (a *applier) verifyMarks(ctx context.Context) (skipList, error) {
	var out skipList
	for _, tr := range a.reads {
		if tr == nil || !a.wrote[tr.idx] {
			continue
		}
		var marks []*batchMark
		for i := range a.marks {
			if m := &a.marks[i]; m.tr == tr {
				marks = append(marks, m)
			}
		}
		// xmin compared as an xid (the batch's, cast once per page run), not as text: the count
		// reads every row version on those pages. The runs are counted in two halves at once,
		// on two connections (the server's time is the pass's: it reads every page the run
		// wrote), each from the last batch back (verifyHalves).
		q := fmt.Sprintf(`SELECT s.i, (SELECT count(*) FROM %s t WHERE t.ctid >= s.lo AND t.ctid < s.hi AND t.xmin = s.x)
FROM unnest($1::int[], $2::tid[], $3::tid[], $4::text[]::xid[]) AS s(i, lo, hi, x)`, ident(tr.tb.name))
		found := make([]int64, len(marks))
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for k, h := range verifyHalves(marks) {
			if len(h.idx) == 0 {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[k] = a.countRuns(ctx, a.verifyConn(k), q, h.idx, h.lo, h.hi, h.xids, found)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return out, err
			}
		}
		for i, m := range marks {
			if found[i] != m.rows {
				if err := a.verifyRows(ctx, tr, m.bLo, m.bHi, &out); err != nil {
					return out, err
				}
			}
		}
	}
	return out, nil
}

// pageRunList is the page runs of a verify count: for each run its mark's index (into
// verifyMarks' marks), its first page and the page after its last (as TIDs), and its batch's
// transaction id.
type pageRunList struct {
	idx    []int32
	lo, hi []pgtype.TID
	xids   []string
}

// verifyHalves is the page runs of marks (in batch order) split into the two halves verify
// counts at once: the batches taken from the last back to the first, in turn to each half (a
// batch's runs in one half). The pages written last are the ones the server still holds in its
// buffers; read first, they are found there rather than read back after the older batches'
// pages pushed them out. Both halves go from the newest pages to the oldest: neither reads old
// pages in while the other still counts pages those push out (in batch order, the first half
// read the oldest pages while the second counted the newest). At 100k chats of the bench
// (shared_buffers 128 MB, pg_stat_statements): pages read back 7.8–9.9k → 6.8–6.9k, dirty
// pages written out to make room 7.4–9.5k → 6.2–6.6k (4 runs before, 2 after; newest first
// without dealing the batches in turn, in one half after the other: 7.0–8.1k read, 4 runs).
func verifyHalves(marks []*batchMark) [2]pageRunList {
	var h [2]pageRunList
	for j := len(marks) - 1; j >= 0; j-- {
		l := &h[(len(marks)-1-j)%2]
		m := marks[j]
		for _, p := range m.pages {
			l.idx = append(l.idx, int32(j))
			l.lo = append(l.lo, pgtype.TID{BlockNumber: uint32(p[0]), Valid: true})
			l.hi = append(l.hi, pgtype.TID{BlockNumber: uint32(p[1] + 1), Valid: true})
			l.xids = append(l.xids, strconv.FormatInt(m.xid, 10))
		}
	}
	return h
}

// verifyConn is the connection verify's half k counts on: writer k's, idle once the writers
// are done (no new connection for the pass: with the pool's own, the second half opened one),
// nil when it is closed (a writer whose connection failed): the pool's.
func (a *applier) verifyConn(k int) *pgx.Conn {
	if k < len(a.writers) {
		if c := a.writers[k].conn; c != nil && !c.IsClosed() && c.PgConn().TxStatus() == 'I' {
			return c
		}
	}
	return nil
}

// countRuns runs verifyMarks' count q over the page runs given on conn (nil: the pool's) and
// adds each run's count to found at its mark's index (the halves hold the runs of different
// marks: no two goroutines write one element).
func (a *applier) countRuns(ctx context.Context, conn *pgx.Conn, q string, idx []int32, lo, hi []pgtype.TID, xids []string, found []int64) error {
	add := func(i int32, n int64) error {
		if i < 0 || int(i) >= len(found) {
			return errWire
		}
		found[i] += n
		return nil
	}
	if conn != nil {
		rows, err := conn.Query(ctx, q, idx, lo, hi, xids)
		if err != nil {
			return err
		}
		defer rows.Close()
		return readCounts(rows, add)
	}
	rows, err := a.db.QueryContext(ctx, q, idx, lo, hi, xids)
	if err != nil {
		return err
	}
	defer rows.Close()
	return readCounts(rows, add)
}

// countRows is what readCounts reads of a query's rows: pgx.Rows and *sql.Rows both.
type countRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// readCounts hands each (index int4, count int8) row of rows to add.
func readCounts(rows countRows, add func(i int32, n int64) error) error {
	for rows.Next() {
		var i int32
		var n int64
		if err := rows.Scan(&i, &n); err != nil {
			return err
		}
		if err := add(i, n); err != nil {
			return err
		}
	}
	return rows.Err()
}

// verifyRows adds to out the rows of tr, among the run's backup rows with ids from lo to hi
// (hi < 0: all of them), that no longer hold what the run wrote: first the rows whose xmin is
// not the run's (key and xmin only), then, of those, the ones whose text's MD5 is not what the
// run wrote.
func (a *applier) verifyRows(ctx context.Context, tr *tableRead, lo, hi int64, out *skipList) error {
	q := fmt.Sprintf(`WITH c AS MATERIALIZED (SELECT b.id, b.key_value, b.new_hash FROM %[1]s b
 WHERE b.run_id = $1 AND b.table_name = $2 AND b.column_name = $3 AND b.restored_at IS NULL AND b.id >= $4 AND ($5 < 0 OR b.id <= $5)
 AND NOT EXISTS (SELECT 1 FROM %[2]s t WHERE t.%[3]s = b.key_value::%[4]s AND t.xmin::text::bigint = b.new_xmin))
SELECT c.key_value FROM c WHERE NOT EXISTS (SELECT 1 FROM %[2]s t WHERE t.%[3]s = c.key_value::%[4]s AND md5(t.%[5]s::text) = c.new_hash) ORDER BY c.id`,
		ident(BackupTable), ident(tr.tb.name), ident(tr.key.name), tr.key.typ, ident(tr.col.name))
	rows, err := a.db.QueryContext(ctx, q, a.info.RunID, tr.tb.name, tr.col.name, lo, hi)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return err
		}
		out.add(label(tr.spec.Table, tr.key.name, k))
	}
	return rows.Err()
}
