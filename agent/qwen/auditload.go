package qwen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/qwen/settings"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/reports"
)

// LoadOptions say where a Qwen Code audit's inputs are (audit's flags, parsed and validated).
type LoadOptions struct {
	// Sources are the settings files to read (--settings, PATH inputs, or the discovered scopes).
	Sources []settings.Source
	// Explicit: the settings files were given (--settings or PATH), not discovered.
	Explicit bool
	// FromPaths: PATH arguments were given; only what they hold is read (no default agent
	// directories, no default history, no note about --history homes).
	FromPaths bool
	// Discover locates the runner's scopes (home, project, working directory, environment).
	Discover settings.DiscoverOptions
	// Agents are --agents directories (each must be a directory); empty: next to the
	// settings files, or Qwen Code's agent directories when the scopes were discovered.
	Agents []string
	// Inventory is --inventory (a file), DiscoverTools --discover (list the configured
	// servers' tools with Hooks.ListTools); neither: infer the tools from the settings and the
	// names stored in History (default: Qwen Code's runtime directory, $QWEN_RUNTIME_DIR… via
	// Getenv and Discover.Home).
	Inventory     string
	DiscoverTools bool
	History       []string
	Getenv        func(string) string
}

// Hooks receive what loading says as it goes. Problem: an input that could not be used (the
// load goes on; Loaded.Problems lists it too); Note: a warning or note for standard error;
// Progress: a line for standard error as it is (--discover's per-server tool counts).
// StoredNames reads the tool names stored under session roots (pipeline.StoredNames), for
// the inferred inventory. ListTools is --discover's MCP client (the command layer wraps
// inventory.Discover: a room never starts a server itself): it lists the tools of servers;
// serverErrs are the servers that could not be listed (problems; the audit goes on), err is set
// when none could be (inventory.AllFailed: nothing is reported).
type Hooks struct {
	Problem     func(error)
	Note        func(string)
	Progress    func(string)
	StoredNames func(ctx context.Context, roots []string) ([]string, []error)
	ListTools   func(ctx context.Context, servers []mcpconfig.Server) (inv *mcpinventory.Inventory, serverErrs []error, err error)
	// Renames are the renames fix runs recorded (agent.AuditEngine.Renames; nil: none known):
	// a stored name a run wrote is read as the name it replaced.
	Renames func() (*agent.Renames, []error)
}

// Load reads a Qwen Code audit's inputs: the settings files (settings.LoadAll; their warnings
// as notes), the subagent directories, and the inventory (a file, discovered, or inferred).
// Unreadable settings and agents are problems; an unreadable --inventory and a --discover where
// every server fails are errors (nothing is reported). The result's Merged and AgentDirs feed
// Run.
func Load(ctx context.Context, o LoadOptions, h Hooks) (*Loaded, error) {
	l := &Loaded{}
	problem := func(err error) {
		l.Problems = append(l.Problems, err.Error())
		h.Problem(err)
	}
	senv := o.Discover.Env
	files, errs := settings.LoadAll(o.Sources, senv)
	for _, e := range errs {
		problem(e)
	}
	for _, f := range files {
		for _, w := range f.Warnings {
			h.Note("warning: " + reports.Printable(w.String()))
		}
	}
	l.Files = files
	if !o.FromPaths {
		noteHistorySettings(h, o.History, files)
	}
	l.Merged = settings.Merge(files...)
	if l.Merged.FolderTrust != nil && *l.Merged.FolderTrust {
		h.Note("note: security.folderTrust is enabled; the audit takes each server's trust as configured (trustedFolders.json is not read)")
	}

	l.AgentDirs = o.Agents
	if len(l.AgentDirs) == 0 && !o.FromPaths {
		l.AgentDirs = defaultAgentDirs(o.Explicit, files, o.Discover)
	}
	seenDir := map[string]bool{}
	for _, d := range l.AgentDirs {
		if abs, err := filepath.Abs(d); err == nil {
			if seenDir[abs] {
				continue
			}
			seenDir[abs] = true
		}
		if len(o.Agents) > 0 {
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				problem(fmt.Errorf("--agents %s: not a directory of subagent files", d))
				continue
			}
		}
		as, errs := settings.LoadAgentsDir(d)
		l.Agents = append(l.Agents, as...)
		for _, e := range errs {
			problem(e)
		}
	}
	if err := l.loadInventory(ctx, o, h, problem); err != nil {
		return nil, err
	}
	return l, nil
}

// noteHistorySettings notes a --history directory that is a Qwen home whose settings.json is
// not among the files read: --history only gives tool names, "audit DIR" audits that home.
func noteHistorySettings(h Hooks, history []string, files []*settings.File) {
	for _, d := range history {
		in, err := settings.InputsOf(d)
		if err != nil || in.Role != settings.RoleHome || in.Settings == "" {
			continue
		}
		if slices.ContainsFunc(files, func(f *settings.File) bool { return fileio.SameFile(f.Path, in.Settings) }) {
			continue
		}
		h.Note(fmt.Sprintf("note: --history %s reads only its session history, not %s; to audit that home's settings run: sessionfix audit %s",
			reports.Printable(d), reports.Printable(in.Settings), reports.Printable(reports.ShellQuote(d))))
	}
}

// defaultAgentDirs: Qwen Code's agent directories when the scopes were discovered, else
// .qwen/agents next to every user or workspace settings file given.
func defaultAgentDirs(explicit bool, files []*settings.File, dopts settings.DiscoverOptions) []string {
	if !explicit {
		return settings.AgentDirs(dopts)
	}
	var dirs []string
	for _, f := range files {
		if f.Scope == settings.ScopeUser || f.Scope == settings.ScopeWorkspace {
			d := filepath.Join(filepath.Dir(f.Path), "agents")
			if !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// loadInventory reads --inventory, runs --discover, or infers the tools.
func (l *Loaded) loadInventory(ctx context.Context, o LoadOptions, h Hooks, problem func(error)) error {
	merged := l.Merged
	switch {
	case o.Inventory != "":
		inv, err := mcpinventory.Load(o.Inventory)
		if err != nil {
			return err
		}
		l.Inventory, l.InventoryFrom = inv, "file "+o.Inventory
	case o.DiscoverTools:
		if len(merged.MCPServers) == 0 {
			h.Note("--discover: the settings configure no MCP server")
		}
		inv, errs, err := h.ListTools(ctx, settings.Servers(merged.MCPServers))
		if err != nil {
			return err
		}
		for _, k := range inv.Keys() {
			h.Progress(fmt.Sprintf("discover: %s: %s", reports.Printable(strconv.Quote(k)), reports.Plural(len(inv.Servers[k].Tools), "tool")))
		}
		for _, e := range errs {
			problem(e)
		}
		l.Inventory, l.InventoryFrom = inv, "discovered"
	default:
		seen := l.historyNames(ctx, o, h, problem)
		l.Inventory = mcpinventory.Infer(settings.Servers(merged.MCPServers), seen)
		n := 0
		for _, s := range l.Inventory.Servers {
			n += len(s.Tools)
		}
		l.InventoryFrom = "inferred"
		h.Note(fmt.Sprintf("note: no --inventory or --discover: %s of %s inferred from settings and %s in session history; rows say inventory=inferred",
			reports.Plural(n, "tool"), reports.Plural(len(l.Inventory.Servers), "server"), reports.Plural(len(seen), "name")))
	}
	return nil
}

// historyNames returns the distinct tool names stored in the session history (read-only
// scan of o.History, default Qwen Code's runtime directory unless o.FromPaths; a missing
// default directory is no history).
func (l *Loaded) historyNames(ctx context.Context, o LoadOptions, h Hooks, problem func(error)) []string {
	roots := o.History
	if len(roots) == 0 && o.FromPaths {
		return nil
	}
	if len(roots) == 0 {
		def := Root(agent.Env{Getenv: o.Getenv, Home: o.Discover.Home})
		if _, err := os.Stat(def); err != nil {
			return nil
		}
		roots = []string{def}
	}
	names, errs := h.StoredNames(ctx, roots)
	for _, e := range errs {
		problem(e)
	}
	return oldSpellings(names, h, problem)
}

// oldSpellings reads each stored name as it was before a sessionfix fix run renamed it (the
// run's recorded old → new, Hooks.Renames; issue 23 item 2: after a repair the stored names are
// hashed provider-safe names whose raw identity cannot be read back, and the audit must find
// what it found before the repair), and notes the hashed names no run records: their raw
// tools are unknown, not audited, and the note says which input tells them.
func oldSpellings(names []string, h Hooks, problem func(error)) []string {
	var rn *agent.Renames
	if h.Renames != nil {
		var errs []error
		rn, errs = h.Renames()
		for _, e := range errs {
			problem(e)
		}
	}
	var out, unknown []string
	seen := map[string]bool{}
	renamed := 0
	for _, n := range names {
		old := rn.OldNames(n)
		if old[0] != n {
			renamed++
		} else if mcpname.HasPrefix(n) && mcpname.HasHashSuffix(n) {
			unknown = append(unknown, n)
		}
		for _, o := range old {
			if !seen[o] {
				seen[o] = true
				out = append(out, o)
			}
		}
	}
	if renamed > 0 {
		h.Note(fmt.Sprintf("note: %s of the session history read as spelled before sessionfix renamed them (%s)", reports.Plural(renamed, "stored name"), rn.From()))
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		where := "no fix run of the state directory records them"
		if rn != nil && rn.StateDir != "" {
			where = "no fix run of " + rn.StateDir + " records them"
		}
		h.Note(fmt.Sprintf("INCOMPLETE: %s of the session history %s hashed provider-safe (%s), written by Qwen Code 0.24.4 or later or by a sessionfix fix run; %s, so their raw tools cannot be read back and are not audited: pass --inventory FILE or --discover, or --state-dir DIR of the fix run that wrote them",
			reports.Plural(len(unknown), "stored name"), isAre(len(unknown)), strings.Join(unknown, ", "), where))
	}
	return out
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// Loaded is what a Qwen Code audit read, besides the evaluation: the settings and subagent
// files, the inventory and where it came from, and the inputs that could not be used.
type Loaded struct {
	Files  []*settings.File
	Merged *settings.Merged // the files merged in Qwen Code's scope order
	// AgentDirs are the subagent directories looked at; Agents the subagent files read.
	AgentDirs []string
	Agents    []*settings.Agent
	Inventory *mcpinventory.Inventory
	// InventoryFrom says where the tools came from: "file PATH", "discovered" or "inferred".
	InventoryFrom string
	// Problems are the inputs that could not be used (an error's text each; also written into
	// the report, so a saved report never looks complete when it is not).
	Problems []string
}

// Read are the paths of every file the audit read (the reports must not be written over
// them); inventory is the --inventory file ("" without).
func (l *Loaded) Read(inventory string) []string {
	read := []string{inventory}
	for _, f := range l.Files {
		read = append(read, f.Path)
	}
	for _, a := range l.Agents {
		read = append(read, a.Path)
	}
	return read
}

// FileList names the settings files read with their scopes, and the subagent files
// ("none found" without settings): for the report's header and the summary.
func (l *Loaded) FileList() string { return fileList(l.Files) + agentList(l.Agents) }

func fileList(files []*settings.File) string {
	if len(files) == 0 {
		return "none found"
	}
	parts := make([]string, len(files))
	for i, f := range files {
		parts[i] = f.Path + " (" + string(f.Scope) + ")"
	}
	return strings.Join(parts, ", ")
}

func agentList(agents []*settings.Agent) string {
	if len(agents) == 0 {
		return ""
	}
	parts := make([]string, len(agents))
	for i, a := range agents {
		parts[i] = a.Path
	}
	return "; subagents: " + strings.Join(parts, ", ")
}
