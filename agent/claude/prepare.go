package claude

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// agentName is how messages about Claude Code's files name the program that reads them.
const agentName = "Claude Code"

// ParseServers reads the MCP servers of a Claude Code config's data ({"mcpServers": {<key>:
// {command, args, env, url, type, headers}}}: --mcp-config, .mcp.json, ~/.claude.json) in
// file order with the shared reader (mcpconfig.Parse: a file Claude Code's JSON.parse rejects
// is a *mcpconfig.ParseError at its line and column; a repeated key keeps the last
// definition). String values are $VAR / ${VAR} expanded over env (mcpconfig.Expand); the
// values are secrets that never reach any output. Warnings about single members are not
// reported (the servers are only started by --discover).
//
// origin is what mcpconfig.ReadFile said of the file (who owns it): every server gets it, and
// --discover starts none whose config another user owns or can write.
func ParseServers(path string, data []byte, origin mcpconfig.Origin, env mcpconfig.Env) ([]agent.Server, error) {
	return agent.ParseServers(agentName, path, data, origin, env)
}

// MCPConfig is one --mcp-config file and its servers (ReadMCPConfig).
type MCPConfig struct {
	Path    string
	Servers []agent.Server
}

// ReadMCPConfig reads the Claude Code MCP config at path (ParseServers). Errors are
// os.ReadFile's and ParseServers', unchanged.
func ReadMCPConfig(path string, env mcpconfig.Env) ([]agent.Server, error) {
	return agent.ReadServers(agentName, path, env)
}

// PolicyHome is one Claude Code config directory to build a policy for (HomePolicy).
type PolicyHome struct {
	Dir string
	// FromEnv: the environment's home ($CLAUDE_CONFIG_DIR, else ~/.claude), whose global
	// config is GlobalConfigPath.
	FromEnv bool
	// Sessions counts the session files planned with this home (Info.Sessions).
	Sessions int
	// Config, when set, is the ~/.claude.json to read; NoConfig reads none. MCPJSON are
	// further .mcp.json files (an audited project's).
	Config   string
	NoConfig bool
	MCPJSON  []string
}

// PrepareInput is what HomePolicy needs besides the home: the same for every home of a run.
type PrepareInput struct {
	Getenv func(string) string
	// UserHome is the user's home directory (~).
	UserHome string
	// Version is the Claude Code release whose names are current (--claude-version, checked).
	Version     string
	AllowShared bool
	// MCPConfigs are the --mcp-config files, read once (ReadMCPConfig), in flag order.
	MCPConfigs []MCPConfig
	// InventoryFile is --inventory ("" for none); InventoryTools are its tools.
	InventoryFile  string
	InventoryTools []agent.Tool
	// Env is the environment the servers' string values of a .mcp.json and, with Discover, of
	// the global config are expanded over (ParseServers; nil: nothing is expanded).
	Env mcpconfig.Env
	// Discover, when set (--discover), lists the tools of every configured server.
	Discover agent.Discover
}

// Info names, in every plan (text and JSON, the report's "claude" member), what the Claude
// Code sessions of one home were planned with.
type Info struct {
	// Home is the Claude Code config directory the sessions lie in (or the environment's).
	Home string `json:"home"`
	// Sessions counts the session files planned with this entry.
	Sessions int `json:"sessions"`
	// Version is the release whose names are current.
	Version string `json:"version"`
	// Config is the global config read (~/.claude.json, or the claude.json beside a copy);
	// "" when none.
	Config string `json:"config"`
	// KeySources lists every file that gave server keys, with how many ("mcp.json (4)").
	KeySources []string `json:"key_sources"`
	// Keys counts the distinct server keys.
	Keys int `json:"keys"`
	// Inventory lists the inventory sources (--inventory, --discover); empty when none.
	Inventory []string `json:"inventory"`
	// AllowShared is --allow-shared.
	AllowShared bool `json:"allow_shared"`
}

// Text is the plan's line about the Claude Code naming inputs of one home (the same whether
// the run planned one home or several).
func (ci *Info) Text(bool) string {
	s := fmt.Sprintf("Claude Code naming: names of %s", ci.Version)
	if ci.Config != "" {
		s += "; config " + ci.Config
	} else {
		s += "; no ~/.claude.json for " + ci.Home
	}
	if len(ci.KeySources) > 0 {
		s += fmt.Sprintf("; %d server keys from %s", ci.Keys, strings.Join(ci.KeySources, ", "))
	} else {
		s += "; no server key (pass --mcp-config FILE)"
	}
	if len(ci.Inventory) > 0 {
		s += "; inventory " + strings.Join(ci.Inventory, " and ")
	}
	if ci.AllowShared {
		s += "; --allow-shared"
	}
	return s
}

// HomePolicy is the Claude policy of one home h: the server keys of its global config
// (h.Config, else the one beside the home or the environment's; top-level and per-project
// mcpServers), of each of its projects' .mcp.json and of h.MCPJSON, and of in.MCPConfigs; the
// in.InventoryTools and, with in.Discover, the tools the servers of those files list.
// Problems are files that could not be read and servers that could not be listed (the run
// goes on); the error is a usage error (--discover with no server) or in.Discover's.
func HomePolicy(ctx context.Context, in PrepareInput, h PolicyHome) (ClaudePolicy, *Info, []agent.Problem, error) {
	var problems []agent.Problem
	pol := ClaudePolicy{Version: in.Version, AllowShared: in.AllowShared}
	info := &Info{Home: h.Dir, Sessions: h.Sessions, Version: in.Version, Inventory: []string{}, KeySources: []string{}, AllowShared: in.AllowShared}
	var servers []agent.Server
	cfgPath := ConfigFileOf(h.Dir)
	if h.FromEnv {
		cfgPath = GlobalConfigPath(in.Getenv, in.UserHome)
	}
	if h.Config != "" || h.NoConfig {
		cfgPath = h.Config
	}
	addKeys := func(keys []string, source string) {
		if len(keys) == 0 {
			return
		}
		for _, k := range keys {
			pol.Keys = append(pol.Keys, ClaudeKey{Key: k, Source: source})
		}
		info.KeySources = append(info.KeySources, fmt.Sprintf("%s (%d)", source, len(keys)))
	}
	// A .mcp.json: its servers (for --discover) and keys, once per file.
	readMCP := map[string]bool{}
	addMCPJSON := func(mcpJSON string) {
		if readMCP[mcpJSON] {
			return
		}
		readMCP[mcpJSON] = true
		ss, err := ReadMCPConfig(mcpJSON, in.Env)
		switch {
		case err == nil:
			servers = append(servers, ss...)
			var ks []string
			for _, s := range ss {
				ks = append(ks, s.Key)
			}
			addKeys(ks, mcpJSON)
		case !errors.Is(err, fs.ErrNotExist):
			problems = append(problems, agent.Problem{Path: mcpJSON, Severity: store.SevWarning, Reason: store.ErrReason(err) + "; its server keys are not used"})
		}
	}
	if cfgPath != "" {
		gc, err := LoadGlobalConfig(cfgPath)
		switch {
		case err == nil:
			info.Config = cfgPath
			addKeys(gc.Servers, cfgPath)
			for _, dir := range slices.Sorted(maps.Keys(gc.Projects)) {
				addKeys(gc.Projects[dir].Servers, fmt.Sprintf("%s projects[%q]", cfgPath, dir))
				addMCPJSON(filepath.Join(dir, ".mcp.json"))
			}
			if in.Discover != nil {
				if ss, err := ParseServers(cfgPath, gc.Data, gc.Origin, in.Env); err == nil {
					servers = append(servers, ss...)
				}
			}
		case errors.Is(err, fs.ErrNotExist):
		default:
			problems = append(problems, agent.Problem{Path: cfgPath, Severity: store.SevWarning, Reason: store.ErrReason(err) + "; its server keys are not used (pass --mcp-config)"})
		}
	}
	for _, mcpJSON := range h.MCPJSON {
		addMCPJSON(mcpJSON)
	}
	var flagServers []agent.Server
	for _, f := range in.MCPConfigs {
		for _, s := range f.Servers {
			pol.Keys = append(pol.Keys, ClaudeKey{Key: s.Key, Source: f.Path})
		}
		flagServers = append(flagServers, f.Servers...)
	}
	if len(flagServers) > 0 {
		for _, f := range in.MCPConfigs {
			n := 0 // a file given twice counts its keys twice, as they are in pol.Keys
			for _, g := range in.MCPConfigs {
				if g.Path == f.Path {
					n += len(g.Servers)
				}
			}
			info.KeySources = append(info.KeySources, fmt.Sprintf("--mcp-config %s (%d)", f.Path, n))
		}
	}
	tools, sources, toolProblems, err := agent.PolicyTools(ctx, agent.PolicyToolsInput{InventoryFile: in.InventoryFile, InventoryTools: in.InventoryTools,
		Discover: in.Discover, Servers: slices.Concat(flagServers, servers), Home: h.Dir, Agent: agentName, Hint: "pass --mcp-config FILE"})
	if err != nil {
		return ClaudePolicy{}, nil, nil, err
	}
	problems = append(problems, toolProblems...)
	if len(sources) > 0 {
		pol.Tools = rawTools(tools)
		pol.ToolsSource = strings.Join(sources, " and ")
		info.Inventory = sources
	}
	seen := map[string]bool{}
	for _, k := range pol.Keys {
		seen[k.Key] = true
	}
	info.Keys = len(seen)
	return pol, info, problems, nil
}

// rawTools are the distinct (server, tool) pairs of tools sorted by server key, then tool
// (the order of the inventory they used to be merged into); nil for none.
func rawTools(tools []agent.Tool) []mcpname.ClaudeTool {
	var out []mcpname.ClaudeTool
	for _, t := range tools {
		out = append(out, mcpname.ClaudeTool{Server: t.Server, Tool: t.Tool})
	}
	slices.SortFunc(out, func(a, b mcpname.ClaudeTool) int {
		return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(a.Tool, b.Tool))
	})
	return slices.Compact(out)
}

// Prepare is HomePolicy of each home (GroupByHome's, in its order; the global config is the one
// beside the home, or the environment's for a FromEnv home), bound to its sessions
// (agent.PrepareHomes: the Prepared, and the policy it puts under ID). The first error ends it.
func Prepare(ctx context.Context, in PrepareInput, homes []*HomeSessions) (agent.Prepared, *naming.PathPolicy[ClaudePolicy], error) {
	return agent.PrepareHomes(ID, homes, func(g *HomeSessions) (ClaudePolicy, *Info, []agent.Problem, error) {
		return HomePolicy(ctx, in, PolicyHome{Dir: g.Home, FromEnv: g.FromEnv, Sessions: len(g.Sessions)})
	})
}

// The options of Claude Code's policy (Agent.Options; VersionOption has no flag of scan and
// fix: the newest known release is current unless a caller such as audit passes one).
const (
	MCPConfigOption   = "mcp-config"
	AllowSharedOption = "allow-shared"
	VersionOption     = "claude-version"
)

// prepare is the Agent's Prepare hook: once discovery found Claude Code sessions, Prepare over
// the homes they lie in (GroupByHome: a copied ~/.claude is planned with the claude.json
// beside it; a session in no such directory with the environment's, $CLAUDE_CONFIG_DIR else
// ~/.claude), with each --mcp-config read once (a bad one is the error of the run) and the
// release checked (a usage error). Its policy is put under ID.
func prepare(ctx context.Context, in agent.PrepareInput) (agent.Prepared, error) {
	homes := GroupByHome(in.Stores, in.Lexical, Home(in.Env.Getenv, in.Env.Home))
	if len(homes) == 0 {
		return agent.Prepared{}, nil
	}
	pin, err := Input(in)
	if err != nil {
		return agent.Prepared{}, err
	}
	out, _, err := Prepare(ctx, pin, homes)
	return out, err
}

// Input is the PrepareInput of the neutral in: the release (VersionOption, default the newest
// known; a bad one is a usage error), --allow-shared, each --mcp-config file read once
// (ReadMCPConfig over in.Vars: an empty value is a usage error, a file that cannot be read an
// error naming the flag, ParseServers' errors unchanged), the inventory and the MCP client.
func Input(in agent.PrepareInput) (PrepareInput, error) {
	version := in.Options.String(VersionOption)
	if version == "" {
		version = mcpname.ClaudeLatestVersion
	}
	if _, err := mcpname.ClaudeEraOf(version); err != nil {
		return PrepareInput{}, usage.Errorf("--claude-version: %v", err)
	}
	out := PrepareInput{Getenv: in.Env.Getenv, UserHome: in.Env.Home, Version: version, AllowShared: in.Options.Bool(AllowSharedOption),
		InventoryFile: in.InventoryFile, InventoryTools: in.InventoryTools, Env: in.Vars, Discover: in.Discover}
	for _, f := range in.Options.Strings(MCPConfigOption) {
		if f == "" {
			return PrepareInput{}, usage.Errorf("--%s needs a file name; it was given an empty one", MCPConfigOption)
		}
		servers, err := ReadMCPConfig(f, in.Vars)
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			// os.ReadFile's: name the flag and the agent (ParseServers' errors name the file
			// and position already).
			return PrepareInput{}, fmt.Errorf("--%s: read %s MCP config: %w", MCPConfigOption, agentName, err)
		}
		if err != nil {
			return PrepareInput{}, err
		}
		out.MCPConfigs = append(out.MCPConfigs, MCPConfig{Path: f, Servers: servers})
	}
	return out, nil
}
