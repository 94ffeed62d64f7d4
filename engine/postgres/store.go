package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
)

// Profile is the profile format of table stores (the SQLite engine's: plain data).
type Profile = sqlite.Profile

// Defaults of Options.
const (
	DefaultStatementTimeout = 60 * time.Second
	DefaultLockTimeout      = 2 * time.Second
	DefaultBatchRows        = 500
	// BackupTable is the table of the old values, in the schema of the store's tables.
	BackupTable = "sessionfix_backup"
)

// Options tunes a PostgreSQL store.
type Options struct {
	// Profile, when set, is tried first (--profile FILE); Profiles after it, in order (agent/all
	// passes every agent room's table profiles).
	Profile  *Profile
	Profiles []*Profile
	// StatementTimeout bounds every statement (statement_timeout); LockTimeout bounds the wait
	// for a lock (lock_timeout; --busy-timeout). Zero: the defaults; negative: no bound.
	StatementTimeout time.Duration
	LockTimeout      time.Duration
	// BatchRows is how many rows one fetch reads and one transaction writes (0: 500).
	//
	// The password and the other libpq variables (PGPASSWORD, PGPASSFILE, PGHOST, PGSSLMODE, …)
	// are read by pgx from the process environment (pgconn.ParseConfig reads os.LookupEnv and
	// offers no hook for another environment), besides the DSN itself.
	BatchRows int
}

func (o Options) batch() int {
	if o.BatchRows <= 0 {
		return DefaultBatchRows
	}
	return o.BatchRows
}

func bound(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// Store is one PostgreSQL database read with a Profile.
type Store struct {
	dsn    string // as given: may hold a password; never printed
	ref    string // store.Redact(dsn)
	secret string // the password in dsn ("" when none), scrubbed from every error
	opt    Options
	prof   *Profile
	// sessions counts the connections the store opened (each authenticated session, in any
	// pool): each is a server process started and an authentication.
	sessions atomic.Int64
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.BatchScanner = (*Store)(nil)
	_ store.Writer       = (*Store)(nil)
	_ store.BatchWriter  = (*Store)(nil)
	_ store.Restorer     = (*Store)(nil)
	_ store.Profiled     = (*Store)(nil)
)

// Open returns the store named by dsn (a postgres:// URL). The profile is detected from the
// schema when the store is scanned; Restore needs none. Open does not connect.
func Open(dsn string, opt Options) *Store {
	s := &Store{dsn: dsn, ref: store.Redact(dsn), opt: opt}
	if u, err := url.Parse(dsn); err == nil {
		if p, ok := u.User.Password(); ok {
			s.secret = p
		}
		for k, v := range u.Query() {
			if strings.EqualFold(k, "password") && len(v) > 0 {
				s.secret = v[0]
			}
		}
	}
	return s
}

// Ref identifies the store: the redacted reference.
func (s *Store) Ref() store.Ref { return store.Ref{Path: s.ref, Kind: store.KindPostgres} }

// Profile returns the profile the store is read with (nil before a Scan detected it).
func (s *Store) Profile() *Profile { return s.prof }

// ProfileName is the name of the profile ("" before a Scan detected it): store.Profiled.
func (s *Store) ProfileName() string {
	if s.prof == nil {
		return ""
	}
	return s.prof.Name
}

// scrub removes the password from an error's text (a driver may quote the DSN it was given).
func (s *Store) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := strings.ReplaceAll(msg, s.dsn, s.ref)
	if s.secret != "" {
		clean = strings.ReplaceAll(clean, s.secret, "xxxxx")
		clean = strings.ReplaceAll(clean, url.QueryEscape(s.secret), "xxxxx")
		clean = strings.ReplaceAll(clean, url.PathEscape(s.secret), "xxxxx")
	}
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

// scrubbed is an error whose text had a secret removed; errors.Is still sees what it wraps
// (its text is never the wrapped error's).
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// config is the connection configuration of the store: its DSN with the timeouts set as
// session parameters (statement_timeout, lock_timeout, idle_in_transaction_session_timeout).
func (s *Store) config() (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(s.dsn)
	if err != nil {
		return nil, s.scrub(fmt.Errorf("%s: %w", s.ref, err))
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	ms := func(d time.Duration) string { return fmt.Sprint(d.Milliseconds()) }
	cfg.RuntimeParams["statement_timeout"] = ms(bound(s.opt.StatementTimeout, DefaultStatementTimeout))
	cfg.RuntimeParams["lock_timeout"] = ms(bound(s.opt.LockTimeout, DefaultLockTimeout))
	cfg.RuntimeParams["idle_in_transaction_session_timeout"] = ms(bound(s.opt.StatementTimeout, DefaultStatementTimeout) * 2)
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "sessionfix"
	}
	after := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, pc *pgconn.PgConn) error {
		s.sessions.Add(1)
		if after != nil {
			return after(ctx, pc)
		}
		return nil
	}
	return cfg, nil
}

// connectPipe opens one connection of pgx's own interface (config's settings), which can send
// several statements in one round trip (pgconn.Batch, through its PgConn: wire.go): the writer's.
// Its statements are planned once, generically (plan_cache_mode), and without nested loops
// (enable_nestloop off): the write statement (writeSQL) then joins its parameters to one TID
// scan of the locked rows by a hash join, not a rescan of a TID scan per row. The writer's other
// statements read one table each.
func (s *Store) connectPipe(ctx context.Context) (*pgx.Conn, error) {
	cfg, err := s.config()
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["enable_nestloop"] = "off"
	cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, s.scrub(fmt.Errorf("connect to %s: %w", s.ref, err))
	}
	return c, nil
}

// connect opens a pool of at most two connections with config's settings.
func (s *Store) connect(ctx context.Context) (*sqlx.DB, error) {
	cfg, err := s.config()
	if err != nil {
		return nil, err
	}
	db := sqlx.NewDb(stdlib.OpenDB(*cfg), "pgx")
	db.SetMaxOpenConns(2)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, s.scrub(fmt.Errorf("connect to %s: %w", s.ref, err))
	}
	return db, nil
}

// ErrNoProfile means no profile describes the database.
var ErrNoProfile = errors.New("no known table store profile matches the database")

// NoProfileError says which tables the database has, so the user can write a profile.
type NoProfileError struct {
	Ref    string
	Tables []string
}

func (e *NoProfileError) Error() string { return e.Ref + ": " + e.Reason() }

// Reason is the message without the reference.
func (e *NoProfileError) Reason() string {
	t := strings.Join(e.Tables, ", ")
	if len(t) > 200 {
		t = t[:200] + "…"
	}
	return fmt.Sprintf("%v (tables: %s); describe it with --profile FILE", ErrNoProfile, t)
}

// Unwrap returns ErrNoProfile.
func (e *NoProfileError) Unwrap() error { return ErrNoProfile }

// Detect connects, reads the schema and returns the store with the matching profile
// (opt.Profile first, then opt.Profiles): a *NoProfileError when none matches, another error
// when the server cannot be reached or the schema read (scrubbed of the password).
func Detect(ctx context.Context, dsn string, opt Options) (*Store, error) {
	s := Open(dsn, opt)
	db, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	sch, err := readSchema(ctx, db)
	if err != nil {
		return nil, s.scrub(fmt.Errorf("%s: %w", s.ref, err))
	}
	if s.prof = detectProfile(sch, append([]*Profile{opt.Profile}, opt.Profiles...)...); s.prof == nil {
		return nil, &NoProfileError{Ref: s.ref, Tables: sch.names}
	}
	return s, nil
}

// column is one column of a table: its type as format_type prints it and its base type name.
type column struct {
	name string // as the catalog spells it
	typ  string // "json", "jsonb", "text", "character varying", "bigint", …
	base string // pg_type.typname: json, jsonb, text, varchar, int8, …
}

type table struct {
	name string
	cols map[string]column
	pk   []string
}

type schema struct {
	schema string
	tables map[string]*table // by lower-case name
	names  []string
}

func (s *schema) table(name string) *table { return s.tables[strings.ToLower(name)] }

func (t *table) column(name string) (column, bool) {
	c, ok := t.cols[strings.ToLower(name)]
	return c, ok
}

func (s *schema) has(t, c string) bool {
	tb := s.table(t)
	if tb == nil {
		return false
	}
	_, ok := tb.cols[strings.ToLower(c)]
	return ok
}

// readSchema reads the tables and columns of the current schema (the first of search_path that
// exists) and their primary keys.
func readSchema(ctx context.Context, db sqlx.QueryerContext) (*schema, error) {
	sch := &schema{tables: map[string]*table{}}
	if err := sqlx.GetContext(ctx, db, &sch.schema, "SELECT current_schema()"); err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	rows, err := db.QueryxContext(ctx, `SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), t.typname
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_type t ON t.oid = a.atttypid
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY c.relname, a.attnum`)
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var tn, cn, typ, base string
		if err := rows.Scan(&tn, &cn, &typ, &base); err != nil {
			return nil, fmt.Errorf("read schema: %w", err)
		}
		tb := sch.tables[strings.ToLower(tn)]
		if tb == nil {
			tb = &table{name: tn, cols: map[string]column{}}
			sch.tables[strings.ToLower(tn)] = tb
			sch.names = append(sch.names, tn)
		}
		tb.cols[strings.ToLower(cn)] = column{name: cn, typ: typ, base: base}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	pk, err := db.QueryxContext(ctx, `SELECT c.relname, a.attname
FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
WHERE i.indisprimary AND n.nspname = current_schema() ORDER BY c.relname, k.ord`)
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	defer pk.Close()
	for pk.Next() {
		var tn, cn string
		if err := pk.Scan(&tn, &cn); err != nil {
			return nil, fmt.Errorf("read schema: %w", err)
		}
		if tb := sch.tables[strings.ToLower(tn)]; tb != nil {
			tb.pk = append(tb.pk, cn)
		}
	}
	return sch, pk.Err()
}

// detectProfile returns the first candidate whose detect pairs all exist.
func detectProfile(s *schema, candidates ...*Profile) *Profile {
	for _, p := range candidates {
		if p == nil {
			continue
		}
		ok := len(p.DetectPairs()) > 0
		for _, d := range p.DetectPairs() {
			ok = ok && s.has(d[0], d[1])
		}
		if ok {
			return p
		}
	}
	return nil
}

// ident quotes an identifier.
func ident(s string) string { return pgx.Identifier{s}.Sanitize() }
