package copilot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

// MCPConfigOption is the flag naming further MCP config files (Copilot CLI's
// --additional-mcp-config, a project's .mcp.json): another room declares the same flag for the
// same file format; the command makes one flag of both.
const MCPConfigOption = "mcp-config"

// ParseServers reads the MCP servers of a Copilot CLI MCP config ({"mcpServers": {<key>:
// {type, command, args, env, url, headers, tools}}}: mcp-config.json, .mcp.json,
// --additional-mcp-config) with the shared reader, in file order; string values are expanded
// over env. The values are secrets that never reach any output.
//
// origin is what mcpconfig.ReadFile said of the file (who owns it): every server gets it, and
// --discover starts none whose config another user owns or can write (issue 30 finding 1).
func ParseServers(path string, data []byte, origin mcpconfig.Origin, env mcpconfig.Env) ([]agent.Server, error) {
	return agent.ParseServers(agentName, path, data, origin, env)
}

// ReadServers reads the MCP config at path as any file a user may control (mcpconfig.ReadFile:
// its servers carry who owns it) and parses it (ParseServers); errors are mcpconfig.ReadFile's
// (a missing file wraps fs.ErrNotExist) and ParseServers', unchanged.
func ReadServers(path string, env mcpconfig.Env) ([]agent.Server, error) {
	return agent.ReadServers(agentName, path, env)
}

// HomeSessions is the sessions of one Copilot CLI home: FromEnv marks the environment's
// ($COPILOT_HOME, else ~/.copilot), whose legacy config home ($XDG_CONFIG_HOME/.copilot) is
// read too.
type HomeSessions = agent.HomeSessions

// GroupByHome sorts the Copilot CLI stores among stores by the home each lies in
// (agent.GroupByHome with the home of the path the walk reached it by, when that is a home: a
// copied .copilot is planned with its own mcp-config.json); any other goes to envHome. Groups
// come sorted by home.
func GroupByHome(stores []store.Store, lexical func(string) string, envHome string) []*HomeSessions {
	return agent.GroupByHome(stores, []store.Kind{KindEvents, KindFlat, KindHistory}, homeOf, lexical, envHome)
}

// Info names what the Copilot CLI sessions of one home were planned with (the plan's line and
// the report's "copilot" member).
type Info struct {
	Home       string   `json:"home"`
	Sessions   int      `json:"sessions"`
	Version    string   `json:"version"`
	KeySources []string `json:"key_sources"`
	Keys       int      `json:"keys"`
	Inventory  []string `json:"inventory"`
}

// Text is the plan's line about one home's naming inputs.
func (i *Info) Text(several bool) string {
	s := fmt.Sprintf("Copilot CLI naming: names of %s", i.Version)
	if several {
		s += fmt.Sprintf(" for %d session(s) of %s", i.Sessions, i.Home)
	}
	if len(i.KeySources) > 0 {
		s += fmt.Sprintf("; %d server keys from %s", i.Keys, strings.Join(i.KeySources, ", "))
	} else {
		s += "; no MCP config for " + i.Home + " (pass --mcp-config FILE)"
	}
	if len(i.Inventory) > 0 {
		s += "; inventory " + strings.Join(i.Inventory, " and ")
	}
	return s
}

// workspaceCwd returns the cwd of a session's workspace.yaml beside its events.jsonl ("" when
// there is none or it cannot be read).
func workspaceCwd(sessionPath string) string {
	if filepath.Base(sessionPath) != EventsFile {
		return ""
	}
	b, _, err := owner.ReadFile(filepath.Join(filepath.Dir(sessionPath), WorkspaceFile))
	if err != nil {
		return ""
	}
	var ws struct {
		Cwd string `yaml:"cwd"`
	}
	if yaml.Unmarshal(b, &ws) != nil {
		return ""
	}
	return ws.Cwd
}

// input is what every home's policy shares.
type input struct {
	version   string
	getenv    func(string) string
	vars      mcpconfig.Env
	flagFiles []string
	inventory string
	invTools  []agent.Tool
	discover  agent.Discover
}

// homePolicy is the policy of one home: the keys of its mcp-config.json (and, for the
// environment's home, of $XDG_CONFIG_HOME/.copilot/mcp-config.json), of the .mcp.json of each
// session's project (workspace.yaml's cwd) and of every --mcp-config file; the inventory; with
// --discover the tools of those servers. A file that cannot be read is a warning problem.
func homePolicy(ctx context.Context, in input, h *HomeSessions) (Policy, *Info, []agent.Problem, error) {
	pol := Policy{Version: in.version}
	info := &Info{Home: h.Home, Sessions: len(h.Sessions), Version: in.version, KeySources: []string{}, Inventory: []string{}}
	var problems []agent.Problem
	var servers []agent.Server
	read := map[string]bool{}
	addFile := func(path, label string, must bool) error {
		if read[path] {
			return nil
		}
		read[path] = true
		ss, err := ReadServers(path, in.vars)
		switch {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist) && !must:
			return nil
		case must:
			return fmt.Errorf("--%s: read %s MCP config: %w", MCPConfigOption, agentName, err)
		default:
			problems = append(problems, agent.Problem{Path: path, Severity: store.SevWarning, Reason: store.ErrReason(err) + "; its server keys are not used"})
			return nil
		}
		servers = append(servers, ss...)
		for _, s := range ss {
			pol.Keys = append(pol.Keys, Key{Key: s.Key, Source: path})
		}
		info.KeySources = append(info.KeySources, fmt.Sprintf("%s%s (%d)", label, path, len(ss)))
		return nil
	}
	_ = addFile(filepath.Join(h.Home, MCPConfigFile), "", false)
	if h.FromEnv {
		if _, cfg := LegacyHomes(in.getenv); cfg != "" {
			p := filepath.Join(cfg, MCPConfigFile)
			if fi, err := os.Stat(p); err == nil {
				if home, err := os.Stat(filepath.Join(h.Home, MCPConfigFile)); err != nil || !os.SameFile(fi, home) {
					_ = addFile(p, "", false)
				}
			}
		}
	}
	var cwds []string
	for _, s := range h.Sessions {
		if c := workspaceCwd(s); c != "" && !slices.Contains(cwds, c) {
			cwds = append(cwds, c)
		}
	}
	sort.Strings(cwds)
	for _, c := range cwds {
		_ = addFile(filepath.Join(c, ".mcp.json"), "", false)
	}
	for _, f := range in.flagFiles {
		if err := addFile(f, "--mcp-config ", true); err != nil {
			return Policy{}, nil, nil, err
		}
	}
	tools, sources, toolProblems, err := agent.PolicyTools(ctx, agent.PolicyToolsInput{InventoryFile: in.inventory, InventoryTools: in.invTools,
		Discover: in.discover, Servers: servers, Home: h.Home, Agent: agentName, Hint: "pass --mcp-config FILE"})
	if err != nil {
		return Policy{}, nil, nil, err
	}
	problems = append(problems, toolProblems...)
	if len(sources) > 0 {
		for _, t := range tools {
			ct := mcpname.CopilotTool{Server: t.Server, Tool: t.Tool}
			if !slices.Contains(pol.Tools, ct) {
				pol.Tools = append(pol.Tools, ct)
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

// VersionOption names the release whose names are current for callers that take one (the
// audit); scan and fix use the newest known release.
const VersionOption = "copilot-version"

// prepare is the Agent's Prepare hook: the policy of every home holding Copilot CLI stores.
func prepare(ctx context.Context, in agent.PrepareInput) (agent.Prepared, error) {
	homes := GroupByHome(in.Stores, in.Lexical, Home(in.Env.Getenv, in.Env.Home))
	if len(homes) == 0 {
		return agent.Prepared{}, nil
	}
	version := cmp.Or(in.Options.String(VersionOption), mcpname.CopilotLatestVersion)
	if _, err := mcpname.CopilotEraOf(version); err != nil {
		return agent.Prepared{}, usage.Errorf("--%s: %v", VersionOption, err)
	}
	pin := input{version: version, getenv: in.Env.Getenv, vars: in.Vars, inventory: in.InventoryFile, invTools: in.InventoryTools, discover: in.Discover}
	for _, f := range in.Options.Strings(MCPConfigOption) {
		if f == "" {
			return agent.Prepared{}, usage.Errorf("--%s needs a file name; it was given an empty one", MCPConfigOption)
		}
		pin.flagFiles = append(pin.flagFiles, f)
	}
	out, _, err := agent.PrepareHomes(ID, homes, func(h *HomeSessions) (Policy, *Info, []agent.Problem, error) {
		return homePolicy(ctx, pin, h)
	})
	return out, err
}
