package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/jmoiron/sqlx"
	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
)

// zstdMagic starts a zstd frame: such payloads are reported, never parsed (stores.md §3).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// batchRows is how many rows one query reads (a rollback-journal writer waits at most this),
// and how many rows' sites one batch of ScanBatches holds at most. Each of the scan's four
// row buffers grows to hold a batch (the bench database's rows average ~1.4 KB: ~0.7 MiB at 500 rows,
// where 2000 rows took ~4 MiB each); more, shorter queries cost nothing measurable (100k-part
// bench database: CPU 0.89 s at 2000, 0.78 s at 500, medians of 7).
const batchRows = 500

// maxProblemsPerKind caps how many problems of one reason a store reports one by one.
const maxProblemsPerKind = 20

// scanExtra is what a Writer needs from a scan to find each row with sites again. Rows of
// rowid tables are found by Site.Loc.RowID, so it holds nothing per row for them; only rows of
// WITHOUT ROWID tables (found by their key values) are kept, by label.
type scanExtra struct {
	comp     *compiled
	keyCols  [][]string // per table spec: the key columns ("rowid" when none)
	hasRowid []bool     // per table spec
	keyed    map[string]keyedRow
	fastRows int64 // rows read by the SQL-assisted path (fast.go), not lexed
}

// keyedRow is a row of a WITHOUT ROWID table: its table spec and key values.
type keyedRow struct {
	spec int
	keys []any
}

// specOf returns the table spec a site of the scan was read with: the spec of its keyed row,
// else the rowid table spec whose table starts the row label (the longest such name) and whose
// column starts the site path.
func (ex *scanExtra) specOf(site *store.Site) (int, bool) {
	if k, ok := ex.keyed[site.Loc.Row]; ok {
		return k.spec, true
	}
	best, n := -1, -1
	for i, ct := range ex.comp.tables {
		ts := ct.spec
		if ex.keyCols[i] == nil || !ex.hasRowid[i] || len(ts.Table) <= n {
			continue
		}
		if strings.HasPrefix(site.Loc.Row, ts.Table+" ") && strings.HasPrefix(site.Path, ts.Column+":") {
			best, n = i, len(ts.Table)
		}
	}
	return best, best >= 0
}

// arenaChunk is the size of the blocks the Raw tokens of a batch's sites are copied into.
const arenaChunk = 64 << 10

// maxInterned caps the distinct names shared between sites (a store repeats a few names).
const maxInterned = 4096

// reader is one read-only scan of a database.
type reader struct {
	path     string
	conn     *sqlx.Conn
	sch      *schema
	snap     *store.Snapshot
	extra    *scanExtra
	progress func(int64)
	counts   map[string]int // problems per reason kind
	emit     func(*store.Snapshot, []store.Site) error
	batch    []store.Site
	arena    []byte
	names    map[string]string
	paths    map[string]string
	lastPath []pathMemo          // per pattern id of the current table: the last path rendered
	labels   map[string]int64    // labels of rows keyed by a profile's Key (not unique by schema)
	dupCol   []bool              // per table spec: an earlier spec reads the same table.column
	lines    []*jsonscan.Scanner // per table spec
	cur      rowCtx
}

// pathMemo is one rendered site path.
type pathMemo struct {
	path jsonscan.Path
	text string
}

// flush hands the sites gathered so far to emit, which owns them (store.BatchScanner): the
// next batch starts in a new slice a quarter larger than this one (grown by append only when
// a batch holds that many more sites).
func (r *reader) flush() error {
	if len(r.batch) == 0 {
		return nil
	}
	b := r.batch
	// room for a batch a little larger; the sites handed out point into the old arena
	r.batch = make([]store.Site, 0, len(b)+len(b)/4)
	r.arena = nil
	return r.emit(r.snap, b)
}

// raw copies a token into the batch's arena.
func (r *reader) raw(b []byte) []byte {
	if len(b) > cap(r.arena)-len(r.arena) {
		r.arena = make([]byte, 0, max(arenaChunk, len(b)))
	}
	n := len(r.arena)
	r.arena = append(r.arena, b...)
	return r.arena[n:len(r.arena):len(r.arena)]
}

// internBytes is intern of a name still in a row batch: copied only when not shared already.
func (r *reader) internBytes(b []byte) string {
	if v, ok := r.names[string(b)]; ok {
		return v
	}
	return r.intern(string(b))
}

// intern shares equal names.
func (r *reader) intern(s string) string {
	if v, ok := r.names[s]; ok {
		return v
	}
	if len(r.names) < maxInterned {
		r.names[s] = s
	}
	return s
}

func (r *reader) problem(kind string, sev store.Severity, loc store.Loc, reason string) {
	r.counts[kind]++
	if r.counts[kind] <= maxProblemsPerKind {
		r.snap.Problems = append(r.snap.Problems, store.Problem{Loc: loc, Severity: sev, Reason: reason})
	}
}

// Scan reads every table of the store's profile and returns its name sites (Loc.Row names the
// row, Loc.RowID is its rowid, Loc.Offset is the byte offset of the name token inside the
// column value). Missing tables and columns, invalid JSON, invalid UTF-8 and zstd-compressed
// payloads are problems; Scan fails only when the database cannot be opened or read, or no
// profile matches it. It holds every site; ScanBatches does not.
func (s *Store) Scan(ctx context.Context, opt store.ScanOptions) (*store.Snapshot, error) {
	var batches [][]store.Site // each owned (store.BatchScanner): kept as handed out
	n := 0
	snap, err := s.ScanBatches(ctx, opt, func(_ *store.Snapshot, sites []store.Site) error {
		batches = append(batches, sites)
		n += len(sites)
		return nil
	})
	if err != nil {
		return nil, err
	}
	snap.Sites = make([]store.Site, 0, n)
	for _, b := range batches {
		snap.Sites = append(snap.Sites, b...)
	}
	return snap, nil
}

// ScanBatches is Scan handing the sites to fn after each batch of at most batchRows rows read
// (store.BatchScanner): memory holds one batch, whatever the size of the database. The
// returned snapshot has no Sites; Apply and ApplyBatches take it with the edits.
func (s *Store) ScanBatches(ctx context.Context, opt store.ScanOptions, fn func(*store.Snapshot, []store.Site) error) (snap *store.Snapshot, err error) {
	defer func() {
		// A lock another process keeps past the busy timeout (an EXCLUSIVE lock, a writer in
		// rollback-journal mode) makes the store in use, not unreadable.
		if err != nil && isBusy(err) {
			snap, err = nil, &store.InUseError{Path: s.path, Reason: fmt.Sprintf("locked by another process; gave up reading it after %s (--busy-timeout)", s.opt.busy())}
		} else if err != nil && journalAppeared(err) {
			snap, err = nil, &store.InUseError{Path: s.path, Reason: "written while it was read: a rollback journal it judged hot appeared between two reads (a writer's, or one that crashed just now); run again once it is done"}
		}
	}()
	st, err := fileState(s.path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	if st.Mode.IsDir() {
		return nil, fmt.Errorf("read %s: is a directory", s.path)
	}
	if s.opt.RollBack {
		if ok, err := rollBackHotJournal(ctx, s.path, s.opt.busy(), s.opt.Pin); err != nil {
			return nil, err
		} else if ok {
			s.rolledBack = s.path + "-journal"
		}
		if st, err = fileState(s.path); err != nil {
			return nil, fmt.Errorf("open %s: %w", s.path, err)
		}
	}
	db, err := openDB(s.path, modeRO, s.opt.busy(), s.opt.Pin)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, hotJournalErr(s.path, fmt.Errorf("open %s: %w", s.path, err))
	}
	defer conn.Close()
	if err := conn.Raw(func(dc any) error {
		c, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("unexpected SQLite driver connection %T", dc)
		}
		return registerExtract(c)
	}); err != nil {
		return nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	sch, err := readSchema(ctx, conn)
	if err != nil {
		return nil, hotJournalErr(s.path, fmt.Errorf("%s: %w", s.path, err))
	}
	if s.prof == nil {
		s.prof = detectProfile(s.path, sch, append([]*Profile{s.opt.Profile}, s.opt.Profiles...)...)
		if s.prof == nil {
			return nil, &NoProfileError{Path: s.path, Tables: sch.names}
		}
	}
	comp, err := compileProfile(s.prof)
	if err != nil {
		return nil, err
	}
	mode, err := journalMode(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	snap = &store.Snapshot{Ref: s.Ref(), State: st, Agent: s.prof.Agent}
	if s.rolledBack != "" {
		snap.Problems = append(snap.Problems, store.Problem{Severity: store.SevWarning,
			Reason: fmt.Sprintf("rolled back the hot journal a crashed writer left (%s): the database is as it was before that unfinished transaction", s.rolledBack)})
	}
	n := len(comp.tables)
	r := &reader{path: s.path, conn: conn, sch: sch, snap: snap, progress: opt.Progress, emit: fn,
		extra:  &scanExtra{comp: comp, keyCols: make([][]string, n), hasRowid: make([]bool, n), keyed: map[string]keyedRow{}},
		counts: map[string]int{}, names: map[string]string{}, paths: map[string]string{}, labels: map[string]int64{},
		dupCol: make([]bool, n), lines: make([]*jsonscan.Scanner, n)}
	if mode == "wal" {
		// One read transaction: a consistent view of every table, and writers go on.
		if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
			return nil, fmt.Errorf("begin read transaction on %s: %w", s.path, err)
		}
		defer rollback(conn)
	}
	if s.prof.Refuse != nil {
		why, err := s.prof.Refuse(ctx, &DB{path: s.path, conn: conn, sch: sch})
		if err != nil {
			return nil, err
		}
		if why != "" {
			snap.NotWritable = why
			snap.Problems = append(snap.Problems, store.Problem{Severity: store.SevWarning, Reason: "not rewritten: " + why})
		}
	}
	multi := map[string]int{}
	cols := map[string]bool{}
	for i, ct := range comp.tables {
		multi[strings.ToLower(ct.spec.Table)]++
		tc := strings.ToLower(ct.spec.Table + "\x00" + ct.spec.Column)
		r.dupCol[i] = cols[tc]
		cols[tc] = true
	}
	for i, ct := range comp.tables {
		if err := r.scanTable(ctx, i, ct, multi[strings.ToLower(ct.spec.Table)] > 1); err != nil {
			return nil, err
		}
	}
	if s.prof.Check != nil {
		if err := s.prof.Check(ctx, &DB{path: s.path, conn: conn, sch: sch, r: r}, snap); err != nil {
			return nil, err
		}
	}
	kinds := make([]string, 0, len(r.counts))
	for kind := range r.counts {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		if n := r.counts[kind]; n > maxProblemsPerKind {
			snap.Problems = append(snap.Problems, store.Problem{Severity: store.SevWarning,
				Reason: fmt.Sprintf("%d rows with %s in all (the first %d are listed)", n, kind, maxProblemsPerKind)})
		}
	}
	store.SetState(snap, r.extra)
	return snap, nil
}

// tableQuery is the SELECT that reads one table spec in rowid batches.
type tableQuery struct {
	sql      string
	args     []any
	keyCols  []string
	scope    bool // a call-scope column is selected
	batched  bool // rowid batches (false for WITHOUT ROWID tables: one pass in key order)
	hasRowid bool
	fast     *fastSpec // the SQL-assisted path (fast.go), nil when the spec does not qualify
}

// query resolves the table spec against the schema; problems are reported and nil returned when
// the table cannot be read.
func (r *reader) query(ct *compiledTable) *tableQuery {
	spec := ct.spec
	t := r.sch.table(spec.Table)
	if t == nil {
		sev, note := store.SevWarning, ""
		if spec.Optional {
			sev, note = store.SevInfo, " (older versions of the agent do not have it)"
		}
		r.snap.Problems = append(r.snap.Problems, store.Problem{Severity: sev,
			Reason: fmt.Sprintf("table %s is missing%s: its name sites (%s) are not read", spec.Table, note, sitePaths(spec))})
		return nil
	}
	if t.Virtual {
		r.snap.Problems = append(r.snap.Problems, store.Problem{Severity: store.SevWarning,
			Reason: fmt.Sprintf("table %s is a virtual table: not read", spec.Table)})
		return nil
	}
	missing := func(col, what string) bool {
		if _, ok := t.column(col); ok {
			return false
		}
		r.snap.Problems = append(r.snap.Problems, store.Problem{Severity: store.SevWarning,
			Reason: fmt.Sprintf("table %s has no column %s (%s): the table is not read", spec.Table, col, what)})
		return true
	}
	if missing(spec.Column, "the JSON column") {
		return nil
	}
	q := &tableQuery{keyCols: spec.Key, hasRowid: !t.WithoutRowid}
	if len(q.keyCols) == 0 {
		q.keyCols = t.primaryKey()
	}
	if len(q.keyCols) == 0 {
		q.keyCols = []string{"rowid"}
	}
	for _, k := range q.keyCols {
		if k != "rowid" && missing(k, "a key column") {
			return nil
		}
	}
	var where []string
	for _, w := range spec.Where {
		if missing(w.Column, "a where column") {
			return nil
		}
		switch {
		case len(w.In) > 0:
			where = append(where, fmt.Sprintf("%s IN (%s)", quoteIdent(w.Column), strings.TrimSuffix(strings.Repeat("?,", len(w.In)), ",")))
			for _, v := range w.In {
				q.args = append(q.args, v)
			}
		default:
			where = append(where, fmt.Sprintf("substr(%s, 1, ?) = ?", quoteIdent(w.Column)))
			q.args = append(q.args, int64(len(w.Prefix)), w.Prefix)
		}
	}
	// The storage class comes with the value (a string for TEXT, []byte for BLOB); the unary
	// + keeps SQLite from using an index, and the driver from converting by declared type.
	cols := []string{"+" + quoteIdent(spec.Column)}
	for _, k := range q.keyCols {
		cols = append(cols, "+"+quoteIdent(k))
	}
	if spec.CallScope != "" {
		if _, ok := t.column(spec.CallScope); ok {
			q.scope = true
			cols = append(cols, "+"+quoteIdent(spec.CallScope))
		} else {
			r.snap.Problems = append(r.snap.Problems, store.Problem{Severity: store.SevInfo,
				Reason: fmt.Sprintf("table %s has no column %s: call ids are not scoped by it", spec.Table, spec.CallScope)})
		}
	}
	q.fast = fastOf(ct)
	rowid := "NULL"
	if q.hasRowid {
		rowid = "rowid"
	}
	sel := fmt.Sprintf("SELECT %s, %s FROM %s", rowid, strings.Join(cols, ", "), quoteIdent(spec.Table))
	if q.hasRowid {
		q.batched = true
		where = append([]string{"rowid > ?"}, where...)
	}
	if len(where) > 0 {
		sel += " WHERE " + strings.Join(where, " AND ")
	}
	if q.batched {
		sel += fmt.Sprintf(" ORDER BY rowid LIMIT %d", batchRows)
	} else {
		order := make([]string, len(q.keyCols))
		for i, k := range q.keyCols {
			order[i] = quoteIdent(k)
		}
		sel += " ORDER BY " + strings.Join(order, ", ")
	}
	q.sql = sel
	return q
}

func sitePaths(spec *TableSpec) string {
	var p []string
	for _, s := range spec.Sites {
		p = append(p, spec.Column+" "+s.Path)
	}
	return strings.Join(p, ", ")
}

// scanTable reads one table spec, batch by batch, through the row reader (rows.go: the driver
// connection's handle stepped in C, rows copied into reused buffers; one prepared statement per
// table). Three goroutines share the work: this one steps SQLite and hands each batch of rows
// to the extractor's (the fast path's C parser, 256 rows per cgo call: extractRows), which
// hands it to the site goroutine that finds the sites in row order and hands them on (fn); on
// two cores reading, parsing and planning of consecutive batches overlap. ctx is checked every
// 256 rows.
func (r *reader) scanTable(ctx context.Context, idx int, ct *compiledTable, labelColumn bool) error {
	q := r.query(ct)
	if q == nil {
		return nil
	}
	r.extra.keyCols[idx] = q.keyCols
	r.extra.hasRowid[idx] = q.hasRowid
	r.lastPath = make([]pathMemo, ct.npat)
	readErr := func(err error) error { return fmt.Errorf("read table %s of %s: %w", ct.spec.Table, r.path, err) }
	nk := len(q.keyCols)
	width := 2 + nk + btoi(q.scope)
	stride := 0
	if q.fast != nil {
		stride = 1 + 2*q.fast.npaths
	}

	// Three stages, one goroutine each: this one steps SQLite and copies rows into a batch;
	// the extractor's runs the C parser of the fast path on the batch (extractRows); the site
	// goroutine finds the rows' sites in row order and hands them on (fn). Each batch goes
	// back to free once read.
	const buffers = 4
	work := make(chan *rowBatch, 1)
	parsed := make(chan *rowBatch, 1)
	free := make(chan *rowBatch, buffers)
	for range buffers {
		free <- newRowBatch(width, batchRows)
	}
	done := make(chan error, 1)
	var failed atomic.Bool
	go func() {
		defer close(parsed)
		for b := range work {
			if q.fast != nil && !failed.Load() {
				if err := extractRows(b, q.fast); err != nil {
					b.ext = b.ext[:0] // the site goroutine reports it
				}
			}
			parsed <- b
		}
	}()
	go func() {
		var err error
		for b := range parsed {
			if err == nil && q.fast != nil && len(b.ext) != b.n*stride {
				err = readErr(fmt.Errorf("%s: paths %q are not key chains", extractFunc, q.fast.ptext))
				failed.Store(true)
			}
			if err == nil {
				for i := range b.n {
					row := b.row(i)
					var rowid sql.NullInt64
					if row[0].kind == kindInt {
						rowid = sql.NullInt64{Int64: int64(row[0].i), Valid: true}
					}
					var scope *sfCol
					if q.scope {
						scope = &row[2+nk]
					}
					var ext []int64
					if stride > 0 {
						ext = b.ext[i*stride : (i+1)*stride : (i+1)*stride]
					}
					r.snap.Records++
					r.row(idx, ct, q, rowid, b, &row[1], row[2:2+nk], scope, labelColumn, ext)
				}
				if err = r.flush(); err != nil {
					failed.Store(true)
				}
			}
			b.n, b.used = 0, 0
			free <- b
		}
		done <- err
	}()
	err := r.conn.Raw(func(dc any) error {
		c, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("unexpected SQLite driver connection %T", dc)
		}
		st, err := prepareRows(c, q.sql)
		if err != nil {
			return readErr(err)
		}
		defer st.close()
		args := make([]any, 0, 1+len(q.args))
		var last int64 = -1 << 63
		for {
			args = append(args[:0], q.args...)
			if q.batched {
				args = append([]any{last}, args...)
			}
			if err := st.start(args); err != nil {
				return readErr(err)
			}
			for {
				if failed.Load() {
					return nil // the second goroutine's error is returned
				}
				b := <-free
				end, err := st.read(ctx, b, batchRows)
				if err != nil {
					free <- b
					if ctx.Err() != nil {
						return err
					}
					return readErr(err)
				}
				n := b.n
				if n > 0 {
					if row := b.row(n - 1); row[0].kind == kindInt {
						last = int64(row[0].i)
					}
				}
				work <- b
				switch {
				case q.batched && n == batchRows:
					// LIMIT batchRows reached: the next query goes on after last.
				case q.batched || end:
					return nil
				default:
					continue // one pass (WITHOUT ROWID): handed on in batches all the same
				}
				break
			}
		}
	})
	close(work)
	if perr := <-done; err == nil {
		err = perr
	}
	return err
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rowCtx is the row being read.
type rowCtx struct {
	idx      int
	ct       *compiledTable
	rowid    sql.NullInt64
	keyCols  []string
	keyVals  []any // nil until needed (keys)
	keyRaw   []sfCol
	batch    *rowBatch
	usable   bool
	scope    *sfCol
	labelCol bool
	label    string // computed on first use
	err      *jsonscan.SyntaxError
	errAt    int64
	badUTF8  int64
	seen     bool // the Lines scanner delivered this row's record
}

// labelOf returns the row's label ("part id=prt_…"), unique in the store: key values are
// unique when they are the table's primary key (a NULL key falls back to the rowid); a
// profile's own Key is checked against the rows seen, and a second spec reading the same
// table.column labels its rows with their rowid too.
func (r *reader) labelOf(c *rowCtx) string {
	if c.label != "" {
		return c.label
	}
	spec := c.ct.spec
	var label string
	if c.keyVals == nil {
		label = rowLabelRaw(spec.Table, c.keyCols, c.batch, c.keyRaw)
	} else {
		label = rowLabel(spec.Table, c.keyCols, c.keyVals)
	}
	if c.labelCol {
		label += " " + spec.Column
	}
	switch {
	case r.dupCol[c.idx]:
		label += fmt.Sprintf(" #%d", c.rowid.Int64)
	case len(spec.Key) > 0 && c.keyCols[0] != "rowid":
		if old, ok := r.labels[label]; ok && old != c.rowid.Int64 {
			// Two rows print alike: keep them apart.
			label += fmt.Sprintf(" #%d", c.rowid.Int64)
		} else {
			r.labels[label] = c.rowid.Int64
		}
	}
	c.label = label
	return label
}

var bom = []byte("\xEF\xBB\xBF")

// row finds the sites of one row's JSON value. A value on one line goes through the table's
// long-lived JSON Lines scanner (no scanner built per row); one with line breaks (pretty-printed)
// or a byte order mark gets its own document scanner. Both give the same captures, offsets
// relative to the value.
func (r *reader) row(idx int, ct *compiledTable, q *tableQuery, rowid sql.NullInt64, b *rowBatch, value *sfCol, keys []sfCol, scope *sfCol, labelColumn bool, ext []int64) {
	if value.kind != kindText && value.kind != kindBlob {
		return // NULL or a number: no JSON document
	}
	val, text := b.bytes(value), value.kind == kindText
	if r.progress != nil {
		r.progress(int64(len(val)))
	}
	spec := ct.spec
	c := &r.cur
	*c = rowCtx{idx: idx, ct: ct, rowid: rowid, batch: b, keyRaw: keys, scope: scope, labelCol: labelColumn, badUTF8: -1}
	var byRowid bool
	c.keyCols, byRowid, c.usable = rowKeyCols(q.keyCols, keys, rowid)
	if byRowid {
		c.keyVals = []any{rowid.Int64}
	}
	c.usable = c.usable || rowid.Valid
	if bytes.HasPrefix(val, zstdMagic) {
		r.problem("zstd-compressed payloads", store.SevWarning, store.Loc{Row: r.labelOf(c), RowID: rowid.Int64},
			fmt.Sprintf("%s.%s is zstd-compressed (%d bytes): reported, not parsed", spec.Table, spec.Column, len(val)))
		return
	}
	if text && q.fast != nil && r.fastRow(c, q.fast, val, ext) {
		return
	}
	lines := len(val) > 0 && bytes.IndexByte(val, '\n') < 0 && !bytes.HasPrefix(val, bom)
	if lines {
		sc := r.lines[idx]
		if sc == nil {
			sc = jsonscan.New(ct.pat, jsonscan.Lines, r.onRecord)
			r.lines[idx] = sc
		}
		_, _ = sc.Write(val)
		_, _ = sc.Write(newline)
		if !c.seen {
			// No record ended at the line break: the value is unfinished ("{"), and the
			// scanner is inside it (it would take the next row as the rest of this one). It is
			// dropped; the document scanner says what is wrong.
			r.lines[idx] = nil
		}
	}
	if c.err != nil || !lines || !c.seen {
		// Errors are described as for a whole document (rare: the cost does not matter).
		c.err = nil
		sc := jsonscan.New(ct.pat, jsonscan.Document, r.onRecord)
		_, _ = sc.Write(val)
		_ = sc.Close()
	}
	switch {
	case c.err != nil:
		r.problem("invalid JSON", store.SevWarning, store.Loc{Row: r.labelOf(c), RowID: rowid.Int64},
			fmt.Sprintf("invalid JSON in %s.%s (%s, offset %d); row left as it is", spec.Table, spec.Column, c.err.Msg, c.errAt))
	case c.badUTF8 >= 0:
		r.problem("invalid UTF-8", store.SevWarning, store.Loc{Row: r.labelOf(c), RowID: rowid.Int64},
			fmt.Sprintf("invalid UTF-8 in %s.%s at byte offset %d; row left as it is", spec.Table, spec.Column, c.badUTF8))
	}
}

var newline = []byte{'\n'}

// onRecord receives the scanned value of the current row.
func (r *reader) onRecord(rec *jsonscan.Record) error {
	c := &r.cur
	c.seen = true
	switch {
	case rec.Err != nil:
		c.err, c.errAt = rec.Err, rec.Err.Offset-rec.Start
	case rec.Blank:
		c.err, c.errAt = &jsonscan.SyntaxError{Msg: "empty document"}, 0
	case rec.BadUTF8 >= 0:
		c.badUTF8 = rec.BadUTF8 - rec.Start
	case len(rec.Captures) > 0:
		r.resolve(c, rec)
	}
	return nil
}

// resolve turns the captures of one JSON value into sites (and identities).
func (r *reader) resolve(rc *rowCtx, rec *jsonscan.Record) {
	ct, spec, base := rc.ct, rc.ct.spec, rec.Start
	for i := range ct.sites {
		cs := &ct.sites[i]
		for j := range rec.Captures {
			c := &rec.Captures[j]
			if c.Pattern != cs.pat {
				continue
			}
			if cs.when.pat >= 0 {
				w, ok := bound(rec, cs.when, c)
				if !ok || !cs.in[w] {
					continue
				}
			}
			row := r.labelOf(rc)
			loc := store.Loc{Row: row, RowID: rc.rowid.Int64, Offset: c.Offset - base}
			v, err := c.Value()
			if err != nil {
				r.problem("names that cannot be handled", store.SevError, loc,
					fmt.Sprintf("name at %s.%s %s cannot be handled: %v", spec.Table, spec.Column, c.Path, err))
				continue
			}
			var callID string
			if id, ok := bound(rec, cs.callID, c); ok {
				callID = r.scopedCallID(rc, []byte(id))
			}
			var server *string
			if srv, ok := bound(rec, cs.server, c); ok {
				server = &srv
			}
			r.addSite(rc, cs, loc, c.Raw, v.Str, v.Units, r.path1(spec.Column, c), c.Key, callID, server)
		}
	}
}

// scopedCallID is the call id of a site of row rc: the id, after "<call scope column>/" when the
// spec has a call-scope column and the row a value in it (a call id is unique in its session
// only), in one new string.
func (r *reader) scopedCallID(rc *rowCtx, id []byte) string {
	switch sc := rc.scope; {
	case sc == nil || sc.kind == kindNull:
		return string(id)
	case sc.kind == kindText:
		scope := rc.batch.bytes(sc)
		b := make([]byte, 0, len(scope)+1+len(id))
		b = append(append(append(b, scope...), '/'), id...)
		return unsafe.String(unsafe.SliceData(b), len(b))
	default:
		return fmt.Sprint(rc.batch.value(sc)) + "/" + string(id)
	}
}

// addSite adds the site of capture raw (its value name, units) at loc, path of row rc; callID
// is the site's call id (scopedCallID; "" for none), server the bound server value (nil: none).
func (r *reader) addSite(rc *rowCtx, cs *compiledSite, loc store.Loc, raw []byte, name string, units []uint16, path string, key bool, callID string, server *string) {
	spec := rc.ct.spec
	readOnly := cs.spec.ReadOnly || cs.spec.Identity || cs.kind == store.SiteRule
	if !rc.usable && !readOnly {
		r.problem("unusable row keys", store.SevWarning, store.Loc{Row: loc.Row, RowID: loc.RowID},
			fmt.Sprintf("%s row key is not a number or text: its names are reported, not rewritten", spec.Table))
		readOnly = true
	}
	site := store.Site{
		Loc:      loc,
		Kind:     cs.kind,
		Path:     path,
		Name:     r.intern(name),
		Units:    units,
		Raw:      r.raw(raw),
		Key:      key,
		ReadOnly: readOnly,
	}
	site.CallID = callID
	if server != nil {
		site.Server = r.intern(*server)
	}
	if cs.spec.Identity {
		// A raw identity is an inventory entry, not a name the model was given: it is
		// reported in Snapshot.Identities and never planned (stores.md §3).
		r.snap.Identities = append(r.snap.Identities, store.Identity{Server: site.Server, Tool: site.Name, CallID: site.CallID, Loc: site.Loc})
		return
	}
	if !rc.rowid.Valid && !readOnly {
		r.extra.keyed[loc.Row] = keyedRow{spec: rc.idx, keys: r.keys(rc)}
	}
	r.batch = append(r.batch, site)
}

// path1 renders "column:json.path", sharing equal strings (the last path of each pattern is
// remembered: most sites of a table have the same path).
func (r *reader) path1(column string, c *jsonscan.Capture) string {
	m := &r.lastPath[c.Pattern]
	if m.text != "" && m.path.Equal(c.Path) {
		return m.text
	}
	s := column + ":" + c.Path.String()
	if v, ok := r.paths[s]; ok {
		s = v
	} else if len(r.paths) < maxInterned {
		r.paths[s] = s
	}
	m.path, m.text = append(m.path[:0], c.Path...), s
	return s
}

// bound returns the string value of helper b in the scope it shares with site capture c.
func bound(rec *jsonscan.Record, b binding, c *jsonscan.Capture) (string, bool) {
	if b.pat < 0 {
		return "", false
	}
	for i := range rec.Captures {
		h := &rec.Captures[i]
		if h.Pattern != b.pat || len(h.Path) < b.scope || len(c.Path) < b.scope || !h.Path[:b.scope].Equal(c.Path[:b.scope]) {
			continue
		}
		v, err := h.Value()
		if err != nil {
			return "", false
		}
		return v.Str, true
	}
	return "", false
}

// rowKey returns the key to find a row again: its key columns, else its rowid. usable is false
// when neither can be bound (a BLOB or NULL key in a WITHOUT ROWID table).
func rowKey(cols []string, keys []any, rowid sql.NullInt64) ([]string, []any, bool) {
	ok := true
	for _, k := range keys {
		switch k.(type) {
		case int64, float64, string:
		default:
			ok = false
		}
	}
	if ok {
		return cols, keys, true
	}
	if rowid.Valid {
		return []string{"rowid"}, []any{rowid.Int64}, true
	}
	return cols, keys, false
}

// rowKeyCols is rowKey on the columns of a row batch: the key columns, else the rowid (byRowid).
func rowKeyCols(cols []string, keys []sfCol, rowid sql.NullInt64) (_ []string, byRowid, usable bool) {
	ok := true
	for i := range keys {
		switch keys[i].kind {
		case kindInt, kindFloat, kindText:
		default:
			ok = false
		}
	}
	if ok {
		return cols, false, true
	}
	if rowid.Valid {
		return rowidCol, true, true
	}
	return cols, false, false
}

var rowidCol = []string{"rowid"}

// keys returns the key values of row c (rowKey's columns), copied out of the row batch.
func (r *reader) keys(c *rowCtx) []any {
	if c.keyVals == nil {
		c.keyVals = make([]any, len(c.keyRaw))
		for i := range c.keyRaw {
			c.keyVals[i] = c.batch.value(&c.keyRaw[i])
		}
	}
	return c.keyVals
}

// rowLabel renders a row for reports: `part id=prt_01…`. Text that would read as something
// else (empty, spaces, quotes, a number) is quoted.
func rowLabel(table string, cols []string, keys []any) string {
	var b strings.Builder
	b.WriteString(table)
	for i, c := range cols {
		b.WriteByte(' ')
		b.WriteString(c)
		b.WriteByte('=')
		b.WriteString(keyText(keys[i]))
	}
	return b.String()
}

// rowLabelRaw is rowLabel of key columns still in a row batch (one allocation: the label).
func rowLabelRaw(table string, cols []string, b *rowBatch, keys []sfCol) string {
	n := len(table)
	for i, c := range cols {
		n += len(c) + 2 + int(keys[i].n) + 20
	}
	buf := make([]byte, 0, n)
	buf = append(buf, table...)
	for i, c := range cols {
		buf = append(buf, ' ')
		buf = append(buf, c...)
		buf = append(buf, '=')
		switch k := &keys[i]; k.kind {
		case kindText:
			if s := b.str(k); plainKey(s) {
				buf = append(buf, s...)
			} else {
				buf = strconv.AppendQuote(buf, s)
			}
		case kindInt:
			buf = strconv.AppendInt(buf, int64(k.i), 10)
		default:
			buf = append(buf, keyText(b.value(k))...)
		}
	}
	return unsafe.String(unsafe.SliceData(buf), len(buf))
}

func keyText(v any) string {
	switch k := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(k, 10)
	case float64:
		return strconv.FormatFloat(k, 'g', -1, 64)
	case string:
		if plainKey(k) {
			return k
		}
		return strconv.Quote(k)
	case []byte:
		return fmt.Sprintf("X'%X'", k)
	}
	return fmt.Sprint(v)
}

func plainKey(s string) bool {
	if s == "" || s == "NULL" {
		return false
	}
	if c := s[0]; (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'I' || c == 'i' || c == 'N' || c == 'n' {
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return false
		}
	}
	if strings.HasPrefix(s, "X'") {
		return false
	}
	for _, c := range s {
		if c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f {
			return false
		}
	}
	return true
}
