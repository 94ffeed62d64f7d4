package kilo

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	permkilo "github.com/sessionfix/sessionfix/permission/kilo"
	"github.com/sessionfix/sessionfix/store"
)

// Info is the plan's line (and the report's "kilo" member) about what the Kilo databases
// were planned with.
type Info struct {
	// Databases are the Kilo databases of the run.
	Databases []string `json:"databases"`
	// Configs are the config files read, in merge order.
	Configs []string `json:"configs"`
	// Servers are the configured MCP server keys.
	Servers []string `json:"servers"`
	// Tools counts the raw tools known (--inventory, --discover); ToolsFrom names where from.
	Tools     int      `json:"tools"`
	ToolsFrom []string `json:"tools_from"`
}

// Text is the plan's line: "Kilo naming: config F, G; 3 MCP servers; 11 tools from
// inventory X" (or "no inventory: over-long names are kept").
func (i *Info) Text(bool) string {
	s := "Kilo naming: no config"
	if len(i.Configs) > 0 {
		s = "Kilo naming: config " + strings.Join(i.Configs, ", ")
	}
	s += fmt.Sprintf("; %d MCP server", len(i.Servers))
	if len(i.Servers) != 1 {
		s += "s"
	}
	if len(i.ToolsFrom) == 0 {
		return s + "; no inventory (over-long names are kept: pass --inventory or --discover)"
	}
	return s + fmt.Sprintf("; %d tools from %s", i.Tools, strings.Join(i.ToolsFrom, " and "))
}

// kiloStores are the paths of the Kilo databases among stores (read with one of the Kilo
// profiles; detection has set it).
func kiloStores(stores []store.Store) []string {
	var out []string
	for _, s := range stores {
		if p, ok := s.(store.Profiled); ok && (p.ProfileName() == Profile.Name || p.ProfileName() == ProfileByName.Name) {
			out = append(out, s.Ref().Path)
		}
	}
	return out
}

// Prepare gathers the Kilo policy once discovery found Kilo databases: the configs (the global
// config directory's files, each session directory's .kilo/ files, then --kilo-config), the
// raw tools of --inventory and, with --discover, of the configs' enabled servers. It reports,
// as warnings, what Kilo's naming does to the configured tools: a name over 64 (strict
// providers reject the live tool list and history; fix cannot help while the tool is
// offered), two raw tools merged into one name, two server keys that sanitize alike, and a
// rule that reaches tools of several servers (permission/kilo.Covers). A --discover where no
// server could be listed is the error of the run.
func Prepare(ctx context.Context, in agent.PrepareInput) (agent.Prepared, error) {
	dbs := kiloStores(in.Stores)
	if len(dbs) == 0 {
		return agent.Prepared{}, nil
	}
	var res agent.Prepared
	paths := configPaths(ConfigDir(in.Env.Getenv, in.Env.Home))
	for _, db := range dbs {
		dirs, err := sessionDirs(ctx, db, in.SQLite)
		if err != nil {
			res.Problems = append(res.Problems, agent.Problem{Path: db, Severity: store.SevWarning, Reason: "the sessions' project directories could not be read (their .kilo/ configs are not read): " + store.ErrReason(err)})
		}
		for _, d := range dirs {
			paths = append(paths, configPaths(filepath.Join(d, ".kilo"))...)
		}
	}
	paths = append(paths, in.Options.Strings(ConfigOption)...)
	cfg, probs := ReadConfigs(slices.Compact(paths))
	res.Problems = append(res.Problems, probs...)
	for _, f := range in.Options.Strings(ConfigOption) {
		if !slices.Contains(cfg.Files, f) && !slices.ContainsFunc(probs, func(p agent.Problem) bool { return p.Path == f }) {
			return res, fmt.Errorf("--%s %s: no such file", ConfigOption, f)
		}
	}
	info := &Info{Databases: dbs, Configs: append([]string{}, cfg.Files...), Servers: cfg.Keys(), ToolsFrom: []string{}}
	var tools []agent.Tool
	if in.InventoryFile != "" {
		tools = append(tools, in.InventoryTools...)
		info.ToolsFrom = append(info.ToolsFrom, "inventory "+in.InventoryFile)
	}
	if in.Discover != nil {
		servers := cfg.enabledServers()
		if len(servers) == 0 {
			res.Problems = append(res.Problems, agent.Problem{Severity: store.SevWarning, Reason: "--discover: the Kilo configs name no enabled MCP server to list"})
		} else {
			found, serverErrs, err := in.Discover(ctx, servers)
			if err != nil {
				return res, err
			}
			for _, e := range serverErrs {
				res.Problems = append(res.Problems, agent.Problem{Severity: store.SevWarning, Reason: "--discover: " + e.Error()})
			}
			tools = append(tools, found...)
			info.ToolsFrom = append(info.ToolsFrom, "--discover")
		}
	}
	info.Tools = len(tools)
	pol := Policy{Source: strings.Join(info.ToolsFrom, " and ")}
	if len(info.ToolsFrom) > 0 {
		pol.Tools = append([]agent.Tool{}, tools...)
	}
	res.Problems = append(res.Problems, Findings(cfg, tools)...)
	res.Info = []agent.Info{info}
	res.SetPolicy = func(p *naming.Policy) {
		naming.SetAgent(p, ID, &naming.PathPolicy[Policy]{Default: pol})
	}
	return res, nil
}

// configPaths are the config files of one config directory, in merge order (ConfigNames).
func configPaths(dir string) []string {
	out := make([]string, len(ConfigNames))
	for i, n := range ConfigNames {
		out[i] = filepath.Join(dir, n)
	}
	return out
}

// sessionDirs are the distinct project directories of a Kilo database's sessions, sorted.
func sessionDirs(ctx context.Context, db string, opt sqlite.Options) ([]string, error) {
	var out []string
	err := sqlite.Read(ctx, db, opt, func(d *sqlite.DB) error {
		if !d.Has("session", "directory") {
			return nil
		}
		rows, err := d.Query(ctx, `SELECT DISTINCT directory FROM session WHERE directory IS NOT NULL ORDER BY 1`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return err
			}
			if filepath.IsAbs(s) {
				out = append(out, s)
			}
		}
		return rows.Err()
	})
	return out, err
}

// Findings are the warnings of what Kilo's naming does to the configured tools (cfg's servers
// and rules, tools the raw tools known; see Prepare), in this order: server keys that sanitize
// alike, names over 64, merged names, rules reaching several servers.
func Findings(cfg *Config, tools []agent.Tool) []agent.Problem {
	var out []agent.Problem
	where := ""
	if len(cfg.Files) > 0 {
		where = cfg.Files[len(cfg.Files)-1]
	}
	fileOf := func(key string) string {
		for _, s := range cfg.Servers {
			if s.Key == key {
				return s.File
			}
		}
		return where
	}
	warn := func(path, format string, args ...any) {
		out = append(out, agent.Problem{Path: path, Severity: store.SevWarning, Reason: fmt.Sprintf(format, args...)})
	}
	bySan := map[string][]string{}
	var order []string
	for _, k := range cfg.Keys() {
		s := mcpname.KiloSanitize(k)
		if bySan[s] == nil {
			order = append(order, s)
		}
		bySan[s] = append(bySan[s], k)
	}
	for _, s := range order {
		if ks := bySan[s]; len(ks) > 1 {
			warn(fileOf(ks[0]), "Kilo MCP servers %s %s name their tools %s_<tool>: a tool both list is offered once (the later server's answers) and a rule written for one covers the other", strings.Join(ks, " and "), map[bool]string{true: "both", false: "all"}[len(ks) == 2], s)
		}
	}
	pt := make([]permkilo.Tool, len(tools))
	for i, t := range tools {
		pt[i] = permkilo.Tool{Server: t.Server, Tool: t.Tool}
	}
	outs := permkilo.Outcomes(pt, permkilo.BuildDefaults, cfg.Rules)
	for _, o := range outs {
		if o.OverLong && !o.Shadowed {
			warn(fileOf(o.Tool.Server), "Kilo offers %s/%s as %s (%d UTF-16 units): providers with a 64 limit reject every request while it is offered, and any stored call of it; fix cannot help the live tool list: shorten the tool's name at its server or disable the tool",
				o.Tool.Server, o.Tool.Tool, o.Name, mcpname.Len(o.Name))
		}
	}
	for _, o := range outs {
		if o.Shadowed {
			warn(fileOf(o.Tool.Server), "Kilo names %s/%s and %s/%s both %s: one tool is offered and %s/%s (registered later) answers; %s/%s cannot be called",
				o.Tool.Server, o.Tool.Tool, o.Answers.Server, o.Answers.Tool, o.Name, o.Answers.Server, o.Answers.Tool, o.Tool.Server, o.Tool.Tool)
		}
	}
	for _, c := range permkilo.Covers(cfg.Rules, pt) {
		ts := make([]string, len(c.Tools))
		for i, t := range c.Tools {
			ts[i] = t.Server + "/" + t.Tool
		}
		f := cfg.RuleFile[c.Rule.Permission]
		if f == "" {
			f = where
		}
		warn(f, "Kilo permission rule %q: %q reaches %s (servers %s) through the name%s %s",
			c.Rule.Permission, c.Rule.Action, strings.Join(ts, ", "), strings.Join(c.Servers, ", "), plural(len(c.Names)), strings.Join(c.Names, ", "))
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
