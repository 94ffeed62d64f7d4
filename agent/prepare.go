package agent

import (
	"context"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// Server is one MCP server an agent's config launches, the way --discover starts it
// (mcpconfig.Server: the one server type of every room; Reach derives a missing Transport from
// Command / URL). Values from a config are secrets and never reach any output.
type Server = mcpconfig.Server

// Transport is how an MCP server is reached (mcpconfig.Transport).
type Transport = mcpconfig.Transport

// The transports --discover can start.
const (
	TransportStdio = mcpconfig.TransportStdio
	TransportHTTP  = mcpconfig.TransportHTTP
	TransportSSE   = mcpconfig.TransportSSE
)

// Tool is one raw (server key, tool name) pair of an inventory.
type Tool struct{ Server, Tool string }

// Discover lists the tools of servers (the MCP client lives above the rooms, in inventory,
// and is injected by pipeline). serverErrs are the servers that could not be listed (the run
// goes on without their tools); err is set when none of them could be listed or ctx ended.
type Discover func(ctx context.Context, servers []Server) (tools []Tool, serverErrs []error, err error)

// Problem is something preparing a policy found worth reporting: a file (Path) that could
// not be read, a server that could not be listed; an error makes the run partial (exit 3).
type Problem struct {
	Path     string
	Severity store.Severity
	Reason   string
}

// Values are the values of an agent's options (Agent.Options) as the command line gave them,
// by option name (the flag without its dashes, "acme-config"): a repeatable option has every
// value in flag order, a boolean one "true" when set; an option not given is absent.
type Values map[string][]string

// String is the last value of option name ("" when not given).
func (v Values) String(name string) string {
	if vs := v[name]; len(vs) > 0 {
		return vs[len(vs)-1]
	}
	return ""
}

// Strings are the values of option name in flag order (nil when not given).
func (v Values) Strings(name string) []string { return v[name] }

// Bool reports whether the boolean option name was set.
func (v Values) Bool(name string) bool { return v.String(name) == "true" }

// PrepareInput is what an agent's Prepare reads: the same neutral input for every agent of a
// run. The room picks its own stores out of Stores and reads its own options out of Options.
type PrepareInput struct {
	// Env is the environment and the user's home directory.
	Env Env
	// Stores are every store discovery found (of every agent), in walk order; Lexical maps a
	// store path to the path the walk reached it by (a symlinked home keeps its name).
	Stores  []store.Store
	Lexical func(string) string
	// SQLite are the options SQLite stores are opened with (--busy-timeout, --profile).
	SQLite sqlite.Options
	// InventoryFile is --inventory ("" for none) and InventoryTools its raw tools (read once).
	InventoryFile  string
	InventoryTools []Tool
	// Discover, when set (--discover), lists the tools of servers with the MCP client.
	Discover Discover
	// Vars is the process environment as configs expand $VAR / ${VAR} with it (the values
	// of MCP servers' config entries; they are secrets).
	Vars mcpconfig.Env
	// Options are the values of the agent's own options (Agent.Options).
	Options Values
}

// Prepared is what an agent's Prepare gathered for a run.
type Prepared struct {
	// SetPolicy puts the agent's part of the naming policy into a run's policy (typically
	// naming.SetAgent(p, ID, &naming.PathPolicy[T]{…})); nil: the agent's namer needs nothing.
	SetPolicy func(p *naming.Policy)
	// Problems are files that could not be read and servers that could not be listed (the
	// run goes on; an error problem makes it partial, exit 3), in the order found.
	Problems []Problem
	// Info describes what the agent's stores were planned with, one row per home (the plan's
	// text lines and, under the agent's ID, the JSON report's member); empty: nothing to say.
	Info []Info
	// Skip lists store paths left out of the plan (their inputs could not be read; a
	// problem says why).
	Skip []string
	// Declared are the names a release of the agent offers for the tools its configs name
	// (the live tool list, not history): check --provider checks each one.
	Declared []Declared
}

// Declared is one name an agent release offers a model for a configured MCP tool.
type Declared struct {
	// Source is the config file that names the tool; Release the release or generation that
	// offers Name ("Acme 2.x").
	Source, Release string
	// Server and Tool are the raw tool; Name the name offered.
	Server, Tool, Name string
	// Note says what Name stands for ("the live tool list of every request"); Fix what helps
	// when a provider rejects it (fix never renames a declared tool).
	Note, Fix string
}

// Info is one row of what an agent's stores were planned with: marshalled as JSON (the
// report's member named by the agent's ID holds the rows) and printed as one line of a plan.
type Info interface {
	// Text is the plan's line; several says that the run planned more than one row of the
	// agent's (a row may then name how many stores it covers).
	Text(several bool) string
}

// FromPath is an Info that can say its stores were planned with the agent home their PATH
// lies in, not the environment's or a flag's (naming.ClassInfo.KeptInHome then applies).
type FromPath interface {
	Info
	FromPathOnly() bool
}

// Prepare gathers, once discovery has found the stores, what the agent's namer needs (its
// configs, inventories, history): the hook agent/all's agents implement and pipeline calls
// for each agent in list order. A room with none of its stores among in.Stores returns a
// zero Prepared. The error ends the run (a usage error for a bad option value, exit 2).
type Prepare func(ctx context.Context, in PrepareInput) (Prepared, error)

// Option is a command-line option an agent declares (a flag of scan, fix and check; cmd
// builds the flags from these, pipeline passes their values to Prepare as Values).
type Option struct {
	// Name is the flag without its dashes ("acme-config"); Usage its --help text.
	Name  string
	Usage string
	// Bool: a flag without a value; Repeatable: may be given several times (Values keeps
	// every value, in order); File: its value is a file the run reads (the run refuses to
	// write an output over it).
	Bool       bool
	Repeatable bool
	File       bool
	// Before is the general flag of scan, fix and check this one is listed before in --help
	// ("discover"); "" lists it after all of them.
	Before string
	// Value is the value of a string option not given (shown in --help); Hint what a bad
	// value should be, for the usage error ("want a release such as 1.2.3").
	Value, Hint string
	// Plan is the member of a plan file's "options" (rewrite.PlanOptions) that records the
	// option ("acme_config"; a bool option: true; a repeatable one: an array); "" when a plan
	// does not record it. The member must be one PlanOptions has (pipeline's test checks).
	Plan string
	// Report is the member of check's JSON report (report.CheckReport, last) that records
	// a SentAsOption's value when one is given ("acme_release"); "" when the report does not.
	Report string
	// PlanAfter is the generic member of a plan file's "options"
	// (rewrite.PlanGenericMembers: "agent", "profile", …) the Plan member is written right
	// after: the place older releases wrote it, so plans keep their bytes; "" writes it after
	// all of them.
	PlanAfter string
}
