// Package store defines what a store is (one place that holds tool names: a JSONL session
// file, a JSON checkpoint, a settings file, a SQLite database), the name sites found in it, and
// the contract every backend implements. The storage engines (engine/jsonl, engine/sqlite) know no
// agent; each agent's room (agent/<agent>, its settings parser included) is listed explicitly
// in agent/all; there is no self-registration.
//
// # Database-backed stores
//
// A store need not be a file. A database server's store (engine/postgres: a PostgreSQL
// database named by a DSN) plugs into the same contract, and what the file engines get from
// the file system it must bring itself:
//
//   - A reference, not a path: Ref.Path is a URL ("postgres://user@host:5432/db"; IsReference)
//     that never holds a secret: Redact drops a password from the userinfo and a password=
//     parameter, and the engine keeps the secret it was given (or reads PGPASSWORD/.pgpass)
//     for itself. Whatever prints a Ref, records a root or a command line, or wraps an error
//     holds the redacted form; discovery, run manifests and undo treat a reference as a name,
//     never as a file (no absolute form, no symlink or owner checks; CheckRun checks that the
//     recorded reference is one of the run's roots and holds no password).
//   - Change records that are rows: a Site's Loc names its row (Loc.Row, the label "table
//     key=value" the engine can parse back) and what the row was when planned
//     (Loc.RowVersion: the server's row version, PostgreSQL xmin, a quick first check;
//     Loc.RowSum: a checksum of the value's text, which decides), so a writer finds a row
//     changed since the plan holding nothing per row. Rows are written in batches, each its own
//     transaction: a Change covers every batch of one store, ApplyOptions.BeforeCommit is called
//     once before the first commit (the run's journal then names the store), and a kill between
//     batches leaves whole batches only.
//   - Backups in the database: the old value of each row goes into a backup table in the
//     same transaction as the new value (engine/postgres: sessionfix_backup, keyed by
//     ApplyOptions.RunID), not into a file under BackupPath; Change.Backup names that table and
//     Change.Verify holds what undo needs to find the run's rows. Restore puts back the old value
//     of each row that still holds what the run wrote and names every other row it refused.
//   - Before and After (FileState) are zero: a database has no file state; an in-use check is
//     the server's (row locks: a locked row is skipped and reported as in use, exit 4).
package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"time"
	"unicode/utf16"
)

// Kind names a store format. The value appears in reports and run manifests: undo reopens a
// store by its kind (agent/all).
type Kind string

// KindSQLite is every SQLite database (its profile, found from the schema, says whose). The
// kinds of line and document files are declared by the agent rooms with their profiles
// ("<agent>-<format>").
const KindSQLite Kind = "sqlite"

// KindPostgres is every PostgreSQL database, named by a reference (a postgres:// URL); its
// profile, found from the schema, says whose. See "Database-backed stores".
const KindPostgres Kind = "postgres"

// Database reports whether stores of kind k are databases (SQLite, PostgreSQL): reports
// count them apart from files ("1 database").
func (k Kind) Database() bool { return k == KindSQLite || k == KindPostgres }

// IsReference reports whether path names a store by reference (a database URL:
// "postgres://…", "postgresql://…") rather than a file.
func IsReference(path string) bool {
	scheme, _, ok := strings.Cut(path, "://")
	return ok && (scheme == "postgres" || scheme == "postgresql")
}

// Redact returns ref without its secret: the password of a URL's userinfo and the value of
// a password= query parameter (case-insensitive) are dropped; anything that is not a
// reference (IsReference) is returned as it is. What a Ref, a manifest, a report or an error
// holds of a reference is its redacted form.
func Redact(ref string) string {
	if !IsReference(ref) {
		return ref
	}
	u, err := url.Parse(ref)
	if err != nil {
		// Not parseable: keep the scheme, host part without userinfo, and nothing else.
		scheme, rest, _ := strings.Cut(ref, "://")
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			rest = rest[at+1:]
		}
		if i := strings.IndexAny(rest, "?#"); i >= 0 {
			rest = rest[:i]
		}
		return scheme + "://" + rest
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if strings.EqualFold(k, "password") || strings.EqualFold(k, "sslpassword") {
				q.Del(k)
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// AgentID names an agent (the program that writes a store) and with it the naming scheme and
// rule semantics its names follow. Each agent package under agent/ declares its own ID
// constant; agent/all lists them; the value appears in reports, run manifests, --agent and
// SQLite profiles ("agent").
type AgentID string

// Ref identifies one store.
type Ref struct {
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
}

func (r Ref) String() string { return r.Path }

// SiteKind tells what a name site is (stores.md §1).
type SiteKind string

// Name site kinds (stores.md §1); agent rooms may add their own.
const (
	SiteCall       SiteKind = "call"       // message.parts[i].functionCall.name
	SiteResponse   SiteKind = "response"   // message.parts[i].functionResponse.name
	SiteBridge     SiteKind = "bridge"     // functionCall.args.name of a "tool_call" bridge call
	SiteTelemetry  SiteKind = "telemetry"  // systemPayload.uiEvent.function_name
	SiteCompressed SiteKind = "compressed" // systemPayload.compressedHistory[j].parts[i]…
	SiteBootstrap  SiteKind = "bootstrap"  // systemPayload.history[j].parts[i]… (agent_bootstrap)
	SiteUsageKey   SiteKind = "usage-key"  // usage_record.jsonl tools.byName.<name>
	SiteCheckpoint SiteKind = "checkpoint" // /chat save and edit checkpoint files
	SiteRule       SiteKind = "rule"       // a permission rule in a settings file
	SiteColumn     SiteKind = "column"     // a JSON value in a SQLite column
)

// Loc locates a name site inside its store.
type Loc struct {
	// Line is the 1-based line for line-oriented stores (0 otherwise).
	Line int64 `json:"line,omitempty"`
	// Row names the row for table stores ("part id=prt_01…"); empty otherwise.
	Row string `json:"row,omitempty"`
	// Offset is the byte offset of the JSON string token (opening quote) in the file, or in
	// the column value for table stores.
	Offset int64 `json:"offset"`
	// RowID is the SQLite rowid of the row (table stores; 0 for a table without rowids): a
	// rewrite finds the row again by it, so a scan holds nothing per row.
	RowID int64 `json:"rowid,omitempty"`
	// RowVersion and RowSum are what a database row was when it was read (engine/postgres: its
	// xmin, and the XXH3-64 checksum of its value's text with the top bit cleared): a writer
	// finds a row changed since the plan by them without holding anything per row. RowVersion
	// is only a quick first check (a row rewritten with the same text gets a new one); RowSum
	// decides. Zero for files and SQLite.
	RowVersion int64 `json:"row_version,omitempty"`
	RowSum     int64 `json:"row_sum,omitempty"`
}

func (l Loc) String() string {
	switch {
	case l.Row != "":
		return l.Row
	case l.Line > 0:
		return fmt.Sprintf("%d", l.Line)
	default:
		return fmt.Sprintf("@%d", l.Offset)
	}
}

// Site is one spot inside a store that holds one tool name.
type Site struct {
	Loc  Loc      `json:"loc"`
	Kind SiteKind `json:"site"`
	// Path is the JSON path of the value inside its record ("message.parts[2].functionCall.name").
	Path string `json:"path"`
	// Name is the decoded name; a lone surrogate appears as U+FFFD (Units is then exact).
	Name  string   `json:"name"`
	Units []uint16 `json:"-"`
	// Raw is the exact token in the store, quotes included; a rewrite checks it is still there.
	// An empty Raw marks an absent member (a function_call without "namespace"): Name is
	// "", Offset is where the member would go (right after a sibling value), and an Edit there
	// inserts the member `,"<Field>":<new>`.
	Raw []byte `json:"-"`
	// Key is true when the name is an object key (usage_record tools.byName).
	Key bool `json:"key,omitempty"`
	// CallID ties a call to its response (functionCall.id == functionResponse.id).
	CallID string `json:"call_id,omitempty"`
	// Server is the raw server key when the record names it (telemetry mcp_server_name).
	Server string `json:"server,omitempty"`
	// Group identifies sites that must change together (same object, e.g. a function_call's namespace
	// and name); empty when the site stands alone.
	Group string `json:"group,omitempty"`
	// Field distinguishes the fields of a group ("name", "namespace").
	Field string `json:"field,omitempty"`
	// Scope is an object-key uniqueness scope: key sites with the same Scope must stay distinct.
	Scope string `json:"scope,omitempty"`
	// ReadOnly marks a site that is reported but never rewritten (raw identities).
	ReadOnly bool `json:"read_only,omitempty"`
}

// Absent reports whether the site is an absent member (Raw empty): a place where a rewrite
// inserts a member the record lacks (a function_call without "namespace"). It holds no
// name: lists of stored names leave it out.
func (s *Site) Absent() bool { return len(s.Raw) == 0 }

// DisplayName is Name for output: exact, with a lone surrogate written as the escape text
// "\ud800" (so \ud800 and \udc00 stay distinguishable where Name has U+FFFD for both).
func (s *Site) DisplayName() string {
	if s.Units == nil {
		return s.Name
	}
	var b strings.Builder
	for i := 0; i < len(s.Units); i++ {
		c := rune(s.Units[i])
		switch {
		case utf16.IsSurrogate(c) && c < 0xdc00 && i+1 < len(s.Units) && s.Units[i+1] >= 0xdc00 && s.Units[i+1] <= 0xdfff:
			b.WriteRune(utf16.DecodeRune(c, rune(s.Units[i+1])))
			i++
		case utf16.IsSurrogate(c):
			fmt.Fprintf(&b, "\\u%04x", c)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// Identity is a raw MCP identity recorded in a store (invocation records, thread items).
type Identity struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	CallID string `json:"call_id,omitempty"`
	Loc    Loc    `json:"loc"`
}

// Severity grades a Problem.
type Severity string

// Problem severities.
const (
	SevError   Severity = "error"   // part of the store could not be read; the run exits 3
	SevWarning Severity = "warning" // reported, nothing lost
	SevInfo    Severity = "info"
)

// Problem is something wrong with a store, with where and why. Problems never stop a scan.
type Problem struct {
	Loc      Loc      `json:"loc"`
	Severity Severity `json:"severity"`
	Reason   string   `json:"reason"`
}

// FileID is a file's device and inode number: which file a path named when discovery found it
// (the zero FileID: not known). A store opened later must still be that file (store opens check
// it: a path swapped for another file, a FIFO or a link since is refused, issue 30 finding 5).
type FileID struct{ Dev, Ino uint64 }

// Known reports whether id names a file.
func (id FileID) Known() bool { return id != FileID{} }

// Pinner is a store that can be told which file discovery found at its path (Pin): its every
// open must find that file there, else it is refused and named. The agent/all detection pins
// every store it returns.
type Pinner interface {
	Pin(id FileID)
}

// FileState is what a file looked like when it was read: enough to notice it changed.
type FileState struct {
	Size    int64       `json:"size"`
	Mode    fs.FileMode `json:"mode"`
	ModTime time.Time   `json:"mtime"`
	SHA256  string      `json:"sha256,omitempty"`
	// Fingerprint is a cheap content checksum, its algorithm named by its prefix: taken when the
	// store was scanned ("crc32c:<hex>"; a rewrite refuses the file when what it reads does not
	// match), or, in a Change recorded by a file rewrite, the checksum of the content it left
	// (After: "xxh3-128:<32 hex>", in place of SHA256 since manifest version 3; undo's
	// "unchanged since the run" test) and of the original (Before: "xxh3-128:<32 hex>", in place
	// of SHA256 since manifest version 4; the backup's check). A Change records one of SHA256
	// and Fingerprint in each state (internal/fileio/checksum.go).
	Fingerprint string `json:"fingerprint,omitempty"`
	// ID is the file that was read (its device and inode): a rewrite opens that file or none.
	// Never recorded (manifests and plans name files by path and content).
	ID FileID `json:"-"`
	// Owner is who owned the file before a rewrite that could not give the new file the same
	// owner and group (a user's fix --force over a file another user owns: only root may
	// chown; issue 23 item 8). Set only then, in Change.Before: undo gives them back when it
	// can and says so when it cannot. nil: the rewritten file kept the original's owner.
	Owner *FileOwner `json:"owner,omitempty"`
}

// FileOwner is a file's owner and group (numeric ids).
type FileOwner struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
}

// Snapshot is the result of scanning one store.
type Snapshot struct {
	Ref   Ref       `json:"store"`
	State FileState `json:"state"`
	// Agent is the agent that wrote the store; it picks the naming scheme (rewrite.NamerFor).
	Agent      AgentID    `json:"agent"`
	Records    int64      `json:"records"`
	Sites      []Site     `json:"sites"`
	Identities []Identity `json:"identities,omitempty"`
	Problems   []Problem  `json:"problems,omitempty"`
	// NotWritable says why the store must not be rewritten ("" when it may be).
	NotWritable string `json:"not_writable,omitempty"`
	// state is what the package that scanned the store keeps for later: its Writer's row
	// index (engine/sqlite), or what the store says about itself (a room's session metadata:
	// thread id, writing release, working directory; a rule file's parsed rules). Never
	// printed, never in JSON. Only the owning package knows the type: it sets it with SetState
	// and reads it with StateOf, through a typed accessor of its own (agent/<agent>'s MetaOf).
	state any
}

// SetState keeps v, a pointer to the scanning package's own type, in s (replacing what s kept).
// s must not be nil.
func SetState[T any](s *Snapshot, v *T) { s.state = v }

// StateOf returns the *T that SetState kept in s, or nil when s keeps nothing or a value of
// another type. s must not be nil.
func StateOf[T any](s *Snapshot) *T {
	v, _ := s.state.(*T)
	return v
}

// Failed reports whether the snapshot has an error-level problem.
func (s *Snapshot) Failed() bool {
	for _, p := range s.Problems {
		if p.Severity == SevError {
			return true
		}
	}
	return false
}

// Edit replaces the name at one site.
type Edit struct {
	Site Site   `json:"site"`
	New  string `json:"new"`
}

// ScanOptions tunes a scan.
type ScanOptions struct {
	// Hash asks for a content fingerprint (FileState.Fingerprint, or SHA256), needed before a
	// rewrite to notice a store that changed since it was scanned; not needed for a report.
	Hash bool
	// Progress, when set, is called with the number of bytes read since the last call.
	Progress func(n int64)
}

// Store is one place that holds tool names.
//
// Scan reads the store and returns every name site and every problem; it never changes the
// store and never fails for bad content (bad lines are Problems); it returns an error only when
// the store cannot be read at all (not found: an error wrapping fs.ErrNotExist). Stores are safe
// to scan concurrently with each other; one Store value is used by one goroutine at a time.
type Store interface {
	Ref() Ref
	Scan(ctx context.Context, opt ScanOptions) (*Snapshot, error)
}

// Profiled is implemented by a store read with one of several profiles of its engine (an
// SQLite database read with an agent room's sqlite.Profile). ProfileName is that profile's name, "" before a
// Scan detected it. Callers above the engines (pipeline) use it instead of the engine's type.
type Profiled interface {
	ProfileName() string
}

// ApplyOptions tells a Writer where to keep the backup and lets the caller journal the change
// before it becomes visible.
type ApplyOptions struct {
	// BackupPath is where the Writer must put a copy of the original (a file it creates).
	BackupPath string
	// BeforeCommit is called once the backup and the new content are durable and right before
	// the store is replaced; an error aborts the change (nothing is replaced).
	BeforeCommit func(*Change) error
	// SitesPath, when set, is where a Writer may keep the compact encoding of a change's
	// sites when they are too many to record inline (Change.SiteFile); a file it creates
	// there and does not name in the Change is removed.
	SitesPath string
	// RunID is the run the change belongs to: a database store keys the backup rows it writes
	// inside the database by it (with BackupPath's base name, unique within the run).
	RunID string
}

// Change describes one applied rewrite, as recorded in a run manifest.
type Change struct {
	Ref    Ref    `json:"store"`
	Backup string `json:"backup"`
	// BackupLink is set when Backup is a hard link to the original inode (same file system)
	// rather than a copy; either way it holds the original bytes.
	BackupLink bool      `json:"backup_is_link,omitempty"`
	Before     FileState `json:"before"`
	After      FileState `json:"after"`
	// OriginalOwner is the file's owner and group when the run read it and took its backup
	// (file stores rewritten by internal/fileio; nil in runs recorded before it was, which are
	// still undone). Undo --force of a file removed since the run gives the restored file this
	// owner as root, but only when the directory it is restored into belongs to that owner
	// (fileio.RestoreFile): a copied backup is root's and says nothing of the owner.
	OriginalOwner *FileOwner `json:"original_owner,omitempty"`
	Edits         int        `json:"names_changed"`
	// Verify is backend-specific data undo uses to check the store still holds the "after"
	// content (for files After's checksum suffices).
	Verify []byte `json:"verify,omitempty"`
	// Warnings are things the user should know about this change.
	Warnings []string `json:"warnings,omitempty"`
	// Sites are the byte edits the run made, at offsets of the "after" content, in offset
	// order (file stores; empty when unknown). Undo reverses them in place when the file was
	// appended to after the run, keeping the appended bytes.
	//
	// Sites is how manifests before version 5 record them, and how a Change is handed around in
	// memory; since version 5 a run records them compactly instead (sitecodec.go): inline
	// (SiteData) or, for many names, in a file beside the backup (SiteFile), so the run's
	// record and undo's memory do not grow with the names. At most one of the three is set.
	Sites []ByteEdit `json:"sites,omitempty"`
	// SiteData is the compact encoding of the sites (SiteEncoder), inline.
	SiteData []byte `json:"site_data,omitempty"`
	// SiteFile names the file holding the compact encoding of the sites.
	SiteFile *SiteFile `json:"site_file,omitempty"`
	// Carried counts bytes appended to the original while it was being replaced, copied to
	// the end of the new file (after its first After.Size bytes).
	Carried int64 `json:"carried,omitempty"`
}

// SiteFile is a file of the compact encoding of a Change's sites (sitecodec.go): written
// beside the backup and made durable before the change is journaled; undo checks its size and
// SHA-256 as it reads it.
type SiteFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Count is the number of edits it holds.
	Count int64 `json:"count"`
}

// HasSites reports whether the change records its sites in any of its forms.
func (c *Change) HasSites() bool { return len(c.Sites) > 0 || len(c.SiteData) > 0 || c.SiteFile != nil }

// ByteEdit is one replaced token of a file: at offset At of the new content the bytes New
// stand where the original had Old (both exact bytes, JSON string tokens with their quotes;
// Old is empty for an inserted member).
type ByteEdit struct {
	At  int64  `json:"at"`
	Old string `json:"old"`
	New string `json:"new"`
}

// FileEdit is one planned byte-range edit of a file as it was read: at byte offset At the
// bytes Old (possibly none: an insertion) become New (both exact bytes, in the file's own
// syntax: a JSON string with its quotes, a TOML string, a shell word's text). An agent's
// permission package computes them for fix --rules (a rule file is a file plus its FileEdits);
// the rule-file engine (engine/rulefile) checks Old is still there and writes them.
type FileEdit struct {
	At  int64  `json:"at"`
	Old string `json:"old"`
	New string `json:"new"`
}

// FileEditor is a store that is written from planned byte-range edits (the rule-file engine):
// EditSites returns one site per edit of a file scanned as snap (Raw its old bytes, Path
// label(i) for the i-th edit), or an error when an edit's old bytes are not at its offset in
// what the scan read (the file changed since it was planned) or edits overlap. Its Writer then
// takes store.Edit.New as the new bytes themselves.
type FileEditor interface {
	EditSites(snap *Snapshot, edits []FileEdit, label func(i int) string) ([]Site, error)
}

// Writer is the capability of rewriting a store. Apply replaces the given sites of a store
// scanned as snap, atomically: afterwards the store holds either the old content or the new
// one, never a mix. Every byte outside the edited tokens stays identical. It returns
// ErrInUse (wrapped in an InUseError) when the store changed since snap or is locked by
// another process, and changes nothing then.
type Writer interface {
	Apply(ctx context.Context, snap *Snapshot, edits []Edit, opt ApplyOptions) (*Change, error)
}

// Restorer is the capability of undoing a Change from its backup. Restore fails with an
// InUseError when the store no longer holds the "after" content, unless force is set.
type Restorer interface {
	Restore(ctx context.Context, ch *Change, force bool) error
}

// ErrInUse means the store is being used by another process: it changed under us or is locked.
var ErrInUse = errors.New("store is in use by another process")

// ErrChangedSinceRun means undo found a store that no longer holds what the run wrote (an agent
// wrote to it later, or it was deleted): restoring it would lose those later changes.
var ErrChangedSinceRun = errors.New("changed since the run")

// ChangedError says which store changed since the run and how.
type ChangedError struct {
	Path   string
	Reason string
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s: %s (%s; use --force to restore anyway)", e.Path, ErrChangedSinceRun, e.Reason)
}

// Unwrap returns ErrChangedSinceRun.
func (e *ChangedError) Unwrap() error { return ErrChangedSinceRun }

// ErrNotWritable means the store must not be rewritten (invalid UTF-8, compressed, …).
var ErrNotWritable = errors.New("store is not writable")

// ErrTokenMismatch means the bytes at an edit's offset are not the token the scan saw: the
// store changed since it was scanned. A Writer reports it inside an *InUseError (Err).
var ErrTokenMismatch = errors.New("name token not found at its offset")

// InUseError says which store is in use and why. Err, when set, is the finding behind Reason
// (ErrTokenMismatch, …): errors.Is finds both ErrInUse and Err.
type InUseError struct {
	Path   string
	Reason string
	Err    error
}

func (e *InUseError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s (%s)", ErrInUse, e.Reason)
	}
	return fmt.Sprintf("%s: %s (%s)", e.Path, ErrInUse, e.Reason)
}

// Unwrap returns ErrInUse and Err.
func (e *InUseError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInUse}
	}
	return []error{ErrInUse, e.Err}
}

// ErrReason is err without the path an *fs.PathError repeats, for a problem row that names
// the file itself ("permission denied", not "open /x: permission denied").
func ErrReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
