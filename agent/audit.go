package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/permission/rules"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
)

// Audit describes an agent's permission-rule audit (sessionfix audit --agent <ID>): the rule
// semantics themselves are a plug-in of the agent's room (its audit*.go files: which rule files
// it reads, how a rule matches a tool now and before, the report and its documents, the fix
// --rules migration), which the command reaches through the room's package; this is what the
// command line needs to know of it without naming the agent. A room never imports package
// audit (the generic document writers and baselines sit above the rooms).
type Audit struct {
	// Reads says what the audit reads, for audit --agent's usage ("Acme rule files"): the
	// flag's usage lists "<ID> (<Reads>)" for every agent with an Audit, in list order.
	Reads string
	// Flags are the audit flags only this agent's audit takes, in the order they are checked:
	// an audit of another agent refuses each one that is set, naming this agent (exit 2). A
	// name is one of audit's own flags or of Options.
	Flags []string
	// Options are the audit flags this room declares (its own rule-file inputs, releases …):
	// the command adds them after audit's own flags and --agent, in list order, built as
	// Agent.Options are (Bool, Repeatable, File; Before is not used). The ones another agent's
	// audit must refuse are also in Flags.
	Options []Option
	// Run is the audit itself (the command's one audit run calls it for --agent's agent).
	// An audit on the shared rule-audit layer sets Rules instead.
	Run AuditRun
	// Rules is an audit on the shared rule-audit layer (issue 24 item 2; docs/adding-an-agent.md
	// "the shared rule-audit layer"): it reads the agent's rule files and tools and returns them with the
	// agent's Semantics now and before (rules.Audit); the engine (package audit, through the
	// command) evaluates every rule × tool, orders lost first and writes every format. The
	// command checks the shared flags (AuditInput.Validate) and reads --baseline before it
	// calls Rules; Rules reports inputs that could not be read in rules.Audit.Problems (exit 3)
	// and returns an error only when nothing can be audited (a usage error for a bad flag).
	Rules RuleAuditRun
	// OwnChecks: Rules checks its own inputs first (PATH roles, their flags) and then calls
	// AuditInput.Validate and Baseline itself, before it reads anything; the command does not
	// call them before Rules (it calls each at most once).
	OwnChecks bool
	// Description is this agent's part of audit --help's description: the command joins every
	// agent's in list order (the default agent's text opens it, so it says what audit does).
	Description string
	// Usage words the usage of audit's shared input flags the way this agent reads them
	// ("settings", "project", "agents", "history": flag name → usage); --help shows the
	// default agent's.
	Usage map[string]string
	// Homes groups the PATH arguments into one audit per agent home they name (issue 23 item
	// 1: two users' rules are never decided together): each home PATH — an agent home, or a
	// directory holding one — with every PATH that is no home (a project: each user's view of
	// it). nil result (or nil Homes): one audit of every PATH, as when at most one home is
	// given. A PATH that is neither a home nor a project is left to Run's error.
	Homes func(paths []string) []AuditHome
	// Home is the directory whose existence says the agent keeps rules for the environment's
	// user (an agent home under ~): audit without --agent and PATH audits every agent whose Home
	// exists, each in its own section (issue 23 item 4). nil: audited only when named.
	Home func(env Env) string
}

// DiscoveredInventory is the inventory of servers' tools listed by discover (--discover, the
// engine's Discover): every server that answered, and for each that did not a problem ("<its
// error>; its tools are not audited"). err: discovery could not run at all.
func DiscoveredInventory(ctx context.Context, discover Discover, servers []Server) (*mcpinventory.Inventory, []string, error) {
	tools, errs, err := discover(ctx, servers)
	if err != nil {
		return nil, nil, err
	}
	var problems []string
	for _, e := range errs {
		problems = append(problems, e.Error()+"; its tools are not audited")
	}
	inv := mcpinventory.New()
	for _, t := range tools {
		inv.Add(t.Server, false, mcpinventory.SourceDiscovered, t.Tool)
	}
	return inv, problems, nil
}

// AuditHome is one audit of a multi-home audit: Home is the PATH naming the agent home (as
// given), Paths what its audit reads (Home first, then the project PATHs).
type AuditHome struct {
	Home  string
	Paths []string
}

// AuditInput is what an agent's audit run reads: audit's shared flags as given (a room reads
// the ones it takes; another agent's own flags were refused already), the rooms' audit
// options, the engine and where to print.
type AuditInput struct {
	// Paths are the PATH arguments (copied homes, project directories); Settings the
	// --settings values (FILE or SCOPE=FILE), Project --project, Cwd the working directory,
	// Agents --agents, History --history.
	Paths    []string
	Settings []string
	Project  string
	Cwd      string
	Agents   []string
	History  []string
	// Inventory is --inventory ("" without), Discover --discover (Engine has the client).
	Inventory string
	Discover  bool
	// AllPairs is --all-pairs; Mode --mode (ModeSet: given on the command line); Subagent
	// --subagent.
	AllPairs bool
	Mode     string
	ModeSet  bool
	Subagent string
	// Options are the values of every room's audit options (Audit.Options) given.
	Options Values
	// Engine is what the engine provides (environment, MCP client, history checks).
	Engine AuditEngine
	// Now is the report's time and Version sessionfix's, for the documents.
	Now     time.Time
	Version string
	// Err is standard error: problems, notes and progress as the run meets them.
	Err io.Writer
	// Validate is the command's check of audit's shared flags (formats, outputs, --fail-on;
	// a usage error) and Baseline reads --baseline; the run calls each once, Validate before
	// it reads anything, Baseline before the rule files.
	Validate, Baseline func() error
	// Redispatch takes the findings of a history check an audit on the shared layer
	// (Audit.Rules) ran (Engine.History); nil for an audit that returns them (AuditResult).
	Redispatch func([]naming.Redispatch)
}

// CheckOnce makes in.Validate and in.Baseline run at most once each (a later call returns
// the first one's error) and returns the check of both, Validate first: the command calls it
// around an audit on the shared layer (before Rules unless Audit.OwnChecks, and after).
func (in *AuditInput) CheckOnce() func() error {
	in.Validate, in.Baseline = once(in.Validate), once(in.Baseline)
	return func() error {
		if err := in.Validate(); err != nil {
			return err
		}
		return in.Baseline()
	}
}

func once(f func() error) func() error {
	done, err := false, error(nil)
	return func() error {
		if !done {
			done, err = true, f()
		}
		return err
	}
}

// AuditResult is one agent's audit as the command's shared tail takes it: the pairs and
// tools tables, the documents of every format, what was read, the summary and the counts
// --fail-on reads, the history's re-dispatch findings.
type AuditResult struct {
	Pairs, Tools *reports.Table
	Page         func() *reports.HTMLPage
	// Doc is the agent's JSON document with the re-dispatch findings (never nil: a JSON array,
	// never null) added as its last member "redispatch"; the command writes it as is
	// (reports.Document wraps a room's JSON-tagged value).
	Doc func(redispatch []naming.Redispatch) json.Marshaler
	// SARIF are the pairs' results (also what --baseline compares); Rules the agent's SARIF rules.
	SARIF func() []reports.SARIFResult
	Rules []reports.SARIFRule
	Read  []string // every file read (written to no output path)
	// Summary prints the agent's summary line(s) to w once the report is written.
	Summary func(w io.Writer)
	// FailCounts are the pairs per --fail-on class (lost, gained, refused), given SARIF's results.
	FailCounts func(results []reports.SARIFResult) map[string]int
	// Redispatch are the findings of the history check (AuditEngine.History), nil for none:
	// a room does not read them, it hands them back for the command to write after the
	// audit's own findings.
	Redispatch []naming.Redispatch
	// Partial reports whether some input could not be read (exit 3 wins over findings).
	Partial func() bool
}

// RuleAuditRun reads an agent's rule files and tools for the shared rule-audit layer (Audit.Rules).
type RuleAuditRun func(ctx context.Context, in AuditInput) (*rules.Audit, error)

// AuditRun reads an agent's audit inputs (in) and matches its rules; the error ends the
// audit with nothing written (a usage error for bad flags, exit 2).
type AuditRun func(ctx context.Context, in AuditInput) (*AuditResult, error)

// AuditEngine is what the engine gives an agent's audit: the command builds it from pipeline
// and inventory, so a room never imports them (internal/layering: rooms import no pipeline,
// scan, rewrite, check or audit, and never inventory's MCP client).
type AuditEngine struct {
	// Env is the environment and the user's home; Vars the process environment as MCP
	// configs expand $VAR / ${VAR} with it (values are secrets).
	Env  Env
	Vars mcpconfig.Env
	// Discover is --discover's MCP client over agent.Tool rows (as Prepare's); ListTools the
	// same client returning an inventory (its sources "discovered"): serverErrs are servers
	// that could not be listed (the audit goes on), err is set when none could be (nothing is
	// reported).
	Discover  Discover
	ListTools func(ctx context.Context, servers []Server) (inv *mcpinventory.Inventory, serverErrs []error, err error)
	// StoredNames are the distinct tool names stored in the session stores under roots,
	// sorted, and the problems met (a read-only scan: pipeline.StoredNames).
	StoredNames func(ctx context.Context, roots []string) ([]string, []error)
	// History is the read-only re-dispatch check of a session history (pipeline.HistoryCheck).
	History HistoryCheck
	// Renames are the renames the fix runs of the state directory recorded (nil func: none
	// known): an audit made after a repair finds the raw identities in the stored names as
	// they were before it (issue 23 item 2), and says which stored names it cannot read back.
	Renames func() (*Renames, []error)
}

// Renames are the names sessionfix fix wrote and what they replaced: Old maps each new name to
// the old names it replaced (one unless two old names now share a spelling), over Runs runs
// of StateDir (runs undone, and stores undo restored, left out).
type Renames struct {
	StateDir string
	Runs     int
	Old      map[string][]string
}

// OldNames returns the names a stored name stood for before sessionfix renamed it: its
// recorded old names, or the name itself when no run renamed it (r nil: the name itself).
func (r *Renames) OldNames(name string) []string {
	if r != nil {
		if old := r.Old[name]; len(old) > 0 {
			return old
		}
	}
	return []string{name}
}

// From says where the renames were read ("3 names renamed by 1 fix run of DIR"; "" when none).
func (r *Renames) From() string {
	if r == nil || len(r.Old) == 0 {
		return ""
	}
	runs := "1 fix run"
	if r.Runs != 1 {
		runs = fmt.Sprintf("%d fix runs", r.Runs)
	}
	names := "1 name"
	if len(r.Old) != 1 {
		names = fmt.Sprintf("%d names", len(r.Old))
	}
	return names + " renamed by " + runs + " of " + r.StateDir
}

// HistoryInput is one read-only re-dispatch check of an agent's session history: the engine's
// scan pipeline run over Roots for Agent (with its option values Options, as scan would plan
// them), nothing written, then every stored call looked up among today's tools.
type HistoryInput struct {
	Agent   store.AgentID
	Roots   []string
	Options Values
	// Policy, when set, changes the run's naming policy (the scan and the lookup), e.g. the
	// inventory's Index; Lookup, when set, changes only the lookup's copy of it (the audit's
	// tool list as the agent's policy).
	Policy, Lookup func(*naming.Policy)
	// Servers, when set, are today's tool set as raw server keys and tool names (an
	// inventory), Source what explanations call it ("file inv.json", "discovered"); nil: the
	// policy's own tools.
	Servers map[string][]string
	Source  string
}

// HistoryCheck runs a HistoryInput and returns the findings and the errors met (stores or
// parts of them that could not be read: "path: reason"); err ends the check (the audit goes
// on without it).
type HistoryCheck func(ctx context.Context, in HistoryInput) ([]naming.Redispatch, []error, error)

// OptionNames are the names of opts, in order: Audit.Flags of an audit whose every option is
// its own (another agent's audit refuses each one).
func OptionNames(opts []Option) []string {
	out := make([]string, len(opts))
	for i, o := range opts {
		out[i] = o.Name
	}
	return out
}

// OptionValue is parse of option name's value in v (def when it is not given); a value parse
// rejects is a usage error "--<name>: <parse's error>" (exit 2).
func OptionValue[T any](v Values, name, def string, parse func(string) (T, error)) (T, error) {
	s := v.String(name)
	if s == "" {
		s = def
	}
	t, err := parse(s)
	if err != nil {
		return t, usage.Errorf("--%s: %v", name, err)
	}
	return t, nil
}

// AuditInventory is the inventory an audit on the shared layer audits its rules against, and
// what it says of it in a: --inventory's file (added to a.Read; a.Inventory "file PATH"); else,
// with --discover, the tools servers list (a.Inventory "discovered"; a server that did not
// answer is a problem in a.Problems; no server at all is a usage error "--discover: no
// <noServers>"); else none (nil; a.Inventory "none" and the note "no tools to audit the rules
// against: give --inventory FILE or --discover", with " (<why>)" when why is set).
func AuditInventory(ctx context.Context, in AuditInput, a *rules.Audit, servers []Server, noServers, why string) (*mcpinventory.Inventory, error) {
	switch {
	case in.Inventory != "":
		inv, err := mcpinventory.Load(in.Inventory)
		if err != nil {
			return nil, err
		}
		a.Read = append(a.Read, in.Inventory)
		a.Inventory = "file " + in.Inventory
		return inv, nil
	case in.Discover:
		if len(servers) == 0 {
			return nil, usage.Errorf("--discover: no %s", noServers)
		}
		inv, problems, err := DiscoveredInventory(ctx, in.Engine.Discover, servers)
		if err != nil {
			return nil, err
		}
		a.Problems = append(a.Problems, problems...)
		a.Inventory = "discovered"
		return inv, nil
	}
	a.Inventory = "none"
	note := "no tools to audit the rules against: give --inventory FILE or --discover"
	if why != "" {
		note += " (" + why + ")"
	}
	a.Notes = append(a.Notes, note)
	return nil, nil
}
