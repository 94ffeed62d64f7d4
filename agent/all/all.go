// Package all is the one explicit list of agents (Agents; no init() registration) and what is
// done with all of them at once: Detect picks the agent and profile of a file found by a walk,
// Open reopens a store recorded in a run manifest, DefaultRoots are the roots of a scan
// without paths. Everything about one agent lives in its room (agent/qwen, agent/codex, …,
// described by agent); adding an agent is one line in Agents (docs/adding-an-agent.md).
package all

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/claude"
	"github.com/sessionfix/sessionfix/agent/cline"
	"github.com/sessionfix/sessionfix/agent/codex"
	"github.com/sessionfix/sessionfix/agent/copilot"
	"github.com/sessionfix/sessionfix/agent/crush"
	"github.com/sessionfix/sessionfix/agent/gemini"
	"github.com/sessionfix/sessionfix/agent/goose"
	"github.com/sessionfix/sessionfix/agent/kilo"
	"github.com/sessionfix/sessionfix/agent/opencode"
	"github.com/sessionfix/sessionfix/agent/openwebui"
	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/engine/postgres"
	"github.com/sessionfix/sessionfix/engine/rulefile"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// Agents is every agent sessionfix knows, in detection order (an earlier agent's sure verdict
// on a file wins; SQLite profiles are tried in this order).
var Agents = []agent.Agent{
	gemini.Agent, // before Qwen Code: a session-*.jsonl in tmp/<project>/chats/ is Gemini CLI's
	qwen.Agent,
	codex.Agent,
	claude.Agent,
	kilo.Agent, // before opencode: a Kilo database has opencode's tables
	opencode.Agent,
	crush.Agent,
	goose.Agent,
	openwebui.Agent,
	copilot.Agent,
	cline.Agent,
}

// infoFirst are the agents whose plan lines (agent.Prepared.Info) a plan's text prints before
// the others' (the order they were printed in before the rooms wrote them).
var infoFirst = []store.AgentID{claude.ID}

// InfoOrder is the order of the agents' plan lines in a plan's text: infoFirst, then every
// other agent in Agents order. (The JSON report's members follow Agents order.)
func InfoOrder() []store.AgentID {
	out := slices.Clone(infoFirst)
	for _, a := range Agents {
		if !slices.Contains(out, a.Core().ID) {
			out = append(out, a.Core().ID)
		}
	}
	return out
}

// Lookup returns the agent with that id, or nil.
func Lookup(id store.AgentID) agent.Agent {
	for _, a := range Agents {
		if a.Core().ID == id {
			return a
		}
	}
	return nil
}

// Classes lists the classes the agents' namers give beyond mcpname.Classes: every agent's
// agent.Classifier's Classes, in list order (the order of scan's class table).
func Classes() []naming.ClassInfo {
	var out []naming.ClassInfo
	for _, a := range Agents {
		out = append(out, classes(a)...)
	}
	return out
}

// classes are a's classes beyond mcpname.Classes (agent.Classifier), nil for none.
func classes(a agent.Agent) []naming.ClassInfo {
	if c, ok := a.(agent.Classifier); ok {
		return c.Classes()
	}
	return nil
}

// ClassOf returns what an agent's room says of class c (ok false for mcpname's own classes
// and unknown ones).
func ClassOf(c mcpname.Class) (info naming.ClassInfo, ok bool) {
	for _, a := range Agents {
		for _, ci := range classes(a) {
			if ci.Class == c {
				return ci, true
			}
		}
	}
	return naming.ClassInfo{}, false
}

// AgentOfClass returns the id of the agent whose room gives class c ("" for mcpname's own
// classes and unknown ones).
func AgentOfClass(c mcpname.Class) store.AgentID {
	for _, a := range Agents {
		for _, ci := range classes(a) {
			if ci.Class == c {
				return a.Core().ID
			}
		}
	}
	return ""
}

// TextSite reports whether sites of kind k reach the model as text, not as tool names
// (agent.TextSiter of some agent).
func TextSite(k store.SiteKind) bool {
	for _, a := range Agents {
		if t, ok := a.(agent.TextSiter); ok && slices.Contains(t.TextSites(), k) {
			return true
		}
	}
	return false
}

// OwnsSettings reports whether dir is an agent's config directory whose settings.json is that
// agent's own (agent.SettingsOwner of some agent).
func OwnsSettings(dir string) bool {
	for _, a := range Agents {
		if o, ok := a.(agent.SettingsOwner); ok && o.OwnsSettings(dir) {
			return true
		}
	}
	return false
}

// KnownFile says what a file that is no store is to some agent, and which command reads it
// (agent.FileKnower of the first agent that knows it, in list order), or "".
func KnownFile(path string) string {
	for _, a := range Agents {
		if k, ok := a.(agent.FileKnower); ok {
			if why := k.KnownFile(path); why != "" {
				return why
			}
		}
	}
	return ""
}

// Relocate says where an agent's newest release opens the store ref instead of where it lies
// (agent.Relocator of the first agent that asks for a move, in list order), or "".
func Relocate(ref store.Ref) (to, why string) {
	for _, a := range Agents {
		if r, ok := a.(agent.Relocator); ok {
			if to, why := r.Relocate(ref); to != "" {
				return to, why
			}
		}
	}
	return "", ""
}

// Selectable lists the ids --agent accepts (agents with default roots or a forced reading),
// for usage messages.
func Selectable() []store.AgentID {
	var out []store.AgentID
	for _, a := range Agents {
		if _, forces := a.(agent.Forcer); a.Core().Roots != nil || forces {
			out = append(out, a.Core().ID)
		}
	}
	return out
}

// Default is the agent whose audit runs without --agent when no other agent's home exists, and
// whose help texts come first (Qwen Code).
var Default = qwen.Agent

// DefaultRoots are the roots of a scan without paths: those of the agent named by --agent
// (Default's for an agent without roots), else (id "") the roots that exist of every agent
// with default roots (Looked), in list order: Qwen Code, Codex, Claude Code, opencode, crush,
// goose and every agent that declares its Roots (issue 23 item 4).
func DefaultRoots(id store.AgentID, env agent.Env) []string {
	if id == "" {
		var out []string
		for _, l := range Looked(env) {
			out = append(out, l.Found...)
		}
		return out
	}
	if a := Lookup(id); a != nil && a.Core().Roots != nil {
		return a.Core().Roots(env)
	}
	return Default.Core().Roots(env)
}

// LookedFor is what a run without paths looked for of one agent: the agent, its roots that
// exist (Found) and the ones it looked for (Tried: every root, or when none, what RootsTried
// says was tried).
type LookedFor struct {
	Agent agent.Agent
	Found []string
	Tried string
}

// Looked is, for every agent with default roots (agent.Agent.Roots) in list order, where a run
// without paths looks for its stores and what it found there (a root found exists; the same
// path found for two agents counts for the first).
func Looked(env agent.Env) []LookedFor {
	var out []LookedFor
	seen := map[string]bool{}
	for _, a := range Agents {
		if a.Core().Roots == nil {
			continue
		}
		l := LookedFor{Agent: a}
		roots := a.Core().Roots(env)
		for _, r := range roots {
			if _, err := os.Stat(r); err == nil && !seen[r] {
				seen[r] = true
				l.Found = append(l.Found, r)
			}
		}
		if a.Core().RootsTried != nil {
			_, l.Tried, _ = a.Core().RootsTried(env)
		} else {
			l.Tried = strings.Join(roots, ", ")
		}
		out = append(out, l)
	}
	return out
}

// FollowLink says why discovery follows the symbolic link at path (agent.LinkFollower of
// the first agent that does), or "".
func FollowLink(path string) string {
	for _, a := range Agents {
		if l, ok := a.(agent.LinkFollower); ok {
			if why := l.FollowLink(path); why != "" {
				return why
			}
		}
	}
	return ""
}

// SQLiteProfiles returns every agent's SQLite profiles, in list order.
func SQLiteProfiles() []*sqlite.Profile {
	var out []*sqlite.Profile
	for _, a := range Agents {
		out = append(out, a.Core().SQLite...)
	}
	return out
}

// profileByKind returns the JSONL profile of a store kind, or nil.
func profileByKind(k store.Kind) *jsonl.Profile {
	for _, a := range Agents {
		for _, p := range a.Core().JSONL {
			if p.Kind == k {
				return p
			}
		}
	}
	return nil
}

// HeadSize is how many leading bytes Detect wants to see.
const HeadSize = 4096

// Detection is the verdict on one file.
type Detection struct {
	// Store is the backend to read it with, nil when the file is not a store.
	Store store.Store
	// Unsupported says why a file that looks like a store cannot be read ("zstd-compressed").
	Unsupported string
	// NotStore says why a file that looked like a candidate is not a store (a SQLite database
	// no profile describes); discovery reports it for a file named explicitly.
	NotStore string
	// Unreadable says why a store could not even be opened (an error: the run is partial).
	Unreadable string
	// Warning says that a forced agent (Options.Agent) goes against the file's content: the
	// file is read as that agent's store although it looks like another one (Store set), or it
	// is left out although it looks like another agent's store (Store nil). Discovery reports
	// it, so a wrong --agent never gives a silent all-clear (issue 8 item 11).
	Warning string
}

// Options tunes detection: the agent a walk is restricted to (DetectWith; "" = any) and what some
// backends need besides a path, the SQLite busy timeout and a user profile (--busy-timeout,
// --profile). The zero value is the defaults. SQLite.Profiles is filled with every agent's
// profiles when empty.
type Options struct {
	Agent  store.AgentID
	SQLite sqlite.Options
	// Postgres tunes the PostgreSQL stores (a postgres:// reference as PATH); its profiles
	// are the SQLite ones (SQLite.Profile and every agent's table profiles) when it has none.
	Postgres postgres.Options
	// ProfileDoc is the --profile file as read (nil without): what a fix run records for undo.
	ProfileDoc []byte
	// Pin is the file discovery found at the path being detected (its device and inode;
	// DetectWith): detection reads that file or none, and the store it returns is pinned to it
	// (store.Pinner). Zero: not known.
	Pin store.FileID
}

// OptionsFor is the Options for a user SQLite profile file (--profile; "" = none, else
// sqlite.LoadProfile's error) and a lock wait (--busy-timeout).
func OptionsFor(profile string, busy time.Duration) (Options, error) {
	opt := Options{SQLite: sqlite.Options{BusyTimeout: busy}}
	if profile != "" {
		p, doc, err := sqlite.ReadProfile(profile)
		if err != nil {
			return opt, err
		}
		opt.SQLite.Profile, opt.ProfileDoc = p, doc
	}
	return opt, nil
}

// ParseProfile reads a user SQLite profile from its JSON document (one a run recorded).
func ParseProfile(doc []byte) (*sqlite.Profile, error) { return sqlite.ParseProfile(doc) }

func (o Options) sqlite() sqlite.Options {
	so := SQLiteOptions(o.SQLite)
	so.Pin = o.Pin
	return so
}

// postgres is o.Postgres with the table profiles (--profile first, then every agent's) and the
// lock wait of --busy-timeout when it sets none.
func (o Options) postgres() postgres.Options {
	p := o.Postgres
	sq := o.sqlite()
	if p.Profile == nil {
		p.Profile = sq.Profile
	}
	if p.Profiles == nil {
		p.Profiles = sq.Profiles
	}
	if p.LockTimeout == 0 && sq.BusyTimeout != 0 {
		p.LockTimeout = sq.BusyTimeout
	}
	return p
}

// DetectReference opens a store named by a reference (store.IsReference: a postgres:// URL),
// connecting to read its schema: the Detection of the database (Store set, or why not). The
// secret a reference may hold stays in the Store; every reason is of the redacted reference.
func DetectReference(ctx context.Context, ref string, opt Options) Detection {
	if !strings.HasPrefix(ref, "postgres://") && !strings.HasPrefix(ref, "postgresql://") {
		return Detection{Unreadable: "not a reference sessionfix can open (postgres://…)"}
	}
	st, err := postgres.Detect(ctx, ref, opt.postgres())
	var np *postgres.NoProfileError
	switch {
	case errors.As(err, &np):
		return Detection{NotStore: np.Reason()}
	case err != nil:
		return Detection{Unreadable: "PostgreSQL database that cannot be read: " + err.Error()}
	case opt.Agent != "" && st.Profile().Agent != opt.Agent:
		why := fmt.Sprintf("PostgreSQL store of %s (profile %s), not of %s", st.Profile().Agent, st.Profile().Name, opt.Agent)
		return Detection{NotStore: why, Warning: why + ": not read with --agent " + string(opt.Agent)}
	}
	return Detection{Store: st}
}

// SQLiteOptions returns o with every agent's profiles as o.Profiles when it has none.
func SQLiteOptions(o sqlite.Options) sqlite.Options {
	if o.Profiles == nil {
		o.Profiles = SQLiteProfiles()
	}
	return o
}

var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// DetectWith picks the backend for path from its name and head (its first bytes, up to
// HeadSize), for one agent's stores when opt.Agent is set ("" = any agent, by name and
// content): the agent's ForceJSONL decides (the Codex CLI reads every *.jsonl as a rollout
// except the home's history.jsonl and session_index.jsonl); without one, only the agent's own
// profiles are read (Qwen Code never takes a Codex rollout). A zstd-compressed store (*.zst or
// the zstd magic) is reported as Unsupported, never parsed. A SQLite database is recognised by
// its header, whatever its name, and opened read-only to match its schema against the
// profiles; with an Agent, only a profile of that agent takes it. ctx bounds the database's opening (a lock
// wait of up to the busy timeout): cancelled, the database is Unreadable with ctx's error.
func DetectWith(ctx context.Context, path string, head []byte, opt Options) Detection {
	d := detectWith(ctx, path, head, opt)
	if p, ok := d.Store.(store.Pinner); ok && opt.Pin.Known() {
		p.Pin(opt.Pin)
	}
	return d
}

func detectWith(ctx context.Context, path string, head []byte, opt Options) Detection {
	id := opt.Agent
	if sqlite.IsDatabase(head) {
		st, err := sqlite.Detect(ctx, path, opt.sqlite())
		var np *sqlite.NoProfileError
		switch {
		case errors.As(err, &np):
			return Detection{NotStore: np.Reason()}
		case err != nil:
			reason := "SQLite database that cannot be read: " + err.Error()
			if strings.Contains(err.Error(), "readonly database") {
				reason += " (a WAL database needs its -shm file: read it where its directory is writable, or from a copy)"
			}
			return Detection{Unreadable: reason}
		case id != "" && st.Profile() != nil && st.Profile().Agent != id:
			why := fmt.Sprintf("SQLite store of %s (profile %s), not of %s", st.Profile().Agent, st.Profile().Name, id)
			return Detection{NotStore: why, Warning: why + ": not read with --agent " + string(id)}
		}
		return Detection{Store: st}
	}
	if strings.HasSuffix(path, ".zst") || bytes.HasPrefix(head, zstdMagic) {
		for _, a := range Agents {
			if c, ok := a.(agent.Compressor); ok && (id == "" || id == a.Core().ID) {
				if why := c.Compressed(path, id == a.Core().ID); why != "" {
					return Detection{Unsupported: why}
				}
			}
		}
		if strings.Contains(path, ".json") {
			return Detection{Unsupported: "zstd-compressed store: reported, not parsed"}
		}
		return Detection{}
	}
	first := head
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	first = bytes.TrimPrefix(first, []byte("\xEF\xBB\xBF"))
	auto := detectJSONL(path, first)
	if id == "" {
		if auto != nil {
			return Detection{Store: jsonl.Open(path, auto)}
		}
		return Detection{}
	}
	p, warning := forceJSONL(Lookup(id), path, first, auto)
	if p != nil {
		return Detection{Store: jsonl.Open(path, p), Warning: warning}
	}
	return Detection{Warning: warning}
}

// detectJSONL asks every agent for the file: the first sure verdict in list order, else the
// first guess.
func detectJSONL(path string, first []byte) *jsonl.Profile {
	var guess *jsonl.Profile
	for _, a := range Agents {
		if a.Core().DetectJSONL == nil {
			continue
		}
		p, sure := a.Core().DetectJSONL(path, first)
		switch {
		case p != nil && sure:
			return p
		case p != nil && guess == nil:
			guess = p
		}
	}
	return guess
}

// forceJSONL is the profile a file is read with under --agent a (see agent.Forcer).
func forceJSONL(a agent.Agent, path string, first []byte, auto *jsonl.Profile) (*jsonl.Profile, string) {
	f, forces := a.(agent.Forcer)
	switch {
	case a == nil:
		return nil, ""
	case forces:
		return f.ForceJSONL(path, first, auto)
	case auto == nil || auto.Agent == a.Core().ID:
		return auto, ""
	}
	return nil, fmt.Sprintf("looks like a %s: not read with --agent %s (drop --agent or pass --agent %s)", auto.Title, a.Core().ID, auto.Agent)
}

// ReadHead returns up to HeadSize leading bytes of the file at path, opened as every store is
// (fileio.OpenStore: no link followed, no FIFO waited on; as root no link out of its owner's
// reach).
func ReadHead(path string) ([]byte, error) { return ReadHeadPinned(path, store.FileID{}) }

// ReadHeadPinned is ReadHead of the file discovery found at path (pin: its device and inode),
// or none (a *fileio.NotTheFileError).
func ReadHeadPinned(path string, pin store.FileID) ([]byte, error) {
	f, _, err := fileio.OpenStore(path, pin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, HeadSize)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return buf[:n], nil
}

// Open returns the store recorded as ref (for undo), with default options: OpenWith's (a
// rewrite.Opener). It does not touch the store.
func Open(ref store.Ref) (store.Store, error) { return OpenWith(ref, Options{}) }

// OpenWith is Open with backend options.
func OpenWith(ref store.Ref, opt Options) (store.Store, error) {
	if ref.Kind == store.KindPostgres {
		if !store.IsReference(ref.Path) {
			return nil, fmt.Errorf("open %s: a %s store is named by a postgres:// reference", ref.Path, ref.Kind)
		}
		return postgres.Open(ref.Path, opt.postgres()), nil
	}
	if ref.Kind == store.KindSQLite {
		return sqlite.Open(ref.Path, opt.sqlite()), nil
	}
	if ref.Kind == claude.KindRules {
		return claude.OpenRules(ref.Path, ""), nil
	}
	if ref.Kind == rulefile.Kind {
		return rulefile.Open(ref.Path), nil
	}
	if p := profileByKind(ref.Kind); p != nil {
		return jsonl.Open(ref.Path, p), nil
	}
	return nil, fmt.Errorf("open %s: unknown store kind %q", ref.Path, ref.Kind)
}

// OpenRuleFile returns the rule file at path as a store of the rule-file engine
// (engine/rulefile: a file written from planned byte-range edits, store.FileEditor), for fix
// --rules of an agent whose permission package plans byte edits. Nothing is read.
func OpenRuleFile(path string) store.Store { return rulefile.Open(path) }

// Reopen is OpenWith for undo, which must not take a run's word for what a file is: when a file
// exists at ref.Path it must still be detected (DetectWith, by name and content) as a store of
// ref.Kind, else an error says what it is instead. A missing file is opened as recorded. The
// file is detected as a store of the agent whose profile has ref.Kind (--agent codex reads any
// *.jsonl as a rollout).
func Reopen(ctx context.Context, ref store.Ref, opt Options) (store.Store, error) {
	if store.IsReference(ref.Path) || ref.Kind == store.KindPostgres {
		// A database names no file: the store restores from its own backup table, and
		// checks each row itself (the password from PGPASSWORD or ~/.pgpass: a run records
		// none).
		return OpenWith(ref, opt)
	}
	head, err := ReadHead(ref.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return OpenWith(ref, opt)
	case err != nil:
		return nil, fmt.Errorf("open %s: %w", ref.Path, err)
	}
	if ref.Kind == claude.KindRules {
		// Claude Code rule files are stores only for fix --rules (never detected): a rule
		// file is still one when it is a JSON object.
		if err := claude.IsRuleFile(ref.Path); err != nil {
			return nil, fmt.Errorf("%s: the run recorded a Claude Code rule file, but %v: not restored", ref.Path, err)
		}
		return OpenWith(ref, opt)
	}
	if ref.Kind == rulefile.Kind {
		// A rule file fix --rules rewrote (any agent's, any syntax) is never detected: it is
		// restored only when it holds what the run wrote (RestoreFile checks the checksum, or the
		// recorded edits when bytes were appended), so nothing else needs to say what it is.
		return OpenWith(ref, opt)
	}
	if p := profileByKind(ref.Kind); p != nil {
		if _, forces := Lookup(p.Agent).(agent.Forcer); forces {
			opt.Agent = p.Agent
		}
	}
	d := DetectWith(ctx, ref.Path, head, opt)
	switch {
	case d.Store != nil && d.Store.Ref().Kind == ref.Kind:
		return OpenWith(ref, opt)
	case d.Store != nil:
		return nil, fmt.Errorf("%s: the run recorded a %s store, but the file is now a %s store: not restored", ref.Path, ref.Kind, d.Store.Ref().Kind)
	case d.Unreadable != "":
		return nil, fmt.Errorf("%s: %s", ref.Path, d.Unreadable)
	}
	if ref.Kind == store.KindSQLite && opt.SQLite.Profile == nil {
		// A store of a user profile (fix --profile FILE) that the run did not record.
		return nil, fmt.Errorf("%s: the run recorded a %s store, but no known SQLite store profile matches the file: not restored (a run made with fix --profile FILE: give undo --profile FILE)", ref.Path, ref.Kind)
	}
	return nil, fmt.Errorf("%s: the run recorded a %s store, but the file is not one: not restored", ref.Path, ref.Kind)
}
