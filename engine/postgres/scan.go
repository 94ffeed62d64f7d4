package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"
	"github.com/zeebo/xxh3"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
)

// maxProblemsPerKind caps how many problems of one kind a store reports one by one.
const maxProblemsPerKind = 20

// Parsers is how many chunks a scan parses at once (at most GOMAXPROCS), each on a goroutine
// of its own: finding a value's sites is most of a scan's CPU (at 100k chats of the bench,
// 1.2 s of the client's 1.5 s, the server's fetches 0.8 s), so two parsers keep two cores busy
// where one kept one.
const Parsers = 2

// tableRead is one table spec resolved against the schema.
type tableRead struct {
	idx      int
	spec     *sqlite.TableSpec
	tb       *table
	col      column
	key      column
	readOnly bool // never written (jsonb, no single key)
	jsonb    bool // a jsonb column: the store is not writable (its sites are not read-only)
	parent   int  // index of the parent spec's read, -1 for none
	pcol     column
	scope    *column
}

// resolve resolves every table spec of comp's profile against sch; problems go to snap. A spec
// that cannot be read is nil.
func resolve(prof *Profile, sch *schema, snap *store.Snapshot) []*tableRead {
	out := make([]*tableRead, len(prof.Tables))
	warn := func(sev store.Severity, format string, a ...any) {
		snap.Problems = append(snap.Problems, store.Problem{Severity: sev, Reason: fmt.Sprintf(format, a...)})
	}
	for i := range prof.Tables {
		spec := &prof.Tables[i]
		tb := sch.table(spec.Table)
		if tb == nil {
			sev, note := store.SevWarning, ""
			if spec.Optional {
				sev, note = store.SevInfo, " (older versions of the agent do not have it)"
			}
			warn(sev, "table %s is missing%s: its name sites are not read", spec.Table, note)
			continue
		}
		col, ok := tb.column(spec.Column)
		if !ok {
			warn(store.SevWarning, "table %s has no column %s (the JSON column): the table is not read", spec.Table, spec.Column)
			continue
		}
		tr := &tableRead{idx: i, spec: spec, tb: tb, col: col, parent: -1}
		switch col.base {
		case "json", "text", "varchar", "bpchar":
		case "jsonb":
			// The store is refused as not rewritable (Snapshot.NotWritable), as any store the
			// engine cannot rewrite: a name of it that needs rewriting is kept, saying why, and
			// makes the run partial (exit 3); its other tables are not written either (both
			// places of a call change together or not at all). Apply refuses its rows.
			tr.readOnly, tr.jsonb = true, true
			why := fmt.Sprintf("%s.%s is jsonb (jsonb keeps no text, so a byte-exact rewrite is impossible; sessionfix never changes a column's type)", spec.Table, spec.Column)
			if snap.NotWritable == "" {
				snap.NotWritable = why
			} else {
				snap.NotWritable += "; " + why
			}
		default:
			warn(store.SevWarning, "%s.%s is %s, not json or text: the table is not read", spec.Table, spec.Column, col.typ)
			continue
		}
		keys := spec.Key
		if len(keys) == 0 {
			keys = tb.pk
		}
		switch {
		case len(keys) == 0:
			warn(store.SevWarning, "table %s has no primary key and its profile names none: the table is not read (a row could not be found again)", spec.Table)
			continue
		case len(keys) > 1:
			warn(store.SevWarning, "table %s is keyed by %d columns (%s): its names are reported, not rewritten (the PostgreSQL engine finds rows by one key column)", spec.Table, len(keys), strings.Join(keys, ", "))
			tr.readOnly = true
		}
		if tr.key, ok = tb.column(keys[0]); !ok {
			warn(store.SevWarning, "table %s has no column %s (a key column): the table is not read", spec.Table, keys[0])
			continue
		}
		bad := false
		for _, w := range spec.Where {
			if _, ok := tb.column(w.Column); !ok {
				warn(store.SevWarning, "table %s has no column %s (a where column): the table is not read", spec.Table, w.Column)
				bad = true
			}
		}
		if bad {
			continue
		}
		if spec.CallScope != "" {
			if c, ok := tb.column(spec.CallScope); ok {
				tr.scope = &c
			} else {
				warn(store.SevInfo, "table %s has no column %s: call ids are not scoped by it", spec.Table, spec.CallScope)
			}
		}
		if pa := spec.Parent; pa != nil {
			pc, ok := tb.column(pa.Column)
			for j := range i {
				if out[j] != nil && strings.EqualFold(prof.Tables[j].Table, pa.Table) && out[j].parent < 0 {
					tr.parent = j
				}
			}
			if !ok || tr.parent < 0 {
				warn(store.SevWarning, "table %s: its parent %s.%s cannot be read: the table is read on its own", spec.Table, pa.Table, pa.Column)
				tr.parent = -1
			} else {
				tr.pcol = pc
			}
		}
		out[i] = tr
	}
	if snap.NotWritable != "" {
		snap.Problems = append(snap.Problems, store.Problem{Severity: store.SevWarning, Reason: "not rewritten: " + snap.NotWritable})
	}
	return out
}

// literal quotes s as an SQL string literal (standard_conforming_strings is on: connect).
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// where is the SQL of a spec's column conditions (with a leading " AND "), literals inlined.
func (tr *tableRead) where(alias string) string {
	if alias != "" {
		alias += "."
	}
	var b strings.Builder
	for _, w := range tr.spec.Where {
		c, _ := tr.tb.column(w.Column)
		switch {
		case len(w.In) > 0:
			vals := make([]string, len(w.In))
			for i, v := range w.In {
				vals[i] = literal(v)
			}
			fmt.Fprintf(&b, " AND %s%s::text IN (%s)", alias, ident(c.name), strings.Join(vals, ", "))
		default:
			fmt.Fprintf(&b, " AND left(%s%s::text, %d) = %s", alias, ident(c.name), len([]rune(w.Prefix)), literal(w.Prefix))
		}
	}
	return b.String()
}

// selectList is what every read of a spec selects: key, value text, xmin, scope.
func (tr *tableRead) selectList(alias string) string {
	a := ""
	if alias != "" {
		a = alias + "."
	}
	s := fmt.Sprintf("%s%s::text, %s%s::text, %sxmin::text::bigint", a, ident(tr.key.name), a, ident(tr.col.name), a)
	if tr.scope != nil {
		s += fmt.Sprintf(", %s%s::text", a, ident(tr.scope.name))
	} else {
		s += ", NULL::text"
	}
	return s
}

// RowSum is the checksum a site's Loc.RowSum holds of its row's value text: XXH3-64 with the top
// bit cleared (never 0: a zero sum means "not known").
func RowSum(val []byte) int64 {
	v := int64(xxh3.Hash(val) &^ (1 << 63))
	if v == 0 {
		v = 1
	}
	return v
}

// label is a row's label: "table key=value", the value quoted (Go syntax) unless plain.
func label(tableName, keyCol, key string) string {
	return tableName + " " + keyCol + "=" + keyText(key)
}

func keyText(k string) string {
	plain := k != ""
	for _, c := range k {
		if c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f {
			plain = false
			break
		}
	}
	if plain {
		return k
	}
	return strconv.Quote(k)
}

// parseLabel returns the key value of a label made by label for tableName and keyCol.
func parseLabel(l, tableName, keyCol string) (string, bool) {
	rest, ok := strings.CutPrefix(l, tableName+" "+keyCol+"=")
	if !ok {
		return "", false
	}
	if strings.HasPrefix(rest, `"`) {
		v, err := strconv.Unquote(rest)
		return v, err == nil
	}
	return rest, !strings.ContainsAny(rest, " \"=\\")
}

// scanState is one read of the store: what the parsed chunks add up to, merged in their order.
type scanState struct {
	s      *Store
	snap   *store.Snapshot
	counts map[string]int
	opt    store.ScanOptions
}

func (st *scanState) problem(kind string, p store.Problem) {
	st.counts[kind]++
	if st.counts[kind] <= maxProblemsPerKind {
		st.snap.Problems = append(st.snap.Problems, p)
	}
}

// parser finds the sites of a chunk's rows, with its own compiled profile (a Compiled holds
// its scanners' state): ScanBatches runs parsers side by side, each on its own chunks.
type parser struct {
	comp *sqlite.Compiled
}

// parsed is what a parser found in one chunk (its rows, then its child rows): the sites in row
// order, and, in the order their rows came, each row's value size, problems and identities —
// what scanState adds to the snapshot when the chunk's turn comes.
type parsed struct {
	sites  []store.Site
	sizes  []int // the bytes of each non-NULL value (ScanOptions.Progress)
	probs  []kindProblem
	idents []store.Identity
}

type kindProblem struct {
	kind string
	p    store.Problem
}

// row finds the sites of one row's value.
func (ps *parser) row(out *parsed, tr *tableRead, key string, val []byte, xmin int64, scope sql.NullString) {
	out.sizes = append(out.sizes, len(val))
	loc := store.Loc{Row: label(tr.spec.Table, tr.key.name, key), RowVersion: xmin, RowSum: RowSum(val)}
	vo := sqlite.ValueOptions{Loc: loc, Scope: scope.String, Scoped: scope.Valid, ReadOnly: tr.readOnly && !tr.jsonb,
		Identity: func(id store.Identity) { out.idents = append(out.idents, id) }}
	if why := ps.comp.Value(tr.idx, val, vo, func(s store.Site) { out.sites = append(out.sites, s) }); why != "" {
		kind := "invalid JSON"
		switch {
		case strings.HasPrefix(why, "invalid UTF-8"):
			kind = "invalid UTF-8"
		case strings.Contains(why, "zstd"):
			kind = "zstd-compressed payloads"
		}
		out.probs = append(out.probs, kindProblem{kind, store.Problem{Loc: store.Loc{Row: loc.Row}, Severity: store.SevWarning, Reason: why}})
	}
}

// chunk finds the sites of c's rows, then of its child rows (a row whose value is NULL has none).
func (ps *parser) chunk(c chunk) *parsed {
	out := &parsed{}
	for _, part := range append([]chunk{c}, c.kids...) {
		for _, r := range part.rows {
			if r.val != nil {
				ps.row(out, part.tr, r.key, r.val, r.xmin, r.scope)
			}
		}
	}
	return out
}

// add merges one parsed chunk into the snapshot (records, progress, problems, identities), in
// chunk order: the snapshot is what one parser reading every row in turn makes.
func (st *scanState) add(p *parsed) {
	for _, n := range p.sizes {
		st.snap.Records++
		if st.opt.Progress != nil {
			st.opt.Progress(int64(n))
		}
	}
	for _, k := range p.probs {
		st.problem(k.kind, k.p)
	}
	st.snap.Identities = append(st.snap.Identities, p.idents...)
}

// rawRow is one row as read: key text, value text (nil for NULL), xmin and scope.
type rawRow struct {
	key   string
	val   []byte
	xmin  int64
	scope sql.NullString
}

// fetchRows reads the rows of q (key, value text, xmin, scope; keys, when not nil, its $1 of
// type text[]): every row with a key, and the bytes of their values. A query with keys (a
// fetch's child rows: the same text for every fetch) is prepared once on the connection and
// kept in prep (parsed and planned once, not once a fetch: at 1M chats of the bench 2,000 such
// queries took 1.6 s of the server's CPU, most of it for an empty chat_message). It runs on the read
// transaction's connection through pgx's protocol layer (conn.Raw: the connection the
// transaction holds; results in binary format, wire.go): database/sql made a string of each
// value and sqlx's RawBytes a copy of it, two copies of every kilobyte read.
func fetchRows(ctx context.Context, conn *sqlx.Conn, q string, keys []string, prep map[string]*pgconn.StatementDescription) ([]rawRow, int64, error) {
	var out []rawRow
	var size int64
	err := conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("not a pgx connection: %T", dc)
		}
		pc := sc.Conn().PgConn()
		var rr *pgconn.ResultReader
		if keys != nil {
			sd := prep[q]
			if sd == nil {
				var err error
				if sd, err = pc.Prepare(ctx, fmt.Sprintf("sessionfix_fetch_%d", len(prep)), q, []uint32{oidTextArray}); err != nil {
					return err
				}
				prep[q] = sd
			}
			rr = pc.ExecPrepared(ctx, sd.Name, [][]byte{textArray(keys)}, binaryFormat, binaryFormat)
		} else {
			rr = pc.ExecParams(ctx, q, nil, nil, binaryFormat, binaryFormat)
		}
		for rr.NextRow() {
			v := rr.Values()
			if len(v) != 4 {
				rr.Close()
				return errWire
			}
			if v[0] == nil {
				continue // a NULL key in a table keyed by a profile's column: unreachable again
			}
			r := rawRow{key: string(v[0])}
			if v[1] != nil {
				r.val = append(make([]byte, 0, len(v[1])), v[1]...)
				size += int64(len(v[1]))
			}
			var err error
			if r.xmin, err = readInt8(v[2]); err != nil {
				rr.Close()
				return err
			}
			if v[3] != nil {
				r.scope = sql.NullString{String: string(v[3]), Valid: true}
			}
			out = append(out, r)
		}
		_, err := rr.Close()
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return out, size, nil
}

// chunk is what the fetcher hands the parser: one fetch of a table read's rows, then the rows
// of its child reads that belong to them (one chunk for each child read, in children order).
type chunk struct {
	tr   *tableRead
	rows []rawRow
	kids []chunk
}

// chunkBytes bounds the bytes of values one fetch reads (with its child rows), so that the
// chunks held ahead of the merge (at most four: the one being fetched, one waiting for a
// parser, one in each parser; ScanBatches) stay small when rows
// are large (a chat with pictures inline is megabytes): the rows of the next fetch are chosen
// from the largest bytes per row seen so far.
const chunkBytes = 8 << 20

// fetchSize is how many rows the next fetch asks for: at most max, at least 1, chunkBytes
// divided by the most bytes per row (with its child rows) a fetch has read so far; 64 at first.
type fetchSize struct {
	max, n int
	per    int64 // the most bytes per row seen in one fetch
}

func (f *fetchSize) size() int { return f.n }

// saw records a fetch of rows rows holding size bytes.
func (f *fetchSize) saw(rows int, size int64) {
	if rows == 0 {
		return
	}
	f.per = max(f.per, (size+int64(rows)-1)/int64(rows))
	f.n = f.max
	if f.per > 0 {
		f.n = int(min(int64(f.max), max(1, chunkBytes/f.per)))
	}
}

// fetch reads every table of reads for ScanBatches, chunk by chunk to out: each table without a
// parent through a cursor in the order its rows are stored (a sequential scan, with
// synchronize_seqscans off for the transaction, so that a scan never starts in the middle of a
// table another scan is reading and an unchanged table lists its rows alike each time; in key
// order the server read the table through its key's index: 25-50 % more of its CPU at 100k
// chats keyed in insertion order, and a page per row where keys are random, as Open WebUI's
// UUIDs are), n rows a fetch, each fetch with the rows of its child
// reads that belong to its rows; then the child rows whose parent row is not there. It stops
// when ctx ends (the parser failed).
func (st *scanState) fetch(ctx context.Context, tx *sqlx.Tx, conn *sqlx.Conn, reads []*tableRead, n int, out chan<- chunk) error {
	s := st.s
	fb := &fetchSize{max: n, n: min(n, 64)}
	prep := map[string]*pgconn.StatementDescription{} // the child rows' queries, prepared
	send := func(c chunk) error {
		select {
		case out <- c:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if _, err := tx.ExecContext(ctx, "SET LOCAL synchronize_seqscans = off"); err != nil {
		return fmt.Errorf("read %s: %w", s.ref, err)
	}
	for _, tr := range reads {
		if tr == nil || tr.parent >= 0 {
			continue
		}
		var children []*tableRead
		for _, c := range reads {
			if c != nil && c.parent == tr.idx {
				children = append(children, c)
			}
		}
		cur := fmt.Sprintf("sessionfix_scan_%d", tr.idx)
		q := fmt.Sprintf("DECLARE %s NO SCROLL CURSOR FOR SELECT %s FROM %s WHERE true%s",
			cur, tr.selectList(""), ident(tr.tb.name), tr.where(""))
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("read table %s of %s: %w", tr.spec.Table, s.ref, err)
		}
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			want := fb.size()
			rows, size, err := fetchRows(ctx, conn, fmt.Sprintf("FETCH FORWARD %d FROM %s", want, cur), nil, nil)
			if err != nil {
				return fmt.Errorf("read table %s of %s: %w", tr.spec.Table, s.ref, err)
			}
			c := chunk{tr: tr, rows: rows}
			if len(children) > 0 && len(rows) > 0 {
				keys := make([]string, len(rows))
				for i, r := range rows {
					keys[i] = r.key
				}
				for _, k := range children {
					q := fmt.Sprintf("SELECT %s FROM %s WHERE %s = ANY(($1::text[])::%s[])%s ORDER BY %s, %s",
						k.selectList(""), ident(k.tb.name), ident(k.pcol.name), k.pcol.typ, k.where(""), ident(k.pcol.name), ident(k.key.name))
					kr, ks, err := fetchRows(ctx, conn, q, keys, prep)
					if err != nil {
						return fmt.Errorf("read table %s of %s: %w", k.spec.Table, s.ref, err)
					}
					size += ks
					c.kids = append(c.kids, chunk{tr: k, rows: kr})
				}
			}
			fb.saw(len(rows), size)
			if err := send(c); err != nil {
				return err
			}
			if len(rows) < want {
				break
			}
		}
		if _, err := tx.ExecContext(ctx, "CLOSE "+cur); err != nil {
			return fmt.Errorf("read table %s of %s: %w", tr.spec.Table, s.ref, err)
		}
		// Rows whose parent is not there (a database without the foreign key): read on their own.
		for _, c := range children {
			p := reads[c.parent]
			cur := fmt.Sprintf("sessionfix_orphans_%d", c.idx)
			q := fmt.Sprintf("DECLARE %s NO SCROLL CURSOR FOR SELECT %s FROM %s c WHERE NOT EXISTS (SELECT 1 FROM %s p WHERE p.%s::text = c.%s::text)%s ORDER BY c.%s",
				cur, c.selectList("c"), ident(c.tb.name), ident(p.tb.name), ident(p.key.name), ident(c.pcol.name), c.where("c"), ident(c.key.name))
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("read table %s of %s: %w", c.spec.Table, s.ref, err)
			}
			for {
				want := fb.size()
				rows, size, err := fetchRows(ctx, conn, fmt.Sprintf("FETCH FORWARD %d FROM %s", want, cur), nil, nil)
				if err != nil {
					return fmt.Errorf("read table %s of %s: %w", c.spec.Table, s.ref, err)
				}
				fb.saw(len(rows), size)
				if err := send(chunk{tr: c, rows: rows}); err != nil {
					return err
				}
				if len(rows) < want {
					break
				}
			}
			if _, err := tx.ExecContext(ctx, "CLOSE "+cur); err != nil {
				return fmt.Errorf("read table %s of %s: %w", c.spec.Table, s.ref, err)
			}
		}
	}
	return nil
}

// Scan reads every table of the store's profile and returns its name sites; see ScanBatches.
func (s *Store) Scan(ctx context.Context, opt store.ScanOptions) (*store.Snapshot, error) {
	var all []store.Site
	snap, err := s.ScanBatches(ctx, opt, func(_ *store.Snapshot, sites []store.Site) error {
		all = append(all, sites...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	snap.Sites = all
	return snap, nil
}

// ScanBatches reads the store in one REPEATABLE READ, READ ONLY transaction and hands the sites
// to fn after each batch of at most BatchRows rows of a table (with the rows of its child specs
// that belong to them: TableSpec.Parent), in the order the rows are stored (store.BatchScanner;
// fetch). Missing tables and
// columns, jsonb columns (read-only), invalid JSON and invalid UTF-8 are problems; it fails
// only when the server cannot be reached or read, or no profile matches.
func (s *Store) ScanBatches(ctx context.Context, opt store.ScanOptions, fn func(*store.Snapshot, []store.Site) error) (_ *store.Snapshot, err error) {
	defer func() { err = s.scrub(err) }()
	db, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	conn, err := db.Connx(ctx) // the read transaction's: its rows are fetched through conn.Raw
	if err != nil {
		return nil, fmt.Errorf("begin read transaction on %s: %w", s.ref, err)
	}
	defer conn.Close()
	tx, err := conn.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("begin read transaction on %s: %w", s.ref, err)
	}
	defer tx.Rollback()
	sch, err := readSchema(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.ref, err)
	}
	if s.prof == nil {
		if s.prof = detectProfile(sch, append([]*Profile{s.opt.Profile}, s.opt.Profiles...)...); s.prof == nil {
			return nil, &NoProfileError{Ref: s.ref, Tables: sch.names}
		}
	}
	// Each parser compiles the profile (its scanners' state is its own).
	nParsers := min(Parsers, max(1, runtime.GOMAXPROCS(0)))
	parsers := make([]*parser, nParsers)
	for i := range parsers {
		comp, err := sqlite.Compile(s.prof)
		if err != nil {
			return nil, err
		}
		parsers[i] = &parser{comp: comp}
	}
	snap := &store.Snapshot{Ref: s.Ref(), Agent: s.prof.Agent}
	st := &scanState{s: s, snap: snap, counts: map[string]int{}, opt: opt}
	reads := resolve(s.prof, sch, snap)
	n := s.opt.batch()
	// The fetcher reads (cursor FETCHes, the child rows of each fetch) while the parsers find
	// the sites of what it read before, chunk k on parser k mod len(parsers), and this goroutine
	// merges their results in chunk order and hands each chunk's sites to fn (which plans them):
	// the server reads while sessionfix parses, two chunks are parsed at once on two cores, and
	// a fetch's round trip is not waited for. At most one chunk waits for a parser besides the
	// one each parser holds and the one being fetched (the channels are unbuffered); a chunk is
	// at most BatchRows rows, and about chunkBytes of values.
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunks := make(chan chunk)
	var ferr error
	go func() {
		defer close(chunks)
		ferr = st.fetch(fctx, tx, conn, reads, n, chunks)
	}()
	work := make([]chan chunk, len(parsers))
	results := make([]chan *parsed, len(parsers))
	for i, ps := range parsers {
		work[i], results[i] = make(chan chunk), make(chan *parsed)
		go func() {
			defer close(results[i])
			for c := range work[i] {
				results[i] <- ps.chunk(c)
			}
		}()
	}
	go func() {
		k := 0
		for c := range chunks {
			select {
			case work[k%len(work)] <- c:
				k++
			case <-fctx.Done():
			}
		}
		for _, w := range work {
			close(w)
		}
	}()
	var perr error
	for k := 0; ; k++ {
		p, ok := <-results[k%len(results)]
		if !ok {
			break
		}
		if perr != nil {
			continue // drain: the fetcher stops at its next send
		}
		st.add(p)
		if len(p.sites) > 0 {
			if perr = fn(snap, p.sites); perr != nil {
				cancel()
			}
		}
	}
	for _, r := range results {
		for range r { // the parsers' last results once the run stopped
		}
	}
	cancel()
	switch {
	case perr != nil:
		return nil, perr
	case ferr != nil:
		return nil, ferr
	}
	kinds := make([]string, 0, len(st.counts))
	for k := range st.counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		if c := st.counts[k]; c > maxProblemsPerKind {
			snap.Problems = append(snap.Problems, store.Problem{Severity: store.SevWarning,
				Reason: fmt.Sprintf("%d rows with %s in all (the first %d are listed)", c, k, maxProblemsPerKind)})
		}
	}
	return snap, nil
}
