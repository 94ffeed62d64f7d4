package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
// the servers of each --mcp-config file and the --inventory file.
type claudeFlagSources struct {
	keys    []claude.ClaudeKey
	servers []settings.MCPServer
	file    *inventory.Inventory
}

func loadClaudeFlagSources(po Options, env Env) (claudeFlagSources, error) {
	var out claudeFlagSources
	senv := env.settings()
	var flagKeys []claude.ClaudeKey
	var flagServers []settings.MCPServer
	for _, f := range po.MCPConfigs {
		servers, err := loadClaudeMCPConfig(f, senv)
		if err != nil {
			return out, err
		}
		flagServers = append(flagServers, servers...)
		for _, s := range servers {
			flagKeys = append(flagKeys, claude.ClaudeKey{Key: s.Key, Source: f})
		}
	}
	if po.Inventory != "" {
		f, err := inventory.Load(po.Inventory)
		if err != nil {
			return out, err
		}
		out.file = f
	}
	out.keys, out.servers = flagKeys, flagServers
	return out, nil
}

// claudeHomePolicy is the Claude policy of one home g: the server keys of its global config
// (g.config, else the one beside the home or the environment's; top-level and per-project
// mcpServers), of each of its projects' .mcp.json and of g.mcpJSON, and of the flag sources;
// the --inventory tools and, with --discover, the tools the servers of those files list.
// Problems are files that could not be read (reported, the run goes on).
func claudeHomePolicy(ctx context.Context, env Env, po Options, version string, g *claudeGroup, src claudeFlagSources) (claude.ClaudePolicy, *ClaudeInfo, []ProblemRow, error) {
	var problems []ProblemRow
	senv := env.settings()
	flagKeys, flagServers, file := src.keys, src.servers, src.file
	{
		pol := claude.ClaudePolicy{Version: version, AllowShared: po.AllowShared}
		info := &ClaudeInfo{Home: g.home, Sessions: len(g.sessions), Version: version, Inventory: []string{}, KeySources: []string{}, AllowShared: po.AllowShared}
		var servers []settings.MCPServer
		cfgPath := claude.ConfigFileOf(g.home)
		if g.fromEnv {
			cfgPath = claude.GlobalConfigPath(env.Getenv, env.Home)
		}
		if g.config != "" || g.noConfig {
			cfgPath = g.config
		}
		addKeys := func(keys []string, source string) {
			if len(keys) == 0 {
				return
			}
			for _, k := range keys {
				pol.Keys = append(pol.Keys, claude.ClaudeKey{Key: k, Source: source})
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
			ss, err := loadClaudeMCPConfig(mcpJSON, senv)
			switch {
			case err == nil:
				servers = append(servers, ss...)
				var ks []string
				for _, s := range ss {
					ks = append(ks, s.Key)
				}
				addKeys(ks, mcpJSON)
			case !errors.Is(err, fs.ErrNotExist):
				problems = append(problems, ProblemRow{Path: mcpJSON, Severity: string(store.SevWarning), Reason: ErrReason(err) + "; its server keys are not used"})
			}
		}
		if cfgPath != "" {
			gc, err := claude.LoadGlobalConfig(cfgPath)
			switch {
			case err == nil:
				info.Config = cfgPath
				addKeys(gc.Servers, cfgPath)
				for _, dir := range slices.Sorted(maps.Keys(gc.Projects)) {
					addKeys(gc.Projects[dir].Servers, fmt.Sprintf("%s projects[%q]", cfgPath, dir))
					addMCPJSON(filepath.Join(dir, ".mcp.json"))
				}
				if po.Discover {
					if f, err := settings.Parse(cfgPath, gc.Data, settings.ScopeUser, senv); err == nil {
						servers = append(servers, f.MCPServers...)
					}
				}
			case errors.Is(err, fs.ErrNotExist):
			default:
				problems = append(problems, ProblemRow{Path: cfgPath, Severity: string(store.SevWarning), Reason: ErrReason(err) + "; its server keys are not used (pass --mcp-config)"})
			}
		}
		for _, mcpJSON := range g.mcpJSON {
			addMCPJSON(mcpJSON)
		}
		if len(flagKeys) > 0 {
			pol.Keys = append(pol.Keys, flagKeys...)
			for _, f := range po.MCPConfigs {
				n := 0
				for _, k := range flagKeys {
					if k.Source == f {
						n++
					}
				}
				info.KeySources = append(info.KeySources, fmt.Sprintf("--mcp-config %s (%d)", f, n))
			}
		}
		inv := inventory.New()
		var sources []string
		if file != nil {
			inv.Merge(file)
			sources = append(sources, po.Inventory)
		}
		if po.Discover {
			all := append(slices.Clone(flagServers), servers...)
			if len(all) == 0 {
				return claude.ClaudePolicy{}, nil, nil, usagef("--discover: no Claude Code MCP server configured for %s (pass --mcp-config FILE)", g.home)
			}
			as := make([]agent.Server, len(all))
			for i, s := range all {
				as[i] = agentServer(s)
			}
			d, errs, err := discoverServers(ctx, env, as)
			if err != nil {
				return claude.ClaudePolicy{}, nil, nil, err
			}
			for _, e := range errs {
				problems = append(problems, ProblemRow{Path: g.home, Severity: string(store.SevError), Reason: e.Error() + "; its tools are not in the inventory"})
			}
			inv.Merge(d)
			sources = append(sources, "the configured Claude Code MCP servers")
		}
		if len(sources) > 0 {
			for _, key := range inv.Keys() {
				for _, t := range inv.Servers[key].Tools {
					pol.Tools = append(pol.Tools, mcpname.ClaudeTool{Server: key, Tool: t.Name})
				}
			}
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
}

// loadClaudeMCPConfig reads a Claude Code MCP config ({"mcpServers": {<key>: {command, args,
// env, url, type, headers}}}, the format of --mcp-config and .mcp.json) and returns its servers
// in file order. Secrets in it never reach any output (settings.Secret).
func loadClaudeMCPConfig(path string, env settings.Env) ([]settings.MCPServer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := settings.Parse(path, data, settings.ScopeUser, env)
	if err != nil {
		return nil, err
	}
	return f.MCPServers, nil
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
