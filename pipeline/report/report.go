// Package report is the report types of scan, fix, check and undo: the JSON schema
// (docs/report.md: ScanReport, FixStore, FixTail, CheckReport, UndoReport and their rows), the
// text tables built from them (tables.go), scan's SARIF results (ScanSARIF), check's and the
// re-dispatch findings' SARIF results and lines, and the --all-users homes. The engine (package
// pipeline) fills them; the commands print them (textreport) or write them as they are.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/check"
	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

// ProblemRow is one problem in a report. Where is the location as text (kept for
// compatibility); Line (1-based line of a line-oriented store) or Row (the table row of a
// database, "part id=prt_01…") give it as a field of its own.
type ProblemRow struct {
	Path     string `json:"path"`
	Where    string `json:"where,omitempty"`
	Line     int64  `json:"line,omitempty"`
	Row      string `json:"row,omitempty"`
	Severity string `json:"severity"`
	Reason   string `json:"reason"`
}

// NewProblem is a ProblemRow at loc; a reason that starts with the path itself (an error
// that names its file) loses that prefix, so the printed line names the path once.
func NewProblem(path string, loc store.Loc, severity, reason string) ProblemRow {
	return ProblemRow{Path: path, Where: whereOf(loc), Line: loc.Line, Row: loc.Row, Severity: severity, Reason: TrimPathPrefix(path, reason)}
}

// TrimPathPrefix drops the problem's own path from its reason: a leading "PATH: " and a
// wrapped os error's "open PATH: " (also stat, lstat, read) anywhere in it, so the printed
// line names the path once ("b.db: error: SQLite database that cannot be read: file is not a
// database").
func TrimPathPrefix(path, reason string) string {
	if path == "" {
		return reason
	}
	reason = strings.TrimPrefix(reason, path+": ")
	for _, op := range []string{"open ", "stat ", "lstat ", "read "} {
		reason = strings.ReplaceAll(reason, op+path+": ", "")
	}
	return reason
}

// pathLoc matches a reason that starts with its own path and a position: "PATH:2:1: rest"
// (settings parse errors, file:line:col) — group 1 the position, group 2 the rest.
var pathLoc = regexp.MustCompile(`^:(\d+(?::\d+)?): (.*)$`)

// String is the problem's line: "PATH[:WHERE]: SEVERITY: REASON", the path named once (a
// reason "PATH:2:1: …" becomes "PATH:2:1: error: …").
func (p ProblemRow) String() string {
	loc, reason := p.Path, p.Reason
	if p.Where != "" {
		loc += ":" + p.Where
	} else if p.Path != "" && strings.HasPrefix(reason, p.Path+":") {
		if m := pathLoc.FindStringSubmatch(reason[len(p.Path):]); m != nil {
			loc, reason = p.Path+":"+m[1], m[2]
		}
	}
	return fmt.Sprintf("%s: %s: %s", loc, p.Severity, TrimPathPrefix(p.Path, reason))
}

func whereOf(l store.Loc) string {
	if l.Row == "" && l.Line == 0 {
		return ""
	}
	return l.String()
}

// ScanReport is the machine-readable scan result (scan --format json).
type ScanReport struct {
	Roots   []string `json:"roots"`
	Elapsed string   `json:"elapsed"`
	Bytes   int64    `json:"bytes"`
	Records int64    `json:"records"`
	Ignored int      `json:"ignored_files"`
	// IgnoredPaths names them (the first 1000): nothing is skipped silently.
	IgnoredPaths []string              `json:"ignored_paths"`
	Totals       rewrite.Totals        `json:"totals"`
	Classes      map[mcpname.Class]int `json:"classes"`
	Stores       []StoreRow            `json:"stores"`
	Renames      []RenameRow           `json:"renames"`
	Kept         []RenameRow           `json:"kept"`
	Problems     []ProblemRow          `json:"problems"`
	// SettingsRules are the rules of settings files among the roots written in legacy
	// spellings (reported, never rewritten).
	SettingsRules []SettingsRuleRow `json:"settings_rules"`
	// Identities are the raw MCP identities (server key, raw tool name) the stores record:
	// records an agent keeps of the tools it called (store.Snapshot.Identities: invocation
	// records, tool-call items of a history database). Never rewritten; they feed the
	// agent's namer.
	Identities []IdentityRow `json:"identities"`
	// Agents name, per agent home, what the agent's stores were planned with (a config, an
	// inventory): in JSON one member per agent named by its ID, right after "identities"
	// (absent for an agent with no row; MarshalJSON).
	Agents AgentInfo `json:"-"`
	// Redispatch are the stored calls that reach another tool today, or several, by the agent's
	// own lookup (check.Redispatches; issue 13 item 3): never rewritten into another tool.
	Redispatch []check.Redispatch `json:"redispatch"`
	// Homes are the homes --all-users covered, each with its stores' counts (absent without
	// --all-users).
	Homes []Home `json:"homes,omitempty"`
}

// IdentityRow is one raw MCP identity recorded in the stores: how many records hold it, in how
// many stores.
type IdentityRow struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Count  int    `json:"count"`
	Stores int    `json:"stores"`
}

// StoreRow is one store read by scan ("stores"): its size, records, name sites, and how many
// names fix would rewrite or keep; Error (and InUse) when it could not be read.
type StoreRow struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	// Profile is the name of the SQLite profile a database was read with; text tables show it
	// as the kind.
	Profile string `json:"profile,omitempty"`
	// Bytes is the store's size when it was read.
	Bytes    int64  `json:"bytes"`
	Records  int64  `json:"records"`
	Sites    int    `json:"sites"`
	Rewrite  int    `json:"rewrite"`
	Kept     int    `json:"kept"`
	Problems int    `json:"problems"`
	Error    string `json:"error,omitempty"`
	// InUse is set when Error says another process kept the store locked (exit 4).
	InUse bool `json:"in_use,omitempty"`
}

// NameText is a stored name in a report: text tables show Site.DisplayName (a lone surrogate as
// the text \ud800); JSON has the exact string, a lone surrogate written as a \uXXXX escape,
// so JSON.parse gives back the very same UTF-16 units.
type NameText struct {
	text  string
	units []uint16 // set only for a name with a lone surrogate
}

func SiteName(s *store.Site) NameText { return NameText{text: s.DisplayName(), units: s.Units} }

func (n NameText) String() string { return n.text }

// MarshalJSON writes the exact name.
func (n NameText) MarshalJSON() ([]byte, error) {
	if n.units != nil {
		return jsonscan.AppendQuoteUnits(nil, n.units), nil
	}
	return json.Marshal(n.text)
}

// UnmarshalJSON reads a name back (tests); a lone surrogate becomes U+FFFD.
func (n *NameText) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &n.text) }

// RenameRow counts one old → new rename (or one kept name) over the whole run ("renames",
// "kept"), per distinct old name, new name and note.
type RenameRow struct {
	Old   NameText `json:"old"`
	New   string   `json:"new,omitempty"`
	Class string   `json:"class"`
	// Reasons say why a legacy-dotted name is rejected (mcpname.RejectReasons: "dotted",
	// "non-ascii", "over-long", …); text tables show them as the class ("legacy-non-ascii").
	Reasons []string `json:"reasons,omitempty"`
	Count   int      `json:"count"`
	Note    string   `json:"note,omitempty"`
}

// RejectReasons is mcpname.RejectReasons of a legacy-dotted site (nil for other classes).
func RejectReasons(c mcpname.Class, s *store.Site) []string {
	if c != mcpname.ClassLegacyDotted {
		return nil
	}
	if s.Units != nil {
		return mcpname.RejectReasonsUnits(s.Units)
	}
	return mcpname.RejectReasons(s.Name)
}

// ClassLabel is the class a text table shows: a legacy-dotted name is named by what is wrong
// with it ("legacy-dotted", "legacy-non-ascii", "legacy-dotted+over-long"), so a name without
// a dot is not called dotted; other classes as they are.
func ClassLabel(c mcpname.Class, s *store.Site) string {
	return ReasonLabel(string(c), RejectReasons(c, s))
}

func ReasonLabel(class string, reasons []string) string {
	if class != string(mcpname.ClassLegacyDotted) || len(reasons) == 0 {
		return class
	}
	return "legacy-" + strings.Join(reasons, "+")
}

// KindLabel is the kind a text table shows: a database's profile name, else its kind.
func KindLabel(kind, profile string) string {
	if profile != "" {
		return profile
	}
	return kind
}

// ProfileOf is the SQLite profile name of st ("" for other stores or before detection).
func ProfileOf(st store.Store) string {
	if db, ok := st.(store.Profiled); ok {
		return db.ProfileName()
	}
	return ""
}

// StoresPhrase counts stores as files and databases: "1 file", "1 database", "2 files and 1 database".
func StoresPhrase(stores, dbs int) string {
	files := stores - dbs
	switch {
	case dbs == 0:
		return reports.Plural(files, "file")
	case files == 0:
		return reports.Plural(dbs, "database")
	}
	return reports.Plural(files, "file") + " and " + reports.Plural(dbs, "database")
}

// SortedRows lists the rows of m by old name, new name, class and note.
func SortedRows(m map[[3]string]*RenameRow) []RenameRow {
	out := make([]RenameRow, 0, len(m))
	for _, r := range m {
		out = append(out, *r)
	}
	// A total order: rows of one old → new pair differ by note (one agent's name attributed
	// from its history in one home and from its config's server key in another), and the map's
	// order must not reach the report.
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.Old.text != b.Old.text:
			return a.Old.text < b.Old.text
		case a.New != b.New:
			return a.New < b.New
		case a.Class != b.Class:
			return a.Class < b.Class
		}
		return a.Note < b.Note
	})
	return out
}

// DecisionRow is one planned name. Where is the location as text (kept for compatibility);
// Line (1-based, line-oriented stores) or Row (a database row, "part id=prt_01…") and Offset
// (byte offset of the name token) give it as fields of their own.
type DecisionRow struct {
	Where  string   `json:"where"`
	Line   int64    `json:"line,omitempty"`
	Row    string   `json:"row,omitempty"`
	Offset int64    `json:"offset"`
	Site   string   `json:"site"`
	Path   string   `json:"path"`
	Old    NameText `json:"old"`
	New    string   `json:"new,omitempty"`
	Class  string   `json:"class"`
	// Reasons: see RenameRow.
	Reasons []string `json:"reasons,omitempty"`
	Action  string   `json:"action"`
	Source  string   `json:"source,omitempty"`
	Note    string   `json:"note,omitempty"`
}

// StoreOutcome is what --apply did to one store.
type StoreOutcome struct {
	Status string `json:"status"` // rewritten, in-use, failed
	Names  int    `json:"names"`
	Reason string `json:"reason,omitempty"`
}

// FixStore is one store of fix --format json ("stores" members, streamed as they are planned):
// its decisions (the names to rewrite or kept; with -v every name) and, with --apply, what
// happened to it.
type FixStore struct {
	Path      string        `json:"path"`
	Kind      string        `json:"kind"`
	Profile   string        `json:"profile,omitempty"`
	Decisions []DecisionRow `json:"decisions,omitempty"`
	Outcome   *StoreOutcome `json:"outcome,omitempty"`
	// Cont marks a later part of a store planned batch by batch (rewrite.Batch): its plan
	// goes on the previous part's, without the store's heading again (text only).
	Cont bool `json:"-"`
	// Open: more parts of the store follow (text: no blank line after this one).
	Open bool `json:"-"`
}

// SkippedRow is a store --apply skipped (in use, changed since it was planned) or failed to
// rewrite (fix --format json "skipped").
type SkippedRow struct {
	Path   string `json:"path"`
	InUse  bool   `json:"in_use"`
	Reason string `json:"reason"`
	// DB marks a database (counted as such in the closing line; not in the JSON).
	DB bool `json:"-"`
}

// SkippedPhrase is the closing line's count of the stores --apply skipped: files and databases
// (StoresPhrase) and why: "1 database skipped (in use)", "2 files skipped (1 in use, 1 failed)".
func SkippedPhrase(rows []SkippedRow) string {
	dbs, inUse := 0, 0
	for _, r := range rows {
		if r.DB {
			dbs++
		}
		if r.InUse {
			inUse++
		}
	}
	why := fmt.Sprintf("%d in use, %d failed", inUse, len(rows)-inUse)
	switch inUse {
	case len(rows):
		why = "in use"
	case 0:
		why = "failed"
	}
	return fmt.Sprintf("%s skipped (%s)", StoresPhrase(len(rows), dbs), why)
}

// FixTail is the end of the JSON document.
type FixTail struct {
	RunID   string `json:"run_id,omitempty"`
	RunDir  string `json:"run_dir,omitempty"`
	Summary string `json:"summary"`
	// Kept is the KeptLine sentence (kept_note) ("" when no name a provider rejects was kept).
	Kept     string         `json:"kept_note,omitempty"`
	Totals   rewrite.Totals `json:"totals"`
	Skipped  []SkippedRow   `json:"skipped"`
	Problems []ProblemRow   `json:"problems"`
	// Agents name what the agents' stores were planned with: in JSON one member per agent
	// named by its ID, right after "problems" (as ScanReport's; MarshalJSON).
	Agents AgentInfo `json:"-"`
	// Redispatch are the stored calls that reach another tool today, or several (as scan's;
	// fix leaves them as they are, each says why); absent when none.
	Redispatch []check.Redispatch `json:"redispatch,omitempty"`
	// RedispatchNote is RedispatchLine ("" when none).
	RedispatchNote string `json:"redispatch_note,omitempty"`
	// Moves are the stores fix --move-legacy moves (a dry run: would move; an apply: moved,
	// or the error that kept one where it was); absent when none.
	Moves []MoveRow `json:"moves,omitempty"`
	// Homes are the homes fix --all-users covered (ScanReport.Homes).
	Homes []Home `json:"homes,omitempty"`
}

// MoveRow is one store fix --move-legacy moves: from, to, the agent's reason, and for an
// apply whether it was moved (Error says why not, or, when Moved, what failed after the move).
type MoveRow struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Why   string `json:"why"`
	Moved bool   `json:"moved"`
	Error string `json:"error,omitempty"`
}

// MoveRows are the rows of a dry run's relocations (moves) or an apply's outcomes (res).
func MoveRows(moves []rewrite.Relocation, res *rewrite.Result) []MoveRow {
	var out []MoveRow
	if res != nil {
		for _, m := range res.Moves {
			r := MoveRow{From: m.Entry.From, To: m.Entry.To, Why: m.Entry.Why, Moved: m.Moved}
			if m.Err != nil {
				r.Error = m.Err.Error()
			}
			out = append(out, r)
		}
		return out
	}
	for _, m := range moves {
		out = append(out, MoveRow{From: m.Ref.Path, To: m.To, Why: m.Why})
	}
	return out
}

// AgentInfo are the agents' rows of what their stores were planned with (agent.Prepared.Info),
// in agent/all's order.
type AgentInfo []AgentRows

// AgentRows are one agent's rows (one per home it planned).
type AgentRows struct {
	ID   store.AgentID
	Rows []agent.Info
}

// Of returns the rows of agent id (nil when none).
func (a AgentInfo) Of(id store.AgentID) []agent.Info {
	for _, r := range a {
		if r.ID == id {
			return r.Rows
		}
	}
	return nil
}

// Len counts the rows of every agent.
func (a AgentInfo) Len() int {
	n := 0
	for _, r := range a {
		n += len(r.Rows)
	}
	return n
}

// MarshalJSON writes the report with each agent's rows as a member named by the agent's ID
// right after "identities" (docs/report.md lists them).
func (r ScanReport) MarshalJSON() ([]byte, error) {
	type plain ScanReport // without this method
	return withAgentMembers(plain(r), "identities", r.Agents)
}

// MarshalJSON writes the tail with each agent's rows as a member named by the agent's ID
// right after "problems".
func (t FixTail) MarshalJSON() ([]byte, error) {
	type plain FixTail // without this method
	return withAgentMembers(plain(t), "problems", t.Agents)
}

// withAgentMembers is v's JSON object (compact, no HTML escaping) with a member per agent of
// a (its ID: its rows) inserted after the member named after, in a's order; the other members
// keep their bytes and order.
func withAgentMembers(v any, after string, a AgentInfo) ([]byte, error) {
	b, err := compactJSON(v)
	if err != nil || len(a) == 0 {
		return b, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, err
	}
	var out bytes.Buffer
	out.WriteByte('{')
	member := func(key string, raw []byte) error {
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		k, err := compactJSON(key)
		if err != nil {
			return err
		}
		out.Write(k)
		out.WriteByte(':')
		out.Write(raw)
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if err := member(key, raw); err != nil {
			return nil, err
		}
		if key != after {
			continue
		}
		for _, ar := range a {
			rows, err := compactJSON(ar.Rows)
			if err != nil {
				return nil, err
			}
			if err := member(string(ar.ID), rows); err != nil {
				return nil, err
			}
		}
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// compactJSON is v as compact JSON without HTML escaping (names keep '<', '>' and '&').
func compactJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// SettingsRuleRow is one legacy-spelled settings rule in scan --format json.
type SettingsRuleRow struct {
	File   string   `json:"file"`
	Line   int      `json:"line"`
	Column int      `json:"column"`
	Key    string   `json:"key"`
	Index  int      `json:"index"`
	Rule   string   `json:"rule"`
	Reason string   `json:"reason"`
	Owners []string `json:"owners,omitempty"`
	// Registered are the current names of the tool(s) the rule names (empty for patterns).
	Registered []string `json:"registered,omitempty"`
	Ignored    string   `json:"ignored,omitempty"`
	// VarDependent: the rule uses $VAR, its current name depends on the variables' values
	// and is not shown (they may be secrets).
	VarDependent bool `json:"var_dependent,omitempty"`
}

// ClassAction is what fix does with a name of class c, as scan's class table and the fix
// report say it (an agent's own class: its all.ClassOf Action; "none" for a clean name).
func ClassAction(c mcpname.Class) string {
	switch c {
	case mcpname.ClassLegacyDotted:
		return "rewrite to normalizeMcp(name)"
	case mcpname.ClassLegacyTruncated:
		return "keep (middle cannot be rebuilt)"
	case mcpname.ClassLegacyTruncatedDotted:
		return "rewrite to normalizeMcp(name); keep with --keep-truncated"
	case mcpname.ClassLossyLegacy:
		return "keep; rewrite with --rewrite-lossy"
	}
	if ci, ok := all.ClassOf(c); ok {
		return ci.Action
	}
	return "none"
}
