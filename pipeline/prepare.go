package pipeline

import (
	"context"
	"slices"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/inventory"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/pipeline/report"
	"github.com/sessionfix/sessionfix/scan"
	"github.com/sessionfix/sessionfix/store"
)

// PrepareCache keeps, for a command that builds several pipelines (an interactive fix
// re-plans after its prompt), the Prepare results of the agents that ask for it
// (agent.Agent.PrepareOnce): a plan confirmed interactively is applied with the same
// inventory, and --discover starts servers once. nil in Options: computed every time.
type PrepareCache struct {
	done map[store.AgentID]agent.Prepared
}

// prepared is what every agent's Prepare gathered for a run, in agent/all's order.
type prepared struct {
	// set puts each agent's policy into a run's policy.
	set      []func(*naming.Policy)
	problems []report.ProblemRow
	failed   bool
	info     report.AgentInfo
	skip     []string
	declared []agent.Declared
}

// prepareAgents runs each agent's Prepare hook (agent/all's order) over the stores found,
// with the agent's option values, the --inventory file (read once by New; nil without one),
// the MCP config parser and, with --discover, inventory's MCP client injected. The first
// error ends the run.
func prepareAgents(ctx context.Context, env Env, po Options, found *scan.Found, sopt all.Options, file *mcpinventory.Inventory) (prepared, error) {
	var res prepared
	in := agent.PrepareInput{Env: env.agent(), Stores: foundStores(found), Lexical: found.Lexical, SQLite: sopt.SQLite,
		InventoryFile: po.Inventory, InventoryTools: inventoryTools(file), Vars: env.settings()}
	if po.Discover {
		in.Discover = discoverer(env, po.DiscoverUntrusted)
	}
	for _, a := range all.Agents {
		if a.Core().Prepare == nil {
			continue
		}
		p, ok := po.Prepared.get(a)
		if !ok {
			in.Options = po.AgentOptions
			var err error
			if p, err = a.Core().Prepare(ctx, in); err != nil {
				return res, err
			}
			po.Prepared.put(a, p)
		}
		if p.SetPolicy != nil {
			res.set = append(res.set, p.SetPolicy)
		}
		rows := problemRows(p.Problems)
		res.problems = append(res.problems, rows...)
		if slices.ContainsFunc(rows, func(pr report.ProblemRow) bool { return pr.Severity == string(store.SevError) }) {
			res.failed = true
		}
		if len(p.Info) > 0 {
			res.info = append(res.info, report.AgentRows{ID: a.Core().ID, Rows: p.Info})
		}
		res.skip = append(res.skip, p.Skip...)
		res.declared = append(res.declared, p.Declared...)
	}
	return res, nil
}

func (c *PrepareCache) get(a agent.Agent) (agent.Prepared, bool) {
	if o, ok := a.(agent.OncePreparer); c == nil || !ok || !o.PrepareOnce() {
		return agent.Prepared{}, false
	}
	p, ok := c.done[a.Core().ID]
	return p, ok
}

func (c *PrepareCache) put(a agent.Agent, p agent.Prepared) {
	if o, ok := a.(agent.OncePreparer); c == nil || !ok || !o.PrepareOnce() {
		return
	}
	if c.done == nil {
		c.done = map[store.AgentID]agent.Prepared{}
	}
	c.done[a.Core().ID] = p
}

// foundStores are the stores of found's targets, in order.
func foundStores(found *scan.Found) []store.Store {
	stores := make([]store.Store, len(found.Targets))
	for i, t := range found.Targets {
		stores[i] = t.Store
	}
	return stores
}

// inventoryTools are the raw (server, tool) pairs of an inventory (nil for none), by server key.
func inventoryTools(inv *mcpinventory.Inventory) []agent.Tool {
	if inv == nil {
		return nil
	}
	var out []agent.Tool
	for _, key := range inv.Keys() {
		for _, t := range inv.Servers[key].Tools {
			out = append(out, agent.Tool{Server: key, Tool: t.Name})
		}
	}
	return out
}

// problemRows are a room's problems as report rows.
func problemRows(ps []agent.Problem) []report.ProblemRow {
	var out []report.ProblemRow
	for _, p := range ps {
		out = append(out, report.ProblemRow{Path: p.Path, Severity: string(p.Severity), Reason: p.Reason})
	}
	return out
}

// discoverer is the agent.Discover of --discover: discoverServers (inventory's MCP client over
// this process's environment; untrusted: --discover-untrusted); when not one of them can be
// listed the error is AllServersFailed's.
func discoverer(env Env, untrusted bool) agent.Discover {
	return func(ctx context.Context, servers []agent.Server) ([]agent.Tool, []error, error) {
		inv, errs, err := discoverServers(ctx, env, servers, untrusted)
		if err != nil {
			return nil, nil, err
		}
		serverErrs := make([]error, len(errs))
		for i, e := range errs {
			serverErrs[i] = e
		}
		return inventoryTools(inv), serverErrs, nil
	}
}

// discoverServers lists the tools of servers with inventory's MCP client over this process's
// environment (env.Environ); errs are the servers that could not be listed; err is ctx's, or
// AllServersFailed's when not one could be.
func discoverServers(ctx context.Context, env Env, servers []agent.Server, untrusted bool) (*mcpinventory.Inventory, []*inventory.ServerError, error) {
	var base mcpconfig.Env
	if env.Environ != nil {
		base = mcpconfig.EnvFromList(env.Environ())
	}
	inv, errs := inventory.Discover(ctx, servers, inventory.DiscoverOptions{Env: base, ClientVersion: env.ClientVersion, AllowUntrusted: untrusted})
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err := AllServersFailed(len(servers), errs); err != nil {
		return nil, nil, err
	}
	return inv, errs, nil
}

// AllServersFailed is the error of a --discover where not one of n servers (n > 0) could be
// listed: the same in fix and audit (exit 1, nothing planned or reported: an inventory of
// nothing would make every result wrong), with each server's cause.
func AllServersFailed(n int, errs []*inventory.ServerError) error {
	return inventory.AllFailed(n, errs)
}
