package pipeline

import (
	"context"

	"github.com/sessionfix/sessionfix/inventory"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/scan"
	"github.com/sessionfix/sessionfix/store/agent"
	"github.com/sessionfix/sessionfix/store/claude"
)

// claudeResult is the Claude policy of a run (one per Claude Code home) and its problems.
type claudeResult struct {
	pol      claude.ClaudePolicy
	byPath   map[string]*claude.ClaudePolicy
	problems []ProblemRow
	info     []*ClaudeInfo
}

// claudePolicy gathers what the Claude Code namer needs once discovery found some Claude Code
// session: claude.Prepare over the homes the sessions lie in (claude.GroupByHome: a copied
// ~/.claude is planned with the claude.json beside it; a session in no such directory with the
// environment's, $CLAUDE_CONFIG_DIR else ~/.claude), with the flag sources read once.
func claudePolicy(ctx context.Context, env Env, po Options, found *scan.Found) (claudeResult, error) {
	var res claudeResult
	homes := claude.GroupByHome(foundStores(found), found.Lexical, claude.Home(env.Getenv, env.Home))
	if len(homes) == 0 {
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
	p, err := claude.Prepare(ctx, claudeInput(env, po, version, src), homes)
	if err != nil {
		return res, err
	}
	res.pol, res.byPath, res.problems = p.Default, p.ByPath, problemRows(p.Problems)
	for _, i := range p.Info {
		ci := ClaudeInfo(*i)
		res.info = append(res.info, &ci)
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
	for _, f := range po.MCPConfigs {
		servers, err := claude.ReadMCPConfig(f, env.settings())
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

// claudeInput is the claude.PrepareInput of a run: the flag sources, the environment and,
// with --discover, inventory's MCP client.
func claudeInput(env Env, po Options, version string, src claudeFlagSources) claude.PrepareInput {
	in := claude.PrepareInput{Getenv: env.Getenv, UserHome: env.Home, Version: version, AllowShared: po.AllowShared,
		MCPConfigs: src.mcpConfigs, InventoryFile: po.Inventory, InventoryTools: src.tools, Env: env.settings()}
	if po.Discover {
		in.Discover = discoverer(env)
	}
	return in
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
	ph := claude.PolicyHome{Dir: h.Dir, FromEnv: h.FromEnv, Config: h.Config, NoConfig: h.NoConfig, MCPJSON: h.MCPJSON}
	pol, _, problems, err := claude.HomePolicy(ctx, claudeInput(env, o, version, src), ph)
	if err != nil {
		return claude.ClaudePolicy{}, nil, err
	}
	return pol, problemRows(problems), nil
}
