// Package agent is the contract of an agent room: one package per agent under agent/ says
// everything sessionfix knows about that agent in one Agent value, and agent/all lists those
// values (no init() registration). The storage engines (engine/jsonl, engine/sqlite) know no
// agent: an agent room describes its stores to them as profiles.
//
// What a room must implement is Agent: Core() returns its Core — identity (ID, Name), where
// its stores are without a PATH (Roots, RootsTried), its store profiles (JSONL, SQLite),
// detection (DetectJSONL) and its naming rule (Namer) with the hook that binds it to a run
// (Prepare). A room with nothing more may be a plain *Core.
//
// What a room may implement are the capabilities (capabilities.go), each a small interface
// the engine finds on the room's value by type assertion; a room pins each one it implements
// with var _ agent.X = (*T)(nil) beside the method:
//   - discovery: HomeFinder, LinkFollower, Forcer (--agent), Compressor, FileKnower,
//     SettingsOwner, Relocator (fix --move-legacy);
//   - naming: Classifier, TextSiter, SentNamer, Redispatcher (check's re-dispatch lookup),
//     SentAser (check --<agent>-version), Optioner (its own flags, for Prepare), OncePreparer;
//   - commands: Auditor (audit --agent, on the shared rule-audit layer or as a plug-in),
//     RuleFixer (fix --rules --agent), SettingsPasser (scan's settings pass), Helper (--help).
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

// Agent is one agent as agent/all lists it: a room's value. Core is what every agent has; the
// capabilities (capabilities.go) are interfaces the value may implement besides.
type Agent interface {
	Core() *Core
}

// Core describes what every agent has. Only ID is required; a nil function means the agent
// has no such thing (no default roots, no JSONL stores, …). Functions are pure except where
// they say they look at the file system.
type Core struct {
	// ID names the agent in reports, manifests, --agent and SQLite profiles (say "acme").
	ID store.AgentID
	// Name is the agent's product name for messages ("Acme CLI").
	Name string

	// Roots returns the roots a scan walks when no PATH is given and --agent names this
	// agent (it may stat paths to pick the ones that exist). nil: the default roots of
	// agent/all.DefaultRoots are walked. --agent accepts an agent with Roots or a Forcer.
	Roots func(env Env) []string
	// RootsTried says, for the error about default roots that do not exist ("no <what> found:
	// tried <tried>: … (pass a PATH, or <hint>)"), what the roots are ("Acme home with
	// sessions"), how Roots chose them ("$ACME_HOME (not set), so ~/.acme") and what to do
	// instead ("set ACME_HOME").
	RootsTried func(env Env) (what, tried, hint string)

	// JSONL lists the agent's line-file and JSON-document profiles (run manifests name them
	// by Kind: undo reopens a store by its kind).
	JSONL []*jsonl.Profile
	// DetectJSONL picks the agent's profile of a *.json/*.jsonl file from its name and first
	// line (up to the head size, possibly cut): nil when the file is not the agent's. sure
	// marks a verdict by a name or layout only this agent writes; agent/all first takes any
	// agent's sure verdict (in list order), then a guess.
	DetectJSONL func(path string, firstLine []byte) (p *jsonl.Profile, sure bool)
	// SQLite lists the agent's database profiles, in detection order.
	SQLite []*sqlite.Profile

	// Namer is the agent's naming rule: what becomes of each name site of its stores
	// (Snapshot.Agent picks it). nil: naming.ProviderSafe (only names a provider rejects are
	// rewritten, with mcpname.Normalize).
	Namer naming.Namer
	// Prepare gathers what Namer needs for a run (configs, inventories, history) once
	// discovery found the stores; pipeline calls it for every agent in agent/all's order.
	// nil: the namer needs nothing beyond the stores.
	Prepare Prepare
}

// Core returns c: a Core is an Agent with no capability beyond it.
func (c *Core) Core() *Core { return c }
