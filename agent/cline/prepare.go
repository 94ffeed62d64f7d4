package cline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	permcline "github.com/sessionfix/sessionfix/permission/cline"
	"github.com/sessionfix/sessionfix/store"
)

// Info is the plan's line (and the report's "cline" member) about one Cline data directory.
type Info struct {
	Dir string `json:"dir"`
	// Tasks and Sessions count the 2.x tasks and 3.x sessions of the run in Dir.
	Tasks    int `json:"tasks"`
	Sessions int `json:"sessions"`
	// Generation is the generation last used in Dir (3 when it holds sessions/).
	Generation int `json:"generation"`
	// Settings is the MCP settings file read ("" when none); Servers its server keys.
	Settings string   `json:"settings,omitempty"`
	Servers  []string `json:"servers"`
	// Tools counts the raw tools confirmed (--inventory, --discover); ToolsFrom names where from.
	Tools     int      `json:"tools"`
	ToolsFrom []string `json:"tools_from"`
	// Orphaned counts the 2.x tasks a 3.x install no longer reads; Newest the newest one's
	// date (YYYY-MM-DD, UTC).
	Orphaned int    `json:"orphaned_tasks"`
	Newest   string `json:"orphaned_newest,omitempty"`
}

// Text is the plan's line.
func (i *Info) Text(bool) string {
	s := fmt.Sprintf("Cline %s: %d 2.x task", i.Dir, i.Tasks)
	if i.Tasks != 1 {
		s += "s"
	}
	s += fmt.Sprintf(", %d 3.x session", i.Sessions)
	if i.Sessions != 1 {
		s += "s"
	}
	s += fmt.Sprintf("; %d MCP server", len(i.Servers))
	if len(i.Servers) != 1 {
		s += "s"
	}
	if len(i.ToolsFrom) == 0 {
		s += "; no inventory (2.x names are kept: confirm tools with --inventory)"
	} else {
		s += fmt.Sprintf("; %d tools from %s", i.Tools, strings.Join(i.ToolsFrom, " and "))
	}
	if i.Orphaned > 0 {
		s += fmt.Sprintf("; 3.x installed: %d 2.x tasks orphaned (newest %s; never moved, audit --agent cline lists them)", i.Orphaned, i.Newest)
	}
	return s
}

// SettingsPath is a data directory's MCP settings file.
func SettingsPath(dir string) string { return filepath.Join(dir, SettingsDir, MCPSettingsFile) }

// ReadSettings reads a data directory's MCP settings file: the approval view
// (permission/cline) and the servers' launch descriptions (for --discover; values are
// secrets). A missing file is no settings and no error (ok false).
func ReadSettings(path string, vars mcpconfig.Env) (set permcline.Settings, servers []agent.Server, ok bool, err error) {
	data, _, err := owner.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return set, nil, false, nil
	}
	if err != nil {
		return set, nil, false, err
	}
	if set, err = permcline.ParseSettings(data); err != nil {
		return set, nil, false, err
	}
	srv, _, err := mcpconfig.Parse(path, data, mcpconfig.Options{Agent: agentName, Expand: func(s string) string { return mcpconfig.Expand(s, vars, nil) }})
	if err != nil {
		return set, nil, false, err
	}
	for _, s := range srv {
		if p := set.Server(s.Key); p != nil && !p.Disabled {
			servers = append(servers, s)
		}
	}
	return set, servers, true, nil
}

// homes groups the Cline stores among stores by data directory, in order of first store.
func homes(stores []store.Store) (dirs []string, tasks, sessions map[string]int) {
	tasks, sessions = map[string]int{}, map[string]int{}
	for _, s := range stores {
		ref := s.Ref()
		if ref.Kind != KindTask && ref.Kind != KindSession {
			continue
		}
		d := HomeOf(ref.Path)
		if d == "" {
			d = filepath.Dir(ref.Path)
		}
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
		if ref.Kind == KindTask {
			tasks[d]++
		} else {
			sessions[d]++
		}
	}
	return dirs, tasks, sessions
}

// Prepare gathers the Cline policy once discovery found Cline stores: per data directory its
// settings/cline_mcp_settings.json, the raw tools of --inventory and, with --discover, of its
// enabled servers (the tools the user confirms for the 2.x repair); the orphaned 2.x tasks of
// a 3.x install (Info); what each generation offers for every known tool (Declared: check
// --provider checks those names), and a warning for a tool 2.x does not offer (over 64).
func Prepare(ctx context.Context, in agent.PrepareInput) (agent.Prepared, error) {
	dirs, tasks, sessions := homes(in.Stores)
	if len(dirs) == 0 {
		return agent.Prepared{}, nil
	}
	var res agent.Prepared
	pp := &naming.PathPolicy[Policy]{ByPath: map[string]*Policy{}}
	for _, dir := range dirs {
		info := &Info{Dir: dir, Tasks: tasks[dir], Sessions: sessions[dir], Generation: Generation(dir), Servers: []string{}, ToolsFrom: []string{}}
		set, servers, ok, err := ReadSettings(SettingsPath(dir), in.Vars)
		if err != nil {
			res.Problems = append(res.Problems, agent.Problem{Path: SettingsPath(dir), Severity: store.SevWarning, Reason: "Cline MCP settings not read: " + err.Error()})
		}
		if ok {
			info.Settings = SettingsPath(dir)
			for _, s := range set.Servers {
				info.Servers = append(info.Servers, s.Key)
			}
		}
		var tools []agent.Tool
		if in.InventoryFile != "" {
			tools = append(tools, in.InventoryTools...)
			info.ToolsFrom = append(info.ToolsFrom, "inventory "+in.InventoryFile)
		}
		if in.Discover != nil && len(servers) > 0 {
			found, serverErrs, err := in.Discover(ctx, servers)
			if err != nil {
				return res, err
			}
			for _, e := range serverErrs {
				res.Problems = append(res.Problems, agent.Problem{Path: SettingsPath(dir), Severity: store.SevWarning, Reason: "--discover: " + e.Error()})
			}
			tools = append(tools, found...)
			info.ToolsFrom = append(info.ToolsFrom, "--discover")
		}
		info.Tools = len(tools)
		pol := Policy{Source: strings.Join(info.ToolsFrom, " and ")}
		if len(info.ToolsFrom) > 0 {
			pol.Tools = append([]agent.Tool{}, tools...)
		}
		if o, err := FindOrphans(dir); err != nil {
			res.Problems = append(res.Problems, agent.Problem{Path: filepath.Join(dir, TasksDir), Severity: store.SevWarning, Reason: "Cline 2.x tasks not listed: " + err.Error()})
		} else if o != nil {
			info.Orphaned, info.Newest = len(o.Tasks), o.Newest.UTC().Format("2006-01-02")
		}
		decl, probs := declared(dir, info.Settings, set, tools)
		res.Declared = append(res.Declared, decl...)
		res.Problems = append(res.Problems, probs...)
		res.Info = append(res.Info, info)
		p := pol
		for _, s := range in.Stores {
			if d := HomeOf(s.Ref().Path); d == dir || (d == "" && filepath.Dir(s.Ref().Path) == dir) {
				pp.ByPath[s.Ref().Path] = &p
			}
		}
		if len(dirs) == 1 {
			pp.Default = pol
		}
	}
	res.SetPolicy = func(p *naming.Policy) { naming.SetAgent(p, ID, pp) }
	return res, nil
}

// placeholderUID stands for the uid Cline 2.x draws at every start (any "c" + 5 characters of
// [A-Za-z0-9]: a provider judges the name by its tool part).
const placeholderUID = "cXXXXX"

// ToolsOf are the raw tools a data directory's settings and the confirmed tools name: tools
// first, then each autoApprove entry not among them (settings order).
func ToolsOf(set permcline.Settings, tools []agent.Tool) []agent.Tool {
	out := slices.Clone(tools)
	for _, s := range set.Servers {
		for _, t := range s.AutoApprove {
			if !slices.Contains(out, agent.Tool{Server: s.Key, Tool: t}) {
				out = append(out, agent.Tool{Server: s.Key, Tool: t})
			}
		}
	}
	return out
}

// declared is what each Cline generation offers for every tool of ToolsOf (check --provider
// checks the names), and a warning per tool 2.x does not offer.
func declared(dir, settings string, set permcline.Settings, tools []agent.Tool) ([]agent.Declared, []agent.Problem) {
	where := settings
	if where == "" {
		where = SettingsPath(dir)
	}
	var out []agent.Declared
	var probs []agent.Problem
	const fix = "fix cannot help a live tool list: rename the tool at its server or disable it"
	for _, t := range ToolsOf(set, tools) {
		if s := set.Server(t.Server); s != nil && s.Disabled {
			continue
		}
		if n, ok := mcpname.Cline2Name(placeholderUID, t.Tool); ok {
			out = append(out, agent.Declared{Source: where, Release: "Cline 2.x", Server: t.Server, Tool: t.Tool, Name: n,
				Note: "the live tool list of every 2.x request (" + placeholderUID + " stands for the uid drawn at each start)", Fix: fix})
		} else {
			probs = append(probs, agent.Problem{Path: where, Severity: store.SevWarning,
				Reason: fmt.Sprintf("Cline 2.x does not offer %s/%s at all: <uid>0mcp0%s would be %d UTF-16 units, over %d (3.x offers it as %s)",
					t.Server, t.Tool, t.Tool, mcpname.Len(n), mcpname.ClineMaxLength, mcpname.Cline3Name(t.Server, t.Tool))})
		}
		out = append(out, agent.Declared{Source: where, Release: "Cline 3.x", Server: t.Server, Tool: t.Tool, Name: mcpname.Cline3Name(t.Server, t.Tool),
			Note: "the name 3.0.65 offers", Fix: fix})
	}
	return out, probs
}
