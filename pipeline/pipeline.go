// Package pipeline is sessionfix's engine as a library: a run's discovery, scan, plan and
// apply (New, Run, Fix, Undo, check's CheckStores), the run summary (Summary, aggregated store
// by store, with the domain rule that a clean name with a hash suffix is "normalized" when it
// is the normalized form of a dotted name seen anywhere in the run), the settings pass beside
// store discovery (SettingsScan: settings files are read, never rewritten), the plan file and
// what an agent's audit gets injected (AuditEngine). What it reports are package
// pipeline/report's types; cmd/sessionfix only reads flags, prompts and prints them.
package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/check"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/pipeline/report"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/scan"
	"github.com/sessionfix/sessionfix/store"
)

// Options are the naming and store choices shared by scan, fix and check (their flags, parsed).
type Options struct {
	KeepTruncated bool
	RewriteLossy  bool
	// Inventory is the --inventory file ("" = none), read once by New.
	Inventory string
	Agent     string
	Discover  bool
	// DiscoverUntrusted is --discover-untrusted: --discover also starts the servers of configs
	// another user owns or can write (inventory.DiscoverOptions.AllowUntrusted). Never recorded
	// in a plan, nor taken from one.
	DiscoverUntrusted bool
	// AgentOptions are the values of the agents' own options (agent.Agent.Options: a
	// config file, a release, …), by option name; each agent's Prepare reads its own.
	AgentOptions agent.Values
	// Prepared keeps the Prepare results of the first pipeline of a command for the agents
	// that ask for it, so a plan confirmed interactively is applied with the same inventory
	// (discovery runs once). nil: computed every time.
	Prepared *PrepareCache
	// SQLite stores: --profile FILE and --busy-timeout.
	Profile     string
	BusyTimeout time.Duration
	// StateDir is fix's --state-dir ("" = the default, StateDir); discovery never reads it.
	StateDir string
	// RollBack: fix --apply rolls back a hot SQLite journal a crashed writer left before it
	// reads the database (scan and dry-runs only read: they report it).
	RollBack bool
	// MoveLegacy (fix --move-legacy): a store an agent's newest release no longer opens where
	// it lies (agent.Agent.Relocate) is moved where it does, after the rewrites of an apply
	// (recorded in the run; undo moves it back); a dry run lists the moves (Relocations).
	MoveLegacy bool
	// StoresOwnedBy, when set, is the only owner a store may have: a plan another user wrote,
	// applied as root, rewrites only that user's files (LoadPlan; scan.DiscoverOptions.OwnedBy).
	StoresOwnedBy *uint32
	// AllUsers is --all-users (root only; no PATH): the roots are the agents' default roots in
	// every home of the user database (Homes), each home counted on its own (Report.Homes).
	AllUsers bool
}

// Env is what a pipeline reads of the process: the environment (Getenv; Environ lists it
// whole, "NAME=value", for settings' $VAR and the MCP servers --discover starts; nil = empty),
// the home directory, and the client version --discover announces to MCP servers.
type Env struct {
	Getenv        func(string) string
	Environ       func() []string
	Home          string
	ClientVersion string
}

// settings is the environment settings are expanded with.
func (e Env) settings() mcpconfig.Env {
	if e.Environ == nil {
		return mcpconfig.Env{}
	}
	return mcpconfig.EnvFromList(e.Environ())
}

func (e Env) agent() agent.Env { return agent.Env{Getenv: e.Getenv, Home: e.Home} }

// UsageError is a bad flag or value found by the library (the CLI exits 2 with it).
type UsageError = usage.Error

// usagef is a UsageError.
func usagef(format string, args ...any) error { return usage.Errorf(format, args...) }

// Validate refuses contradictory or invalid naming flags (a *UsageError). Commands call it
// before any side effect (removing leftovers, starting MCP servers for --discover, reading
// stores); New calls it again for callers that did not.
func (o Options) Validate() error {
	if o.RewriteLossy && o.Inventory == "" {
		return usagef("--rewrite-lossy needs --inventory (a lossy name can only be attributed with the raw tool list)")
	}
	if err := usage.DiscoverUntrusted(o.DiscoverUntrusted, o.Discover); err != nil {
		return err
	}
	if err := CheckAgent(o.Agent); err != nil {
		return err
	}
	if o.BusyTimeout < 0 {
		return usagef("--busy-timeout must not be negative")
	}
	return nil
}

// CheckAgent validates --agent ("" = detect by name and content; all.Selectable): a
// *UsageError naming the valid ids.
func CheckAgent(id string) error {
	ids := all.Selectable()
	if id == "" || slices.Contains(ids, store.AgentID(id)) {
		return nil
	}
	names := make([]string, len(ids))
	for i, a := range ids {
		names[i] = string(a)
	}
	return usagef("--agent must be one of %s, not %q", strings.Join(names, ", "), id)
}

// CheckAgentOptions refuses an agent's own option (agent.Agent.Options, SentAsOption) given
// together with --agent id naming another agent, which reads it nowhere: the run would go on as
// if it were not given ("scan --agent acme --other-config X"). given are the option names set
// on the command line; the error is a *UsageError naming the option's agent, as audit refuses
// another agent's audit flags: "--other-config is an Other CLI flag; --agent acme does not
// take it". id "" (each file's agent detected) takes every agent's options; an id CheckAgent
// refuses is its error.
func CheckAgentOptions(id string, given []string) error {
	if id == "" {
		return nil
	}
	if err := CheckAgent(id); err != nil {
		return err
	}
	chosen := all.Lookup(store.AgentID(id))
	for _, name := range given {
		if agentHasOption(chosen, name) {
			continue
		}
		if owners := OptionOwners(name); len(owners) > 0 {
			return usagef("--%s is a %s flag; --agent %s does not take it", name, strings.Join(owners, " and "), id)
		}
	}
	return nil
}

// OptionOwners names the agents that declare the option name (Options or SentAsOption), in
// list order: two rooms may declare one flag for a file format both agents read.
func OptionOwners(name string) []string {
	var out []string
	for _, a := range all.Agents {
		if agentHasOption(a, name) {
			out = append(out, a.Core().Name)
		}
	}
	return out
}

// agentHasOption reports whether name is one of a's own options (Options or SentAsOption).
func agentHasOption(a agent.Agent, name string) bool {
	if a == nil {
		return false
	}
	if all.SentAsOptionOf(a) != nil && all.SentAsOptionOf(a).Name == name {
		return true
	}
	return slices.ContainsFunc(all.OptionsOf(a), func(o agent.Option) bool { return o.Name == name })
}

// StateDir resolves the state directory: dir, else $SESSIONFIX_STATE_DIR, else
// ${XDG_STATE_HOME:-~/.local/state}/sessionfix; always absolute, so the run manifest and the
// undo hint name it wherever they are read from.
func StateDir(getenv func(string) string, home, dir string) string {
	if dir == "" {
		dir = getenv("SESSIONFIX_STATE_DIR")
	}
	if dir == "" {
		dir = runlog.DefaultStateDir(getenv, home)
	}
	if a, err := filepath.Abs(dir); err == nil {
		dir = a
	}
	return dir
}

// StoreOptions turns --profile and --busy-timeout into the backends' options (a bad profile
// is a *UsageError).
func StoreOptions(profile string, busy time.Duration) (all.Options, error) {
	opt, err := all.OptionsFor(profile, busy)
	if err != nil {
		return opt, usagef("--profile: %v", err)
	}
	return opt, nil
}

// Pipeline is discover → (scan → plan → apply) per store, with a streaming Summary.
type Pipeline struct {
	// Roots are the paths walked (the agent's default roots when none was given).
	Roots  []string
	Found  *scan.Found
	Policy naming.Policy
	// Summary aggregates every result Run sees; its Report is the JSON report.
	Summary *Summary
	// Settings holds the settings files among the roots and their legacy-spelled rules
	// (reported only; settings are never rewritten).
	Settings *SettingsScan
	// Profile is the --profile file the SQLite stores were read with (nil: none), as a fix run
	// records it.
	Profile *runlog.RunProfile
	// MoveLegacy is Options.MoveLegacy: an apply pass (Run) moves the stores Relocations lists.
	MoveLegacy bool
	// Declared are the names the agents' releases offer for their configured tools
	// (agent.Prepared.Declared), in agent/all's order: check --provider checks them.
	Declared []agent.Declared
	// Looked is what a run without PATH and without --agent looked for, agent by agent (nil
	// otherwise): LookedLine says it.
	Looked []all.LookedFor
	// Homes are the homes --all-users covers (nil without it): Run counts each one's stores
	// into Summary.Report.Homes.
	Homes []report.Home
}

// NothingFound is the error of a run without PATH and --agent that found no agent's default
// root: every agent and what was tried for it (exit 1).
func NothingFound(looked []all.LookedFor) error {
	var parts []string
	for _, l := range looked {
		parts = append(parts, fmt.Sprintf("%s (%s)", l.Agent.Core().Name, l.Tried))
	}
	return fmt.Errorf("no agent's store found: looked for %s (pass a PATH, or --agent and the agent's variable)", strings.Join(parts, "; "))
}

// LookedLine says what a run without PATH and --agent found and looked for ("" for other runs):
// "agents found: NAME (ROOT, …), …; looked for, not found: NAME (what was tried); …".
func (p *Pipeline) LookedLine() string {
	if p.Looked == nil {
		return ""
	}
	var found, missing []string
	for _, l := range p.Looked {
		if len(l.Found) > 0 {
			found = append(found, fmt.Sprintf("%s (%s)", l.Agent.Core().Name, strings.Join(l.Found, ", ")))
		} else {
			missing = append(missing, fmt.Sprintf("%s (%s)", l.Agent.Core().Name, l.Tried))
		}
	}
	line := "agents found: " + strings.Join(found, ", ")
	if len(missing) > 0 {
		line += "; looked for, not found: " + strings.Join(missing, "; ")
	}
	return line
}

// New resolves the roots (paths; none: the default roots of o.Agent, all.DefaultRoots), loads
// the inventory, discovers the stores and runs every agent's Prepare hook (agent/all's order:
// the agents whose stores were found load their policies; with --discover they start the
// configured MCP servers). Errors: a *UsageError for a bad option; an error when nothing
// could be read or a named config or inventory is bad. Problems worth reporting (an agent
// home's broken config, a server that could not be listed) go to Summary.Report.Problems and,
// when errors, set Summary.Failed.
func New(ctx context.Context, env Env, paths []string, o Options) (*Pipeline, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	var inv *mcpinventory.Inventory // read once: the index here, the agents' tools in prepareAgents
	var ix *mcpname.Index
	if o.Inventory != "" {
		var err error
		if inv, err = mcpinventory.Load(o.Inventory); err != nil {
			return nil, err
		}
		ix = inv.Index()
	}
	roots := paths
	var looked []all.LookedFor
	var homes []report.Home
	var homeNotes []report.ProblemRow
	if o.AllUsers {
		if len(paths) > 0 {
			return nil, usagef("--all-users covers the agents' stores in every user's home: give no PATH with it (nothing was done)")
		}
		if why := AllUsersRefusal(); why != "" {
			return nil, usagef("%s", why)
		}
		var skipped []SkippedHome
		var err error
		if homes, skipped, err = Homes(PasswdFile, store.AgentID(o.Agent)); err != nil {
			return nil, err
		}
		for _, h := range homes {
			roots = append(roots, h.Roots...)
		}
		homeNotes = SkippedNotes(skipped)
		if len(roots) == 0 {
			return nil, fmt.Errorf("--all-users: no home of %s holds an agent store (%d entries looked at)", PasswdFile, len(skipped))
		}
		homes = slices.Clip(homes)
	}
	if len(roots) == 0 {
		roots = all.DefaultRoots(store.AgentID(o.Agent), env.agent())
		if o.Agent == "" {
			// Every agent whose default root exists (issue 23 item 4).
			looked = all.Looked(env.agent())
			if len(roots) == 0 {
				return nil, NothingFound(looked)
			}
		} else if len(roots) == 0 {
			a := all.Lookup(store.AgentID(o.Agent))
			what, tried, hint := a.Core().RootsTried(env.agent())
			return nil, fmt.Errorf("no %s found: tried %s (pass a PATH, or %s)", what, tried, hint)
		}
	}
	settingsFiles, storeRoots, walked := SplitSettingsRoots(roots)
	sopt, err := StoreOptions(o.Profile, o.BusyTimeout)
	if err != nil {
		return nil, err
	}
	sopt.Agent = store.AgentID(o.Agent)
	sopt.SQLite.RollBack = o.RollBack
	found, err := scan.DiscoverWith(ctx, storeRoots, scan.DiscoverOptions{Backend: sopt, Exclude: []string{StateDir(env.Getenv, env.Home, o.StateDir)}, OwnedBy: o.StoresOwnedBy})
	if err != nil {
		return nil, err
	}
	found.Ignored = max(0, found.Ignored-walked) // read by the settings pass
	found.IgnoredPaths = slices.DeleteFunc(found.IgnoredPaths, func(p string) bool {
		return slices.ContainsFunc(settingsFiles, func(f string) bool { return SameFile(f, p) })
	})
	rootProbs, err := checkRoots(env, o.Agent, len(paths) == 0 && !o.AllUsers, found, settingsFiles)
	if err != nil {
		return nil, err
	}
	pr, err := prepareAgents(ctx, env, o, found, sopt, inv)
	if err != nil {
		return nil, err
	}
	leftOut := 0
	if len(pr.skip) > 0 { // stores whose inputs could not be read (a problem says why)
		skip := make(map[string]bool, len(pr.skip))
		for _, p := range pr.skip {
			skip[p] = true
		}
		n := len(found.Targets)
		found.Targets = slices.DeleteFunc(found.Targets, func(t scan.Target) bool { return skip[t.Store.Ref().Path] })
		leftOut = n - len(found.Targets)
	}
	pol := naming.Policy{KeepTruncated: o.KeepTruncated, RewriteLossy: o.RewriteLossy, Index: ix}
	for _, set := range pr.set {
		set(&pol)
	}
	// A reference root (postgres://…) may hold a password: only discovery sees it; what the
	// run records and prints is the redacted form.
	shown := make([]string, len(roots))
	for i, r := range roots {
		shown[i] = store.Redact(r)
	}
	p := &Pipeline{Roots: shown, Found: found, Policy: pol, MoveLegacy: o.MoveLegacy, Declared: pr.declared, Homes: homes,
		Settings: ScanSettings(settingsFiles, env.settings(), env.Home, ix), Looked: looked}
	if sopt.ProfileDoc != nil {
		src := o.Profile
		if a, err := filepath.Abs(src); err == nil {
			src = a
		}
		p.Profile = &runlog.RunProfile{Source: src, Document: sopt.ProfileDoc}
	}
	p.Summary = NewSummary(p.Found)
	s := p.Summary
	s.Dispatch = &check.Lookup{Policy: p.Policy}
	if inv != nil {
		s.Dispatch.Inventory, s.Dispatch.InventorySource = dispatchTools(inv), o.Inventory
	}
	s.KeepTruncated = o.KeepTruncated
	s.LeftOut = leftOut // named in the closing line: "N stores left out (see errors)"
	s.Report.Problems = append(s.Report.Problems, rootProbs...)
	s.Report.Problems = append(s.Report.Problems, homeNotes...)
	s.Report.Problems = append(s.Report.Problems, pr.problems...)
	s.Failed = s.Failed || pr.failed
	s.Report.Agents = pr.info
	s.Report.Problems = append(s.Report.Problems, p.Settings.Errors...)
	s.Report.SettingsRules = p.Settings.Rows()
	if len(p.Settings.Errors) > 0 {
		s.Failed = true
	}
	return p, nil
}

// checkRoots turns what discovery made of the roots into an error or problems (issue 8 item 6):
// when not one root could be read and no settings file was given, the run is an error (exit 1)
// naming each path (for the default root, which variables and paths were tried) instead of
// an empty report; a directory that holds no store (and no settings file) is a warning "no
// store found under DIR". A root that is missing while others were read stays a problem
// (discovery's error Issue: exit 3).
func checkRoots(env Env, id string, isDefault bool, found *scan.Found, settingsFiles []string) ([]report.ProblemRow, error) {
	var missing []string
	var probs []report.ProblemRow
	for _, r := range found.Roots {
		switch {
		case r.Err != nil:
			missing = append(missing, fmt.Sprintf("%s: %s", r.Path, ErrReason(r.Err)))
		case r.Dir && r.Stores == 0 && !slices.ContainsFunc(settingsFiles, func(f string) bool { return underRoot(f, r.Path) }):
			probs = append(probs, report.ProblemRow{Path: r.Abs, Severity: string(store.SevWarning), Reason: "no store found under " + r.Path})
		}
	}
	if len(missing) == 0 || len(missing) < len(found.Roots) || len(settingsFiles) > 0 {
		return probs, nil
	}
	if !isDefault {
		return nil, fmt.Errorf("nothing could be read: %s", strings.Join(missing, "; "))
	}
	a := all.Lookup(store.AgentID(id))
	if a == nil || a.Core().RootsTried == nil {
		a = all.Default // the default roots
	}
	what, tried, hint := a.Core().RootsTried(env.agent())
	return nil, fmt.Errorf("no %s found: tried %s: %s (pass a PATH, or %s)", what, tried, strings.Join(missing, "; "), hint)
}

// Run processes every store (rewrite.Process over Found.Targets with Policy), adding each
// result to Summary and then calling each (nil: none) for it, in path order; Summary is
// finished when Run returns.
func (p *Pipeline) Run(ctx context.Context, opt rewrite.ProcessOptions, each func(*rewrite.StoreResult) error) (*rewrite.Result, error) {
	if opt.Apply && p.MoveLegacy {
		opt.Relocate = all.Relocate
	}
	stores := make([]store.Store, len(p.Found.Targets))
	for i, t := range p.Found.Targets {
		stores[i] = t.Store
	}
	res, err := rewrite.Process(ctx, stores, p.Policy, opt, func(r *rewrite.StoreResult) error {
		p.Summary.Add(r)
		if each != nil {
			return each(r)
		}
		return nil
	})
	p.Summary.Finish()
	if p.Homes != nil {
		p.Summary.Report.Homes = homeCounts(p.Homes, p.Summary.Report.Stores)
	}
	return res, err
}

// Relocations are the moves of the stores found that an agent's newest release no longer
// opens where they lie (all.Relocate), in walk order: what fix --move-legacy would move. The
// apply makes them only for stores it read and did not refuse (rewrite.ProcessOptions.Relocate).
func (p *Pipeline) Relocations() []rewrite.Relocation {
	var out []rewrite.Relocation
	for _, t := range p.Found.Targets {
		ref := t.Store.Ref()
		if to, why := all.Relocate(ref); to != "" {
			out = append(out, rewrite.Relocation{Ref: ref, To: to, Why: why})
		}
	}
	return out
}

// SameFile reports whether two paths name the same file (fileio.SameFile).
func SameFile(a, b string) bool { return fileio.SameFile(a, b) }

// ErrReason is an error without its path ("no such file or directory").
func ErrReason(err error) string { return store.ErrReason(err) }

// underRoot reports whether path is root or lies under it.
func underRoot(path, root string) bool {
	if store.IsReference(path) || store.IsReference(root) {
		return store.Redact(path) == store.Redact(root)
	}
	a, err1 := filepath.Abs(path)
	b, err2 := filepath.Abs(root)
	if err1 != nil || err2 != nil {
		return false
	}
	return a == b || strings.HasPrefix(a, strings.TrimSuffix(b, string(filepath.Separator))+string(filepath.Separator))
}

// ReportUnreached makes each store of the applied plan that discovery did not give as a store
// now (rewrite.Unreached) an error of the run (exit 3), unless discovery already named it in an
// error (a path that is gone).
func (p *Pipeline) ReportUnreached(planned map[string]*rewrite.PlannedStore) {
	paths := make([]string, 0, len(p.Found.Targets))
	for _, t := range p.Found.Targets {
		paths = append(paths, t.Store.Ref().Path)
	}
	for _, path := range rewrite.Unreached(planned, paths) {
		if slices.ContainsFunc(p.Found.Issues, func(is scan.Issue) bool { return is.Path == path && is.Severity == store.SevError }) {
			continue
		}
		p.Summary.Report.Problems = append(p.Summary.Report.Problems, report.NewProblem(path, store.Loc{}, string(store.SevError),
			"planned, but not read as a store now (gone, or left out with a warning above): not rewritten; make a new plan"))
		p.Summary.Failed = true
	}
}

// Reads reports whether path is one of the run's stores or settings files, or an input of o
// (--inventory, --profile, an agent's file option such as a config): the same file.
func (p *Pipeline) Reads(path string, o Options) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	same := func(q string) bool {
		fq, err := os.Stat(q)
		return err == nil && os.SameFile(fi, fq)
	}
	inputs := []string{o.Inventory, o.Profile}
	for _, a := range all.Agents {
		for _, opt := range all.OptionsOf(a) {
			if opt.File {
				inputs = append(inputs, o.AgentOptions.Strings(opt.Name)...)
			}
		}
	}
	return slices.ContainsFunc(p.Found.Targets, func(t scan.Target) bool { return same(t.Store.Ref().Path) }) ||
		slices.ContainsFunc(p.Settings.Files, same) || slices.ContainsFunc(inputs, func(q string) bool { return q != "" && same(q) })
}
