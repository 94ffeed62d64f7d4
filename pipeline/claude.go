package pipeline

import (
	"context"

	"github.com/sessionfix/sessionfix/inventory"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/scan"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/agent"
	"github.com/sessionfix/sessionfix/store/claude"
	"github.com/sessionfix/sessionfix/store/qwen/settings"
)

// claudeResult is the Claude policy of a run (one per Claude Code home) and its problems.
type claudeResult struct {
	pol      claude.ClaudePolicy
	byPath   map[string]*claude.ClaudePolicy
	problems []ProblemRow
	info     []*ClaudeInfo
}

// claudeGroup is the sessions of one Claude Code home.
type claudeGroup struct {
	home     string
	fromEnv  bool
	sessions []string
	// config, when set, is the ~/.claude.json to read (audit --agent claude: --claude-json, or
	// the one beside a copy); mcpJSON are further .mcp.json files (the audited project's).
	config   string
	noConfig bool // read no ~/.claude.json (config is "")
	mcpJSON  []string
}

// claudeGroups sorts the discovered Claude Code sessions by the config directory each lies in
// (claude.GroupByHome: a copied ~/.claude is planned with the claude.json beside it); a session
// in no such directory is planned with the environment's ($CLAUDE_CONFIG_DIR, else ~/.claude).
func claudeGroups(env Env, found *scan.Found) []*claudeGroup {
	stores := make([]store.Store, len(found.Targets))
	for i, t := range found.Targets {
		stores[i] = t.Store
	}
	var out []*claudeGroup
	for _, h := range claude.GroupByHome(stores, found.Lexical, claude.Home(env.Getenv, env.Home)) {
		out = append(out, &claudeGroup{home: h.Home, fromEnv: h.FromEnv, sessions: h.Sessions})
	}
	return out
}

// claudePolicy gathers what the Claude Code namer needs once discovery found some Claude Code
// session: per home, the server keys of its global config (top-level and per-project
// mcpServers), of each of its projects' .mcp.json, and of every --mcp-config file; the
// --inventory tools and, with --discover, the tools the servers of those files list.
func claudePolicy(ctx context.Context, env Env, po Options, found *scan.Found) (claudeResult, error) {
	var res claudeResult
	groups := claudeGroups(env, found)
	if len(groups) == 0 {
		return res, nil
	}
	version := po.ClaudeVersion
	if version == "" {
		version = mcpname.ClaudeLatestVersion
	}
	if _, err := mcpname.ClaudeEraOf(version); err != nil {
		return res, usagef("--claude-version: %v", err)
	}
	src, err := loadClaudeFlagSources(po, env)
	if err != nil {
		return res, err
	}
	for _, g := range groups {
		pol, info, problems, err := claudeHomePolicy(ctx, env, po, version, g, src)
		if err != nil {
			return res, err
		}
		res.problems = append(res.problems, problems...)
		res.info = append(res.info, info)
		if len(groups) == 1 {
			res.pol = pol
			break
		}
		if res.byPath == nil {
			res.byPath = map[string]*claude.ClaudePolicy{}
		}
		p := pol
		for _, s := range g.sessions {
			res.byPath[s] = &p
		}
	}
	return res, nil
}

// claudeFlagSources are the raw-identity sources given by flags, the same for every home:
// the servers of each --mcp-config file and the --inventory file's tools.
type claudeFlagSources struct {
	mcpConfigs []claude.MCPConfig
	tools      []agent.Tool
}

func loadClaudeFlagSources(po Options, env Env) (claudeFlagSources, error) {
	var out claudeFlagSources
	parse := claudeParser(env.settings())
	for _, f := range po.MCPConfigs {
		servers, err := claude.ReadMCPConfig(f, parse)
		if err != nil {
			return out, err
		}
		out.mcpConfigs = append(out.mcpConfigs, claude.MCPConfig{Path: f, Servers: servers})
	}
	if po.Inventory != "" {
		f, err := inventory.Load(po.Inventory)
		if err != nil {
			return out, err
		}
		out.tools = inventoryTools(f)
	}
	return out, nil
}

// claudeHomePolicy is claude.HomePolicy of one home g with the flag sources, the settings
// parser and, with --discover, inventory's MCP client; its Info and problems as report rows.
func claudeHomePolicy(ctx context.Context, env Env, po Options, version string, g *claudeGroup, src claudeFlagSources) (claude.ClaudePolicy, *ClaudeInfo, []ProblemRow, error) {
	in := claude.PrepareInput{Getenv: env.Getenv, UserHome: env.Home, Version: version, AllowShared: po.AllowShared,
		MCPConfigs: src.mcpConfigs, InventoryFile: po.Inventory, InventoryTools: src.tools, Parse: claudeParser(env.settings())}
	if po.Discover {
		in.Discover = discoverer(env)
	}
	h := claude.PolicyHome{Dir: g.home, FromEnv: g.fromEnv, Sessions: len(g.sessions), Config: g.config, NoConfig: g.noConfig, MCPJSON: g.mcpJSON}
	pol, info, problems, err := claude.HomePolicy(ctx, in, h)
	if err != nil {
		return claude.ClaudePolicy{}, nil, nil, err
	}
	ci := ClaudeInfo(*info)
	return pol, &ci, problemRows(problems), nil
}

// claudeParser is claude.ParseServers with the settings parser (the same reading of
// "mcpServers" as Qwen Code's settings: env expansion over senv, secrets, transports).
func claudeParser(senv settings.Env) claude.ParseServers {
	return func(path string, data []byte) ([]agent.Server, error) {
		f, err := settings.Parse(path, data, settings.ScopeUser, senv)
		if err != nil {
			return nil, err
		}
		out := make([]agent.Server, len(f.MCPServers))
		for i, m := range f.MCPServers {
			out[i] = agentServer(m)
		}
		return out, nil
	}
}

// ClaudeHome is one Claude Code config directory to build a policy for (ClaudeHomePolicy).
type ClaudeHome struct {
	Dir string
	// FromEnv: the environment's home ($CLAUDE_CONFIG_DIR, else ~/.claude), whose global
	// config is claude.GlobalConfigPath.
	FromEnv bool
	// Config, when set, is the ~/.claude.json to read; NoConfig reads none. MCPJSON are
	// further .mcp.json files (an audited project's).
	Config   string
	NoConfig bool
	MCPJSON  []string
}

// ClaudeHomePolicy is the Claude Code policy of one home the way scan and fix build it: the
// server keys of its global config, its projects' .mcp.json, h.MCPJSON and o.MCPConfigs; the
// o.Inventory tools and, with o.Discover, the tools those servers list; version is the Claude
// Code release whose names are current. Problems are files that could not be read.
func ClaudeHomePolicy(ctx context.Context, env Env, o Options, version string, h ClaudeHome) (claude.ClaudePolicy, []ProblemRow, error) {
	src, err := loadClaudeFlagSources(o, env)
	if err != nil {
		return claude.ClaudePolicy{}, nil, err
	}
	g := &claudeGroup{home: h.Dir, fromEnv: h.FromEnv, config: h.Config, noConfig: h.NoConfig, mcpJSON: h.MCPJSON}
	pol, _, problems, err := claudeHomePolicy(ctx, env, o, version, g, src)
	return pol, problems, err
}
