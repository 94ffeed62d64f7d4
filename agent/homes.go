package agent

import (
	"context"
	"slices"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// The Prepare of a room whose naming policy is per agent home (each home's configs name the
// tools of its sessions; a copied home is planned with its own configs): its sessions grouped
// by home (GroupByHome), each home's policy (the room's, with PolicyTools for the inventory and
// --discover), bound to the home's sessions (PrepareHomes).

// HomeSessions are the sessions of one agent home: Home is the home; FromEnv marks the
// environment's (the room says which that is and what more it reads for it); Sessions are
// the store paths, in the order given.
type HomeSessions struct {
	Home     string
	FromEnv  bool
	Sessions []string
}

// GroupByHome sorts the stores among stores whose kind is one of kinds by the home each lies
// in (homeOf of lexical(path), the path as the walk reached it; "" when none); a store in no
// home, or in the same directory as envHome, goes to envHome (FromEnv). Groups come sorted by
// home. It looks at the file system (fileio.SameFile).
func GroupByHome(stores []store.Store, kinds []store.Kind, homeOf, lexical func(string) string, envHome string) []*HomeSessions {
	byHome := map[string]*HomeSessions{}
	var homes []string
	for _, st := range stores {
		if !slices.Contains(kinds, st.Ref().Kind) {
			continue
		}
		path := st.Ref().Path
		h := homeOf(lexical(path))
		fromEnv := h == "" || fileio.SameFile(h, envHome)
		if fromEnv {
			h = envHome
		}
		g := byHome[h]
		if g == nil {
			g = &HomeSessions{Home: h, FromEnv: fromEnv}
			byHome[h] = g
			homes = append(homes, h)
		}
		g.Sessions = append(g.Sessions, path)
	}
	slices.Sort(homes)
	out := make([]*HomeSessions, 0, len(homes))
	for _, h := range homes {
		out = append(out, byHome[h])
	}
	return out
}

// PrepareHomes is policy(h) of each home in order (the first error ends it), the problems and
// info rows gathered in home order, and each home's sessions bound to its policy
// (naming.PathPolicy.Add; with one home its policy is every session's). The Prepared's
// SetPolicy puts that PathPolicy under id; it is also returned for the room's own callers.
func PrepareHomes[P any, I Info](id store.AgentID, homes []*HomeSessions, policy func(*HomeSessions) (P, I, []Problem, error)) (Prepared, *naming.PathPolicy[P], error) {
	var out Prepared
	pp := &naming.PathPolicy[P]{}
	for _, h := range homes {
		pol, info, problems, err := policy(h)
		if err != nil {
			return Prepared{}, nil, err
		}
		out.Problems = append(out.Problems, problems...)
		out.Info = append(out.Info, info)
		pp.Add(pol, h.Sessions, len(homes) == 1)
	}
	out.SetPolicy = func(p *naming.Policy) { naming.SetAgent(p, id, pp) }
	return out, pp, nil
}

// PolicyToolsInput is what PolicyTools reads: --inventory's file and tools, --discover's
// client (nil without --discover), the servers the home's configs launch, the home, and the
// agent's name and a hint for the usage error ("pass --mcp-config FILE").
type PolicyToolsInput struct {
	InventoryFile  string
	InventoryTools []Tool
	Discover       Discover
	Servers        []Server
	Home           string
	Agent, Hint    string
}

// PolicyTools are the raw tools a home's naming policy knows beyond its configs: the
// inventory's tools, then, with --discover, the tools the home's configured servers list.
// Sources name where they came from (the inventory file, "the configured <Agent> MCP
// servers"; nil: no tools are known, the namer has only the configs' keys). Problems are the
// servers that could not be listed (an error problem: the run goes on, partial). err is a
// usage error when --discover has no server to start ("--discover: no <Agent> MCP server
// configured for <Home> (<Hint>)"), or Discover's.
func PolicyTools(ctx context.Context, in PolicyToolsInput) (tools []Tool, sources []string, problems []Problem, err error) {
	if in.InventoryFile != "" {
		tools = append(tools, in.InventoryTools...)
		sources = append(sources, in.InventoryFile)
	}
	if in.Discover == nil {
		return tools, sources, nil, nil
	}
	if len(in.Servers) == 0 {
		return nil, nil, nil, usage.Errorf("--discover: no %s MCP server configured for %s (%s)", in.Agent, in.Home, in.Hint)
	}
	found, errs, err := in.Discover(ctx, in.Servers)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, e := range errs {
		problems = append(problems, Problem{Path: in.Home, Severity: store.SevError, Reason: e.Error() + "; its tools are not in the inventory"})
	}
	return append(tools, found...), append(sources, "the configured "+in.Agent+" MCP servers"), problems, nil
}

// ParseServers reads the MCP servers of an MCP config's data ({"mcpServers": {<key>: {type,
// command, args, env, url, headers, …}}}) in file order with the shared reader
// (mcpconfig.Parse: a file the agent's JSON.parse rejects is a *mcpconfig.ParseError at its
// line and column; a repeated key keeps the last definition), string values $VAR / ${VAR}
// expanded over env (mcpconfig.Expand). agentName names the program in messages. The values
// are secrets that never reach any output; warnings about single members are not reported
// (the servers are only started by --discover). origin is what mcpconfig.ReadFile said of the
// file (who owns it): every server gets it, and --discover starts none whose config another
// user owns or can write.
func ParseServers(agentName, path string, data []byte, origin mcpconfig.Origin, env mcpconfig.Env) ([]Server, error) {
	servers, _, err := mcpconfig.Parse(path, data, mcpconfig.Options{Agent: agentName, Origin: origin,
		Expand: func(s string) string { return mcpconfig.Expand(s, env, nil) }})
	return servers, err
}

// ReadServers reads the MCP config at path as any file a user may control (mcpconfig.ReadFile:
// its servers carry who owns it) and parses it (ParseServers); errors are mcpconfig.ReadFile's
// (a missing file wraps fs.ErrNotExist) and ParseServers', unchanged.
func ReadServers(agentName, path string, env mcpconfig.Env) ([]Server, error) {
	data, origin, err := mcpconfig.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseServers(agentName, path, data, origin, env)
}
