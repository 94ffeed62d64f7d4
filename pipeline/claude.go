package pipeline

import (
	"context"

	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/store/agent"
	"github.com/sessionfix/sessionfix/store/claude"
)

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
// server keys of its global config, its projects' .mcp.json, h.MCPJSON and the --mcp-config
// files of o.AgentOptions; the o.Inventory tools and, with o.Discover, the tools those servers
// list; version is the Claude Code release whose names are current. Problems are files that
// could not be read.
func ClaudeHomePolicy(ctx context.Context, env Env, o Options, version string, h ClaudeHome) (claude.ClaudePolicy, []ProblemRow, error) {
	vals := agent.Values{claude.VersionOption: {version}}
	for k, v := range o.AgentOptions {
		if k != claude.VersionOption {
			vals[k] = v
		}
	}
	ain := agent.PrepareInput{Env: env.agent(), InventoryFile: o.Inventory, Vars: env.settings(), Options: vals}
	if o.Inventory != "" {
		f, err := mcpinventory.Load(o.Inventory)
		if err != nil {
			return claude.ClaudePolicy{}, nil, err
		}
		ain.InventoryTools = inventoryTools(f)
	}
	if o.Discover {
		ain.Discover = discoverer(env)
	}
	in, err := claude.Input(ain)
	if err != nil {
		return claude.ClaudePolicy{}, nil, err
	}
	ph := claude.PolicyHome{Dir: h.Dir, FromEnv: h.FromEnv, Config: h.Config, NoConfig: h.NoConfig, MCPJSON: h.MCPJSON}
	pol, _, problems, err := claude.HomePolicy(ctx, in, ph)
	if err != nil {
		return claude.ClaudePolicy{}, nil, err
	}
	return pol, problemRows(problems), nil
}
