package claude

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
)

// ClaudeToolsInput is what the Claude Code audit's tool list is built from.
type ClaudeToolsInput struct {
	// Inventory is --inventory ("" without); Discover is --discover; MCPConfigs are
	// --mcp-config files; Now is the release whose names are current.
	Inventory  string
	Discover   bool
	MCPConfigs []string
	Now        string
	// Home is the audited ~/.claude (PolicyHome.Dir, "" when none), FromEnv whether it is
	// the environment's; Global the ~/.claude.json read ("" when none); Project the project key.
	Home    string
	FromEnv bool
	Global  string
	Project string
	// MCPJSON are the audited project's .mcp.json files.
	MCPJSON []string
}

// ClaudeToolList is the audit's tool list and what it says about itself.
type ClaudeToolList struct {
	Tools []mcpname.ClaudeTool
	// From says where the tools came from, with counts ("file tools.json (3 tools), …").
	From string
	// Incomplete are server keys known without any tool; Unknown the MCP names stored in the
	// sessions that no tool of the list has (both not audited, and noted).
	Incomplete []string
	Unknown    []string
}

// ClaudeTools builds the Claude Code audit's tool list (raw server key + raw tool) the way the
// Claude Code repair finds raw identities (HomePolicy, ClaudeRawTools): the MCP
// server keys of ~/.claude.json (top-level and per-project mcpServers), of each project's
// .mcp.json and of the audited project's, and of every --mcp-config file; with --discover the
// tools those servers list; the attributionMcpServer/attributionMcpTool pairs of the project's
// sessions and the raw tools their stored names spell under those keys (names written before
// tools were normalized). --inventory wins where given: a server it lists has exactly its
// tools. Order: --inventory, discovered, then from the sessions (the first of two tools sharing
// a name answers). problem receives files that could not be read; note the INCOMPLETE notes
// (servers known by key only, stored names no tool has). No tool at all is a usage error.
// The engine's part (environment, $VAR values, the MCP client of --discover) is e.
func ClaudeTools(ctx context.Context, e agent.AuditEngine, in ClaudeToolsInput, problem func(error), note func(string)) (*ClaudeToolList, error) {
	pol, err := toolsPolicy(ctx, e, in, problem)
	if err != nil {
		return nil, err
	}
	b := &toolBuilder{out: &ClaudeToolList{}, seen: map[mcpname.ClaudeTool]bool{}, inFile: map[string]bool{}, counts: map[string]int{}}
	var file *mcpinventory.Inventory
	if in.Inventory != "" {
		if file, err = mcpinventory.Load(in.Inventory); err != nil {
			return nil, err
		}
		for _, k := range file.Keys() {
			b.inFile[k] = true
			for _, t := range file.Servers[k].Tools {
				b.add(mcpname.ClaudeTool{Server: k, Tool: t.Name}, "inventory")
			}
		}
	}
	for _, t := range pol.Tools { // --discover
		b.add(t, "discover")
	}
	rn := renames(e, problem)
	snaps, renamed, err := b.sessionTools(ctx, in, pol, rn, problem)
	if err != nil {
		b.out.unknownNames(snaps, note)
		return nil, err
	}
	b.out.From = b.from(in, file != nil, rn, len(renamed), note)
	b.keyOnly(pol, note)
	b.out.unknownNames(snaps, note)
	if len(b.out.Tools) == 0 {
		return nil, usage.Errorf("audit --agent claude: no MCP tool known (none in the sessions' names and attributionMcpServer/Tool under the configured server keys): pass --inventory FILE ({\"servers\": {\"<key>\": {\"tools\": [\"<raw tool>\", …]}}}), --mcp-config FILE or --discover")
	}
	return b.out, nil
}

// toolsPolicy is the audited home's policy as the repair builds it (Input, HomePolicy): its
// server keys and, with --discover, the tools its servers list; the files that could not be
// read go to problem.
func toolsPolicy(ctx context.Context, e agent.AuditEngine, in ClaudeToolsInput, problem func(error)) (ClaudePolicy, error) {
	ain := agent.PrepareInput{Env: e.Env, Vars: e.Vars, Options: agent.Values{VersionOption: {in.Now}, MCPConfigOption: in.MCPConfigs}}
	if in.Discover {
		ain.Discover = e.Discover
	}
	pin, err := Input(ain)
	if err != nil {
		return ClaudePolicy{}, err
	}
	h := PolicyHome{Dir: in.Home, FromEnv: in.FromEnv, Config: in.Global, NoConfig: in.Global == "", MCPJSON: in.MCPJSON}
	pol, _, problems, err := HomePolicy(ctx, pin, h)
	if err != nil {
		return ClaudePolicy{}, err
	}
	for _, p := range problems {
		problem(fmt.Errorf("%s: %s", p.Path, p.Reason))
	}
	return pol, nil
}

// renames are the renames the fix runs of the state directory recorded (nil: none known; the
// errors met go to problem).
func renames(e agent.AuditEngine, problem func(error)) *agent.Renames {
	if e.Renames == nil {
		return nil
	}
	rn, errs := e.Renames()
	for _, err := range errs {
		problem(err)
	}
	return rn
}

// toolBuilder gathers the tool list: each tool once, in the order added, counted per source
// (inventory, discover, attribution, stored names); a server --inventory lists has exactly
// its tools there (inFile).
type toolBuilder struct {
	out    *ClaudeToolList
	seen   map[mcpname.ClaudeTool]bool
	inFile map[string]bool
	counts map[string]int
}

func (b *toolBuilder) add(t mcpname.ClaudeTool, from string) {
	if b.seen[t] || (b.inFile[t.Server] && from != "inventory") {
		return
	}
	b.seen[t] = true
	b.out.Tools = append(b.out.Tools, t)
	b.counts[from]++
}

// sessionTools adds the tools of the project's sessions (every project's when its folder is
// not there): attributionMcpServer/Tool pairs and the raw tools their stored names spell under
// the configured keys, each stored name read as it was before a sessionfix fix run renamed it
// (issue 23 item 2; renamed: the names so read). A session that cannot be read goes to
// problem; err is ctx's when it ended.
func (b *toolBuilder) sessionTools(ctx context.Context, in ClaudeToolsInput, pol ClaudePolicy, rn *agent.Renames, problem func(error)) ([]*store.Snapshot, map[string]bool, error) {
	renamed := map[string]bool{}
	var snaps []*store.Snapshot
	if in.Home == "" {
		return nil, renamed, nil
	}
	root := filepath.Join(in.Home, "projects")
	if in.Project != "" {
		if d := ProjectDir(root, in.Project); d != "" {
			root = d
		}
	}
	var files []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	for _, f := range files {
		snap, err := OpenSession(f).Scan(ctx, store.ScanOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return snaps, renamed, ctx.Err()
			}
			problem(fmt.Errorf("session %s: %w; its tools are not in the audit", f, err))
			continue
		}
		oldSpellings(snap, rn, renamed)
		snaps = append(snaps, snap)
		for _, ft := range ClaudeRawTools(snap, pol) {
			switch {
			case strings.HasPrefix(ft.Source, "attributionMcp"):
				b.add(ft.ClaudeTool, "attribution")
			case strings.HasPrefix(ft.Source, "server key "):
				b.add(ft.ClaudeTool, "stored names")
			}
		}
	}
	return snaps, renamed, nil
}

// from says where the tools came from, with counts (ClaudeToolList.From); with tools read from
// stored names and no rename known it notes that a repaired session would read as another tool.
func (b *toolBuilder) from(in ClaudeToolsInput, file bool, rn *agent.Renames, renamed int, note func(string)) string {
	var parts []string
	if file {
		parts = append(parts, fmt.Sprintf("file %s (%s)", in.Inventory, reports.Plural(b.counts["inventory"], "tool")))
	}
	if in.Discover {
		parts = append(parts, fmt.Sprintf("--discover (%s)", reports.Plural(b.counts["discover"], "tool")))
	}
	if n := b.counts["attribution"]; n > 0 {
		parts = append(parts, fmt.Sprintf("attributionMcpServer/Tool of the sessions (%s)", reports.Plural(n, "tool")))
	}
	if n := b.counts["stored names"]; n > 0 {
		parts = append(parts, fmt.Sprintf("stored names of the sessions under the configured server keys (%s)", reports.Plural(n, "tool")))
	}
	if renamed > 0 {
		parts = append(parts, fmt.Sprintf("%s read as spelled before sessionfix renamed them (%s)", reports.Plural(renamed, "stored name"), rn.From()))
	}
	if n := b.counts["stored names"]; n > 0 && (rn == nil || len(rn.Old) == 0) {
		// The raw tool read from a stored name is the one the release that wrote the line
		// would have named so: a name sessionfix fix rewrote reads as another tool unless its
		// run is known (issue 23 item 2).
		dir := "the state directory"
		if rn != nil && rn.StateDir != "" {
			dir = rn.StateDir
		}
		note(fmt.Sprintf("note: %s read from the sessions' stored names under the configured server keys, as the release that wrote each line spelled them; no fix run of %s records a rename, so a name sessionfix fix rewrote elsewhere would read as another tool: if these sessions were repaired, give --state-dir DIR of that run, or --inventory FILE or --discover",
			reports.Plural(n, "tool"), dir))
	}
	return strings.Join(parts, ", ")
}

// keyOnly notes the servers known by key only (no tool of theirs in the list): Incomplete.
func (b *toolBuilder) keyOnly(pol ClaudePolicy, note func(string)) {
	has := map[string]bool{}
	for _, t := range b.out.Tools {
		has[t.Server] = true
	}
	keySource := map[string]string{}
	var bare []string
	for _, k := range pol.Keys {
		if _, ok := keySource[k.Key]; !ok && !has[k.Key] {
			keySource[k.Key] = k.Source
			bare = append(bare, k.Key)
		}
	}
	for _, k := range bare {
		b.out.Incomplete = append(b.out.Incomplete, k)
		note(fmt.Sprintf("INCOMPLETE: MCP server %q (%s) is known by its key only: no tool of it is in --inventory, --discover or the sessions, so its tools are not audited (pass --inventory or --discover)", k, keySource[k]))
	}
}

// oldSpellings gives each name site of snap that a sessionfix fix run wrote the name it
// replaced (rn: the runs' renames; a name two old names now share gets a site per old name),
// recording the names so read in renamed: the audit then finds the raw identities the names
// had before the repair, as it did before it (issue 23 item 2). The snapshot is the audit's
// own read-only copy; nothing is written.
func oldSpellings(snap *store.Snapshot, rn *agent.Renames, renamed map[string]bool) {
	if rn == nil || len(rn.Old) == 0 {
		return
	}
	var extra []store.Site
	for i := range snap.Sites {
		site := &snap.Sites[i]
		old := rn.Old[site.Name]
		if len(old) == 0 {
			continue
		}
		renamed[site.Name] = true
		for _, o := range old[1:] {
			c := *site
			c.Name, c.Units = o, nil
			extra = append(extra, c)
		}
		site.Name, site.Units = old[0], nil
	}
	snap.Sites = append(snap.Sites, extra...)
}

// unknownNames notes the MCP names stored in the sessions (sites Claude Code resends, not free
// text) that no tool of the list has in any naming era: tools the sessions used that the audit
// cannot identify (a name whose tool part was normalized cannot be read back without the raw
// tool), so the list is incomplete.
func (l *ClaudeToolList) unknownNames(snaps []*store.Snapshot, note func(string)) {
	var unknown []string
	seen := map[string]bool{}
	for _, snap := range snaps {
		for _, site := range snap.Sites {
			nm := site.Name
			if site.ReadOnly || site.Kind == ClaudeSiteSelect || !mcpname.HasPrefix(nm) || seen[nm] {
				continue
			}
			seen[nm] = true
			found := false
			for _, e := range mcpname.ClaudeEras {
				if len(mcpname.ClaudeToolsNamed(e, nm, l.Tools)) > 0 {
					found = true
					break
				}
			}
			if !found {
				unknown = append(unknown, nm)
			}
		}
	}
	if len(unknown) == 0 {
		return
	}
	slices.Sort(unknown)
	l.Unknown = unknown
	note(fmt.Sprintf("INCOMPLETE: %s stored in the sessions name no tool of the list (%s): their raw tools are unknown and not audited (pass --mcp-config FILE, --inventory or --discover)",
		reports.Plural(len(unknown), "MCP name"), strings.Join(unknown, ", ")))
}
