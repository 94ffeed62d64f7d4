// Package agent is the contract of an agent room: one package per agent under agent/ says
// everything sessionfix knows about that agent in one Agent value, and agent/all lists those values (no init()
// registration). The storage engines (engine/jsonl, engine/sqlite) know no agent: an agent room
// describes its stores to them as profiles.
//
// Adding an agent is one new folder under agent/ that exports an Agent, one line in
// agent/all's list and its fixtures; see docs/adding-an-agent.md.
package agent

import (
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// Env is what an agent room may read of the environment: variables and the user's home
// directory (tests inject both; nothing else is read).
type Env struct {
	Getenv func(string) string
	Home   string
}

// Agent describes one agent. Only ID is required; a nil function means the agent has no such
// thing (no default roots, no JSONL stores, …). Functions are pure except where they say
// they look at the file system.
type Agent struct {
	// ID names the agent in reports, manifests, --agent and SQLite profiles (say "acme").
	ID store.AgentID
	// Name is the agent's product name for messages ("Acme CLI").
	Name string
	// Env lists the environment variables the agent itself reads to find its stores, in the
	// order it consults them ("ACME_HOME", "ACME_DATA_DIR"); documentation and --help.
	Env []string

	// Roots returns the roots a scan walks when no PATH is given and --agent names this
	// agent (it may stat paths to pick the ones that exist). nil: the default roots of
	// agent/all.DefaultRoots are walked. --agent accepts an agent with Roots or ForceJSONL.
	Roots func(env Env) []string
	// RootsTried says, for the error about default roots that do not exist ("no <what> found:
	// tried <tried>: … (pass a PATH, or <hint>)"), what the roots are ("Acme home with
	// sessions"), how Roots chose them ("$ACME_HOME (not set), so ~/.acme") and what to do
	// instead ("set ACME_HOME").
	RootsTried func(env Env) (what, tried, hint string)
	// HomeOf returns the agent home a path lies in, recognised by the files only such a home
	// holds (a copied ~/.acme is planned with its own config), or "" when it lies in none.
	// It looks at the file system.
	HomeOf func(path string) string
	// FollowLink says why discovery follows the symbolic link at path (a directory of the
	// agent's home moved to another disk and linked back: "an Acme home's sessions/"), or ""
	// when it does not (links are not followed otherwise). It looks at the file system.
	FollowLink func(path string) string

	// JSONL lists the agent's line-file and JSON-document profiles (run manifests name them
	// by Kind: undo reopens a store by its kind).
	JSONL []*jsonl.Profile
	// DetectJSONL picks the agent's profile of a *.json/*.jsonl file from its name and first
	// line (up to the head size, possibly cut): nil when the file is not the agent's. sure
	// marks a verdict by a name or layout only this agent writes; agent/all first takes any
	// agent's sure verdict (in list order), then a guess.
	DetectJSONL func(path string, firstLine []byte) (p *jsonl.Profile, sure bool)
	// ForceJSONL is the profile a file is read with under --agent <ID>, given what detection
	// would have picked (auto, of any agent, or nil): the profile (nil: the file is left out)
	// and a warning when that goes against the file's content. nil: the file is read when
	// auto is one of the agent's profiles, else left out with a warning naming auto's agent.
	ForceJSONL func(path string, firstLine []byte, auto *jsonl.Profile) (p *jsonl.Profile, warning string)
	// Compressed says why a compressed file (*.zst, or the zstd magic) that is one of the
	// agent's stores is not read ("zstd-compressed Acme session: …"); "" when it is not the
	// agent's. forced: --agent names this agent. It may stat paths (the plain file beside it).
	Compressed func(path string, forced bool) string

	// SQLite lists the agent's database profiles, in detection order.
	SQLite []*sqlite.Profile

	// Namer is the agent's naming rule: what becomes of each name site of its stores
	// (Snapshot.Agent picks it). nil: naming.ProviderSafe (only names a provider rejects are
	// rewritten, with mcpname.Normalize).
	Namer naming.Namer
	// Classes describes the classes Namer gives beyond mcpname.Classes, in report order.
	Classes []naming.ClassInfo
	// TextSites lists the agent's site kinds whose names reach the model as text (a search
	// query, a listing of deferred tools), not as tool names: a provider's tool-name rule does
	// not apply to them (check skips them; their names are checked where they are tool names).
	TextSites []store.SiteKind
	// SentName is the one name a provider sees of a call the agent stores as a namespace
	// member and a name (the sites of one Site.Group, the namespace's Field "namespace"):
	// check tests that name. nil: the agent stores no such calls.
	SentName func(namespace, name string) string
	// OwnsSettings reports whether dir is one of the agent's config directories whose
	// settings.json is in the agent's own format: scan's settings pass (which reads the
	// default agent's settings files) leaves it alone. It looks at the file system.
	OwnsSettings func(dir string) bool
	// KnownFile says what a file of the agent's that is not a store is, and which command
	// reads it ("Acme settings (permission rules): read by sessionfix audit --agent acme"), or
	// "" when path is no such file. scan and check report a PATH it recognises as info, not as
	// an unknown store. It may look at the file system.
	KnownFile func(path string) string

	// Relocate says where the agent's newest release opens a store of the agent that lies
	// where that release no longer looks (a legacy layout: Acme 2 reads
	// sessions/<id>/log.jsonl, Acme 1 wrote sessions/<id>.jsonl): the path to move it to and
	// why, in words for the plan ("Acme 2 resumes only sessions/<id>/log.jsonl"); "" when the
	// store is where it belongs. fix --apply --move-legacy renames such a store there (the
	// run records the move, undo moves it back). Pure: it reads the path only.
	Relocate func(ref store.Ref) (to, why string)

	// Redispatches is the agent's re-dispatch lookup (issue 13 item 3): the findings of one
	// store plan of the agent's, in plan order, one per distinct (stored call, called identity)
	// with its count; only classes redispatch and ambiguous. nil: the agent's calls are not
	// checked. It reads in only (pure).
	Redispatches func(in naming.DispatchInput) []naming.Redispatch

	// Audit describes the agent's permission-rule audit (Audit); nil: sessionfix audit does
	// not audit the agent's rules.
	Audit *Audit

	// SentAs says what the agent release that resumes the sessions sends to a provider
	// instead of a stored call name (check --<agent>-version RELEASE): nil Sending when that
	// release sends the stored bytes; an error when release does not parse. nil: every release
	// sends the names as stored.
	SentAs func(release string) (*Sending, error)

	// Prepare gathers what Namer needs for a run (configs, inventories, history) once
	// discovery found the stores; pipeline calls it for every agent in agent/all's order.
	// nil: the namer needs nothing beyond the stores.
	Prepare Prepare
	// PrepareOnce: a command that builds several pipelines (an interactive fix re-plans after
	// its prompt) reuses the first Prepare's result (--discover starts servers once).
	PrepareOnce bool
	// Options are the agent's own flags of scan, fix and check, in --help order; their
	// values reach Prepare as PrepareInput.Options.
	Options []Option

	// Help is what sessionfix's --help texts say of the agent (Help); nil: they do not name
	// it.
	Help *Help

	// SentAsOption is check's flag naming the release SentAs takes (Value: its default,
	// "stored": the stored bytes; Hint: what a bad value should be, for the usage error);
	// nil: check has no such flag. check's result holds one release: when several agents'
	// releases are given, the last in agent/all's order is checked.
	SentAsOption *Option

	// Settings is scan's and fix's settings pass over the agent's settings files (Settings;
	// only agent/all.Default's is run); nil: the agent has none.
	Settings *Settings

	// RuleFix is the agent's rule-file migration of fix --rules (RuleFix); nil: it has none.
	RuleFix *RuleFix
}

// Sending is what one agent release sends instead of the stored name of a call.
type Sending struct {
	// Sent returns the name sent for the stored name (units: its exact UTF-16 units when it
	// holds a lone surrogate, else nil); ok false: the stored name is sent.
	Sent func(name string, units []uint16) (sent string, ok bool)
	// Verbatim lists the providers (provider IDs) that still receive the stored name.
	Verbatim []string
}
