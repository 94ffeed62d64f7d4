package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
)

// zstdMagic starts a zstd frame: such payloads are reported, never parsed (stores.md §3).
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// batchRows is how many rows one query reads (a rollback-journal writer waits at most this).
const batchRows = 2000

// maxProblemsPerKind caps how many problems of one reason a store reports one by one.
const maxProblemsPerKind = 20

// scanExtra is what a Writer needs from a scan: where each row with sites is. It holds no
// pointer per row (a million rows cost a map of small values, not a million objects).
type scanExtra struct {
	comp    *compiled
	keyCols [][]string        // per table spec: the key columns ("rowid" when none)
	rows    map[string]rowLoc // by Loc.Row
	keyed   map[string][]any  // keys of rows of tables without rowid, by Loc.Row
}

// rowLoc finds one row of one table spec again: by rowid, or (keyed) by its key values.
type rowLoc struct {
	spec  int32
	keyed bool
	rowid int64
}

// siteChunk is how many sites are gathered before a new chunk starts (a million sites are
// never copied by slice growth, only once at the end).
const siteChunk = 4096

// reader is one read-only scan of a database.
type reader struct {
	path     string
	conn     *sqlx.Conn
	sch      *schema
	snap     *store.Snapshot
	extra    *scanExtra
	progress func(int64)
	counts   map[string]int // problems per reason kind
	paths    map[string]string
	chunks   [][]store.Site
	lines    []*jsonscan.Scanner // per table spec
	cur      rowCtx
}

func (r *reader) addSite(s store.Site) {
	if n := len(r.chunks); n == 0 || len(r.chunks[n-1]) == cap(r.chunks[n-1]) {
		r.chunks = append(r.chunks, make([]store.Site, 0, siteChunk))
	}
	c := &r.chunks[len(r.chunks)-1]
	*c = append(*c, s)
}

// sites joins the chunks.
func (r *reader) sites() []store.Site {
	n := 0
	for _, c := range r.chunks {
		n += len(c)
	}
	out := make([]store.Site, 0, n)
	for _, c := range r.chunks {
		out = append(out, c...)
	}
	r.chunks = nil
	return out
}

func (r *reader) problem(kind string, sev store.Severity, loc store.Loc, reason string) {
	r.counts[kind]++
	if r.counts[kind] <= maxProblemsPerKind {
		r.snap.Problems = append(r.snap.Problems, store.Problem{Loc: loc, Severity: sev, Reason: reason})
	}
}

// Scan reads every table of the store's profile and returns its name sites (Loc.Row names the
// row, Loc.Offset is the byte offset of the name token inside the column value). Missing tables
// and columns, invalid JSON, invalid UTF-8 and zstd-compressed payloads are problems; Scan fails
// only when the database cannot be opened or read, or no profile matches it.
func (s *Store) Scan(ctx context.Context, opt store.ScanOptions) (snap *store.Snapshot, err error) {
	defer func() {
		// A lock another process keeps past the busy timeout (an EXCLUSIVE lock, a writer in
		// rollback-journal mode) makes the store in use, not unreadable.
		if err != nil && isBusy(err) {
			snap, err = nil, &store.InUseError{Path: s.path, Reason: fmt.Sprintf("locked by another process; gave up reading it after %s (--busy-timeout)", s.opt.busy())}
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
		if ok, err := RollBackHotJournal(ctx, s.path, s.opt.busy()); err != nil {
			return nil, err
		} else if ok {
			s.rolledBack = s.path + "-journal"
		}
		if st, err = fileState(s.path); err != nil {
			return nil, fmt.Errorf("open %s: %w", s.path, err)
		}
	}
	db, err := openDB(s.path, modeRO, s.opt.busy())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, hotJournalErr(s.path, fmt.Errorf("open %s: %w", s.path, err))
	}
	defer conn.Close()
	sch, err := readSchema(ctx, conn)
	if err != nil {
		return nil, hotJournalErr(s.path, fmt.Errorf("%s: %w", s.path, err))
	}
	if s.prof == nil {
		s.prof = detectProfile(sch, append([]*Profile{s.opt.Profile}, Builtins...)...)
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
	r := &reader{path: s.path, conn: conn, sch: sch, snap: snap, progress: opt.Progress,
		extra:  &scanExtra{comp: comp, keyCols: make([][]string, len(comp.tables)), rows: map[string]rowLoc{}, keyed: map[string][]any{}},
		counts: map[string]int{}, paths: map[string]string{}, lines: make([]*jsonscan.Scanner, len(comp.tables))}
	if mode == "wal" {
		// One read transaction: a consistent view of every table, and writers go on.
		if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
			return nil, fmt.Errorf("begin read transaction on %s: %w", s.path, err)
		}
		defer rollback(conn)
	}
	multi := map[string]int{}
	for _, ct := range comp.tables {
		multi[strings.ToLower(ct.spec.Table)]++
	}
	for i, ct := range comp.tables {
		if err := r.scanTable(ctx, i, ct, multi[strings.ToLower(ct.spec.Table)] > 1); err != nil {
			return nil, err
		}
	}
	if s.prof.check != nil {
		if err := s.prof.check(ctx, r, snap); err != nil {
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
	snap.Sites = r.sites()
	snap.Extra = r.extra
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
			q.args = append(q.args, len(w.Prefix), w.Prefix)
		}
	}
	cols := []string{"typeof(" + quoteIdent(spec.Column) + ")", "+" + quoteIdent(spec.Column)}
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

// scanTable reads one table spec, batch by batch.
func (r *reader) scanTable(ctx context.Context, idx int, ct *compiledTable, labelColumn bool) error {
	q := r.query(ct)
	if q == nil {
		return nil
	}
	r.extra.keyCols[idx] = q.keyCols
	var last int64 = -1 << 63
	nk := len(q.keyCols)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		args := q.args
		if q.batched {
			args = append([]any{last}, q.args...)
		}
		rows, err := r.conn.QueryContext(ctx, q.sql, args...)
		if err != nil {
			return fmt.Errorf("read table %s of %s: %w", ct.spec.Table, r.path, err)
		}
		n := 0
		var (
			rowid sql.NullInt64
			typ   string
			val   sql.RawBytes
			scope any
		)
		keys := make([]any, nk)
		dest := []any{&rowid, &typ, &val}
		for i := range keys {
			dest = append(dest, &keys[i])
		}
		if q.scope {
			dest = append(dest, &scope)
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return fmt.Errorf("read table %s of %s: %w", ct.spec.Table, r.path, err)
			}
			n++
			last = rowid.Int64
			r.snap.Records++
			if r.progress != nil {
				r.progress(int64(len(val)))
			}
			r.row(idx, ct, q, rowid, typ, val, keys, scope, labelColumn)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("read table %s of %s: %w", ct.spec.Table, r.path, err)
		}
		if !q.batched || n < batchRows {
			return nil
		}
	}
}

// rowCtx is the row being read.
type rowCtx struct {
	idx      int
	ct       *compiledTable
	rowid    sql.NullInt64
	keyCols  []string
	keyVals  []any
	usable   bool
	scope    any
	labelCol bool
	label    string // computed on first use
	err      *jsonscan.SyntaxError
	errAt    int64
	badUTF8  int64
}

// labelOf returns the row's label ("part id=prt_…"), unique in the store.
func (r *reader) labelOf(c *rowCtx) string {
	if c.label != "" {
		return c.label
	}
	spec := c.ct.spec
	label := rowLabel(spec.Table, c.keyCols, c.keyVals)
	if c.labelCol {
		label += " " + spec.Column
	}
	if old, ok := r.extra.rows[label]; ok && (int(old.spec) != c.idx || old.rowid != c.rowid.Int64 || old.keyed) {
		// Two rows print alike: keep them apart.
		label += fmt.Sprintf(" #%d", c.rowid.Int64)
	}
	c.label = label
	return label
}

var bom = []byte("\xEF\xBB\xBF")

// row finds the sites of one row's JSON value. A value on one line goes through the table's
// long-lived JSON Lines scanner (no scanner built per row); one with line breaks (pretty-printed)
// or a byte order mark gets its own document scanner. Both give the same captures, offsets
// relative to the value.
func (r *reader) row(idx int, ct *compiledTable, q *tableQuery, rowid sql.NullInt64, typ string, val []byte, keys []any, scope any, labelColumn bool) {
	if typ != "text" && typ != "blob" {
		return // NULL or a number: no JSON document
	}
	spec := ct.spec
	c := &r.cur
	*c = rowCtx{idx: idx, ct: ct, rowid: rowid, scope: scope, labelCol: labelColumn, badUTF8: -1}
	c.keyCols, c.keyVals, c.usable = rowKey(q.keyCols, keys, rowid)
	c.usable = c.usable || rowid.Valid
	if bytes.HasPrefix(val, zstdMagic) {
		r.problem("zstd-compressed payloads", store.SevWarning, store.Loc{Row: r.labelOf(c)},
			fmt.Sprintf("%s.%s is zstd-compressed (%d bytes): reported, not parsed", spec.Table, spec.Column, len(val)))
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
	}
	if c.err != nil || !lines {
		// Errors are described as for a whole document (rare: the cost does not matter).
		c.err = nil
		sc := jsonscan.New(ct.pat, jsonscan.Document, r.onRecord)
		_, _ = sc.Write(val)
		_ = sc.Close()
	}
	switch {
	case c.err != nil:
		r.problem("invalid JSON", store.SevWarning, store.Loc{Row: r.labelOf(c)},
			fmt.Sprintf("invalid JSON in %s.%s (%s, offset %d); row left as it is", spec.Table, spec.Column, c.err.Msg, c.errAt))
	case c.badUTF8 >= 0:
		r.problem("invalid UTF-8", store.SevWarning, store.Loc{Row: r.labelOf(c)},
			fmt.Sprintf("invalid UTF-8 in %s.%s at byte offset %d; row left as it is", spec.Table, spec.Column, c.badUTF8))
	}
}

var newline = []byte{'\n'}

// onRecord receives the scanned value of the current row.
func (r *reader) onRecord(rec *jsonscan.Record) error {
	c := &r.cur
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
	added := false
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
			v, err := c.Value()
			if err != nil {
				r.problem("names that cannot be handled", store.SevError, store.Loc{Row: row, Offset: c.Offset - base},
					fmt.Sprintf("name at %s.%s %s cannot be handled: %v", spec.Table, spec.Column, c.Path, err))
				continue
			}
			readOnly := cs.spec.ReadOnly || cs.spec.Identity || cs.kind == store.SiteRule
			if !rc.usable && !readOnly {
				r.problem("unusable row keys", store.SevWarning, store.Loc{Row: row},
					fmt.Sprintf("%s row key is not a number or text: its names are reported, not rewritten", spec.Table))
				readOnly = true
			}
			site := store.Site{
				Loc:      store.Loc{Row: row, Offset: c.Offset - base},
				Kind:     cs.kind,
				Path:     r.path1(spec.Column, c.Path),
				Name:     v.Str,
				Units:    v.Units,
				Raw:      append([]byte(nil), c.Raw...),
				Key:      c.Key,
				ReadOnly: readOnly,
			}
			if id, ok := bound(rec, cs.callID, c); ok {
				site.CallID = id
				switch sc := rc.scope.(type) {
				case nil:
				case string:
					site.CallID = sc + "/" + id
				default:
					site.CallID = fmt.Sprint(sc) + "/" + id
				}
			}
			if srv, ok := bound(rec, cs.server, c); ok {
				site.Server = srv
			}
			if cs.spec.Identity {
				// A raw identity is an inventory entry, not a name the model was given: it is
				// reported in Snapshot.Identities and never planned (stores.md §3).
				r.snap.Identities = append(r.snap.Identities, store.Identity{Server: site.Server, Tool: site.Name, CallID: site.CallID, Loc: site.Loc})
				continue
			}
			r.addSite(site)
			added = true
		}
	}
	if added {
		l := rowLoc{spec: int32(rc.idx), rowid: rc.rowid.Int64, keyed: !rc.rowid.Valid}
		if l.keyed {
			r.extra.keyed[rc.label] = append([]any(nil), rc.keyVals...)
		}
		r.extra.rows[rc.label] = l
	}
}

// path1 renders "column:json.path", sharing equal strings.
func (r *reader) path1(column string, p jsonscan.Path) string {
	s := column + ":" + p.String()
	if v, ok := r.paths[s]; ok {
		return v
	}
	r.paths[s] = s
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
