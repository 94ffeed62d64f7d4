package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/jsonpos"
	"github.com/sessionfix/sessionfix/store"
)

// Profile describes one SQLite store format: where tool names live in it. It is plain data, so
// any store can be described in a JSON file (ReadProfile, `--profile FILE`):
//
//	{"name": "notes", "agent": "notes",
//	 "detect": ["part.data", "message.data", "session.id"],
//	 "tables": [
//	   {"table": "part", "column": "data",
//	    "sites": [{"path": "$.tool", "when": {"path": "$.type", "in": ["tool"]}, "call_id": "$.callID"}]},
//	   {"table": "event", "column": "data", "where": [{"column": "type", "prefix": "message.part.updated."}],
//	    "sites": [{"path": "$.part.tool", "when": {"path": "$.part.type", "in": ["tool"]}}]},
//	   {"table": "session", "column": "permission", "sites": [{"path": "$[*].permission", "kind": "rule"}]}]}
type Profile struct {
	// Name identifies the profile in reports ("notes").
	Name string `json:"name"`
	// Agent is the naming scheme of the agent that writes the store (Snapshot.Agent): it picks
	// the rewrite rule (rewrite.NamerFor).
	Agent store.AgentID `json:"agent"`
	// Detect lists "table.column" pairs that must all exist for DetectProfile to pick this
	// profile. Empty: the JSON column of every table that is not Optional.
	Detect []string `json:"detect,omitempty"`
	// Files, when set, are the base names (path.Match patterns: "fork.db", "fork-*.db") the
	// database file must have, besides Detect, for the profile to be picked: a fork that keeps
	// its upstream's schema is told apart by its file name. Empty: any name.
	Files []string `json:"files,omitempty"`
	// Tables are read in this order.
	Tables []TableSpec `json:"tables"`

	// Check, when set, runs after the tables are read (an agent room's own consistency
	// checks, such as threads against the session files they name). Not part of a JSON profile.
	Check CheckFunc `json:"-"`
	// Refuse, when set, runs before the tables are read and says why the database must not
	// be rewritten ("" when it may be): a schema the agent's current release cannot open, say.
	// The reason becomes the snapshot's NotWritable (so every batch is planned with it) and a
	// warning of the scan. Not part of a JSON profile.
	Refuse RefuseFunc `json:"-"`
}

// RefuseFunc is a profile's refusal test (Profile.Refuse): the reason the database must not
// be rewritten, "" when it may be; an error fails the scan.
type RefuseFunc func(ctx context.Context, db *DB) (string, error)

// TableSpec is one table with a JSON column that holds name sites.
type TableSpec struct {
	Table string `json:"table"`
	// Key names the columns that identify a row (reported as "part id=prt_…" and used to find
	// the row again when rewriting and undoing). Default: the primary key, else the rowid.
	Key []string `json:"key,omitempty"`
	// Column is the column holding one JSON document per row (TEXT or BLOB).
	Column string `json:"column"`
	// Where restricts the rows read, by plain column conditions (all must hold).
	Where []ColumnCond `json:"where,omitempty"`
	// CallScope names a column whose value scopes call ids (call ids repeat across sessions):
	// a site's CallID becomes "<scope>/<id>".
	CallScope string `json:"call_scope,omitempty"`
	// Optional marks a table that older versions of the agent do not have: its absence is
	// reported as info rather than as a warning.
	Optional bool `json:"optional,omitempty"`
	// Sites are the name sites inside the JSON column.
	Sites []SiteSpec `json:"sites"`
	// Parent, when set, says each row belongs to a row of an earlier table spec (Open WebUI's
	// chat_message rows to their chat: {"table": "chat", "column": "chat_id"}): an engine that
	// writes in several transactions (engine/postgres) reads and writes them in the batch of
	// their parent row, so both places of one chat change in one transaction. The SQLite engine
	// writes a store in one transaction and needs nothing more.
	Parent *ParentSpec `json:"parent,omitempty"`
}

// ParentSpec names the parent of a table spec's rows: the earlier spec's Table and this table's
// Column that holds the parent's key.
type ParentSpec struct {
	Table  string `json:"table"`
	Column string `json:"column"`
}

// ColumnCond is a condition on a plain column, evaluated by SQLite: the value is one of In, or
// starts with Prefix (byte-wise, case-sensitive).
type ColumnCond struct {
	Column string   `json:"column"`
	In     []string `json:"in,omitempty"`
	Prefix string   `json:"prefix,omitempty"`
}

// SiteSpec is one kind of name site inside a JSON column.
//
// Paths are written "$.a.b", "$[*].c" (any array element), "$.m.*" (any member value) or
// "$.m.{}" (the member keys themselves). When, CallID and Server are resolved in the scope the
// site shares with them: for Path "$[*].data.name" and When.Path "$[*].type", the condition is
// read in the same array element.
type SiteSpec struct {
	Path string `json:"path"`
	// When, if set, keeps only sites whose condition string value is one of When.In.
	When *JSONCond `json:"when,omitempty"`
	// Kind is the site kind: "call", "response", "rule" (a permission rule: reported, never
	// rewritten) or "column" (default).
	Kind string `json:"kind,omitempty"`
	// CallID is the path of the call id tying a call to its response.
	CallID string `json:"call_id,omitempty"`
	// Server is the path of the raw server key, when the record names it.
	Server string `json:"server,omitempty"`
	// ReadOnly sites are reported and never rewritten.
	ReadOnly bool `json:"read_only,omitempty"`
	// Identity marks a raw identity (the tool name a server listed, with Server): reported in
	// Snapshot.Identities (an inventory), not as a name site, and never rewritten (stores.md §3).
	Identity bool `json:"identity,omitempty"`
}

// JSONCond is a condition on a string value inside the same JSON document.
type JSONCond struct {
	Path string   `json:"path"`
	In   []string `json:"in"`
}

// ErrBadProfile means a profile is malformed.
var ErrBadProfile = errors.New("invalid SQLite store profile")

// ReadProfile reads a JSON profile (see Profile) from path and validates it (unknown fields are
// errors, so a typo does not silently scan nothing); it also returns the file's bytes as read (a
// fix run records them in its manifest, so undo reopens the store with the same profile: issue
// 23 item 6).
func ReadProfile(path string) (*Profile, []byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read profile: %w", err)
	}
	p, err := ParseProfile(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s%s: %w", path, jsonpos.At(b, err), err)
	}
	return p, b, nil
}

// ParseProfile decodes and validates a JSON profile.
func ParseProfile(b []byte) (*Profile, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	p := &Profile{}
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadProfile, err)
	}
	if _, err := compileProfile(p); err != nil {
		return nil, err
	}
	return p, nil
}

// detectPairs returns the "table.column" pairs that identify the profile.
func (p *Profile) detectPairs() [][2]string {
	var out [][2]string
	if len(p.Detect) > 0 {
		for _, d := range p.Detect {
			t, c, _ := strings.Cut(d, ".")
			out = append(out, [2]string{t, c})
		}
		return out
	}
	for _, t := range p.Tables {
		if !t.Optional {
			out = append(out, [2]string{t.Table, t.Column})
		}
	}
	return out
}

// takesFile reports whether the database file at p has a base name the profile takes (Files).
func (p *Profile) takesFile(file string) bool {
	if len(p.Files) == 0 {
		return true
	}
	base := filepath.Base(file)
	for _, f := range p.Files {
		if ok, _ := path.Match(f, base); ok {
			return true
		}
	}
	return false
}

// compiled is a profile ready for scanning.
type compiled struct {
	prof   *Profile
	tables []*compiledTable
}

type compiledTable struct {
	spec  *TableSpec
	pat   *jsonscan.Patterns
	npat  int // pattern ids are 0..npat-1
	sites []compiledSite
}

// compiledSite binds a site's path and its helpers to pattern ids and scopes.
type compiledSite struct {
	spec   *SiteSpec
	kind   store.SiteKind
	pat    int
	when   binding
	in     map[string]bool
	callID binding
	server binding
}

// binding is an optional helper path: its pattern id (-1 when absent) and how many leading
// path elements it shares with the site (its captures must agree on those).
type binding struct {
	pat   int
	scope int
}

// compileProfile checks a profile (its name, agent, detect and files entries, then each
// table spec) and compiles each table's site paths into one jsonscan pattern set. Errors wrap
// ErrBadProfile and name the profile, the table and the entry.
func compileProfile(p *Profile) (*compiled, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrBadProfile, p.Name, fmt.Sprintf(format, args...))
	}
	if err := checkProfileHead(p, bad); err != nil {
		return nil, err
	}
	c := &compiled{prof: p}
	for i := range p.Tables {
		ct, err := compileTable(p, i, bad)
		if err != nil {
			return nil, err
		}
		c.tables = append(c.tables, ct)
	}
	return c, nil
}

// checkProfileHead checks what a profile says outside its tables: a name, an agent, tables
// (or a check), detect entries of the form table.column, files entries that are base-name
// patterns.
func checkProfileHead(p *Profile, bad func(string, ...any) error) error {
	if p.Name == "" {
		return bad("no name")
	}
	if p.Agent == "" {
		return bad("no agent (the id of the agent that writes the store: it picks the naming scheme)")
	}
	if len(p.Tables) == 0 && p.Check == nil {
		return bad("no tables")
	}
	for _, d := range p.Detect {
		if t, c, ok := strings.Cut(d, "."); !ok || t == "" || c == "" {
			return bad("detect entry %q is not table.column", d)
		}
	}
	for _, f := range p.Files {
		if _, err := path.Match(f, ""); err != nil || f == "" || strings.Contains(f, "/") {
			return bad("files entry %q is not a base-name pattern", f)
		}
	}
	return nil
}

// compileTable checks table spec i of p (table and column, where conditions, sites, a parent
// that is an earlier spec without a parent) and compiles its sites.
func compileTable(p *Profile, i int, bad func(string, ...any) error) (*compiledTable, error) {
	ts := &p.Tables[i]
	if ts.Table == "" || ts.Column == "" {
		return nil, bad("table %d: table and column are required", i)
	}
	for _, w := range ts.Where {
		if w.Column == "" || (len(w.In) == 0 && w.Prefix == "") {
			return nil, bad("table %s: a where condition needs a column and in or prefix", ts.Table)
		}
	}
	if len(ts.Sites) == 0 {
		return nil, bad("table %s: no sites", ts.Table)
	}
	if pa := ts.Parent; pa != nil {
		ok := false
		for _, e := range p.Tables[:i] {
			ok = ok || (strings.EqualFold(e.Table, pa.Table) && e.Parent == nil)
		}
		if !ok || pa.Column == "" {
			return nil, bad("table %s: parent needs a column and the table of an earlier spec without a parent", ts.Table)
		}
	}
	ct := &compiledTable{spec: ts}
	ps := &patternSet{index: map[string]int{}, bad: func(err error) error { return bad("table %s: %v", ts.Table, err) }}
	for j := range ts.Sites {
		cs, err := compileSite(&ts.Sites[j], ps, func(format string, args ...any) error {
			return bad("table %s: "+format, append([]any{ts.Table}, args...)...)
		})
		if err != nil {
			return nil, err
		}
		ct.sites = append(ct.sites, cs)
	}
	pt, err := jsonscan.Compile(ps.pats...)
	if err != nil {
		return nil, bad("table %s: %v", ts.Table, err)
	}
	ct.pat, ct.npat = pt, len(ps.pats)
	return ct, nil
}

// patternSet is the jsonscan patterns of one table, each once: a site's path and its helper
// paths (when, call id, server) share ids.
type patternSet struct {
	pats  []string
	index map[string]int
	bad   func(error) error // wraps a path's error with the profile and table
}

// add returns the id of path's pattern (added when new) and its steps.
func (ps *patternSet) add(path string) (int, []string, error) {
	pat, steps, err := patternOf(path)
	if err != nil {
		return 0, nil, ps.bad(err)
	}
	if id, ok := ps.index[pat]; ok {
		return id, steps, nil
	}
	ps.index[pat] = len(ps.pats)
	ps.pats = append(ps.pats, pat)
	return len(ps.pats) - 1, steps, nil
}

// compileSite compiles one site spec: its kind, its path's pattern and the bindings of its
// helper paths (each with the leading steps it shares with the site's path).
func compileSite(ss *SiteSpec, ps *patternSet, bad func(string, ...any) error) (compiledSite, error) {
	cs := compiledSite{spec: ss, when: binding{pat: -1}, callID: binding{pat: -1}, server: binding{pat: -1}}
	switch ss.Kind {
	case "", "column":
		cs.kind = store.SiteColumn
	case "call":
		cs.kind = store.SiteCall
	case "response":
		cs.kind = store.SiteResponse
	case "rule":
		cs.kind = store.SiteRule
	default:
		return cs, bad("unknown site kind %q (call, response, rule or column)", ss.Kind)
	}
	id, steps, err := ps.add(ss.Path)
	if err != nil {
		return cs, err
	}
	cs.pat = id
	bind := func(path string) (binding, error) {
		if path == "" {
			return binding{pat: -1}, nil
		}
		id, hs, err := ps.add(path)
		if err != nil {
			return binding{}, err
		}
		return binding{pat: id, scope: commonSteps(steps, hs)}, nil
	}
	if ss.When != nil {
		if len(ss.When.In) == 0 {
			return cs, bad("site %s: when needs in", ss.Path)
		}
		if cs.when, err = bind(ss.When.Path); err != nil {
			return cs, err
		}
		cs.in = map[string]bool{}
		for _, v := range ss.When.In {
			cs.in[v] = true
		}
	}
	if cs.callID, err = bind(ss.CallID); err != nil {
		return cs, err
	}
	if cs.server, err = bind(ss.Server); err != nil {
		return cs, err
	}
	return cs, nil
}

// patternOf turns "$.a[*].b" into the jsonscan pattern "a.[*].b" and its steps.
func patternOf(path string) (string, []string, error) {
	p := strings.TrimPrefix(path, "$")
	p = strings.TrimPrefix(p, ".")
	if p == "" {
		return "", nil, fmt.Errorf("path %q names no value", path)
	}
	var steps []string
	for i := 0; i < len(p); {
		switch {
		case strings.HasPrefix(p[i:], "[*]"):
			steps = append(steps, "[*]")
			i += 3
		case p[i] == '.':
			if i+1 >= len(p) || p[i+1] == '.' {
				return "", nil, fmt.Errorf("path %q has an empty step", path)
			}
			i++
		default:
			j := i
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			if j == i {
				return "", nil, fmt.Errorf("path %q: unexpected %q (steps are keys, [*], * and {})", path, p[i])
			}
			steps = append(steps, p[i:j])
			i = j
		}
	}
	for i, s := range steps {
		if s == "{}" && i != len(steps)-1 {
			return "", nil, fmt.Errorf("path %q: {} must be the last step", path)
		}
	}
	return strings.Join(steps, "."), steps, nil
}

// commonSteps counts the leading steps a and b share.
func commonSteps(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
