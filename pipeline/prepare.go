package pipeline

import (
	"context"

	"github.com/sessionfix/sessionfix/inventory"
	"github.com/sessionfix/sessionfix/mcpconfig"
	"github.com/sessionfix/sessionfix/scan"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/agent"
	"github.com/sessionfix/sessionfix/store/all"
	"github.com/sessionfix/sessionfix/store/codex"
)

// CodexCache remembers the Codex policy of a command's first pipeline (Options.Codex).
type CodexCache struct {
	done bool
	res  codexResult
}

// codexResult is codex.Prepared in the report's terms: the Codex policy (one per Codex home
// the rollouts live in), its problems as report rows, its CodexInfo rows and the rollouts left
// out (homes whose own config.toml could not be read).
type codexResult struct {
	pol      codex.CodexPolicy
	byPath   map[string]*codex.CodexPolicy
	problems []ProblemRow
	info     []*CodexInfo
	skip     []string
}

// codexPolicy is codex.Prepare over the stores found, with --codex-config, the --inventory
// file (read once by New; nil without one) and, with --discover, inventory's MCP client
// injected. It is computed once per command (po.Codex).
func codexPolicy(ctx context.Context, env Env, po Options, found *scan.Found, sopt all.Options, file *inventory.Inventory) (codexResult, error) {
	if po.Codex != nil && po.Codex.done {
		return po.Codex.res, nil
	}
	in := codex.PrepareInput{Getenv: env.Getenv, UserHome: env.Home, Stores: foundStores(found), Lexical: found.Lexical,
		SQLite: sopt.SQLite, ConfigFlag: po.CodexConfig, InventoryFile: po.Inventory, InventoryTools: inventoryTools(file)}
	if po.Discover {
		in.Discover = discoverer(env)
	}
	p, err := codex.Prepare(ctx, in)
	if err != nil {
		return codexResult{}, err
	}
	res := codexResult{pol: p.Policy, byPath: p.ByPath, problems: problemRows(p.Problems), skip: p.Skip}
	for _, i := range p.Info {
		ci := CodexInfo(*i)
		res.info = append(res.info, &ci)
	}
	if po.Codex != nil {
		po.Codex.done, po.Codex.res = true, res
	}
	return res, nil
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
func inventoryTools(inv *inventory.Inventory) []agent.Tool {
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
func problemRows(ps []agent.Problem) []ProblemRow {
	var out []ProblemRow
	for _, p := range ps {
		out = append(out, ProblemRow{Path: p.Path, Severity: string(p.Severity), Reason: p.Reason})
	}
	return out
}

// discoverer is the agent.Discover of --discover: discoverServers (inventory's MCP client over
// this process's environment); when not one of them can be listed the error is
// AllServersFailed's.
func discoverer(env Env) agent.Discover {
	return func(ctx context.Context, servers []agent.Server) ([]agent.Tool, []error, error) {
		inv, errs, err := discoverServers(ctx, env, servers)
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
func discoverServers(ctx context.Context, env Env, servers []agent.Server) (*inventory.Inventory, []*inventory.ServerError, error) {
	var base mcpconfig.Env
	if env.Environ != nil {
		base = mcpconfig.EnvFromList(env.Environ())
	}
	inv, errs := inventory.Discover(ctx, servers, inventory.DiscoverOptions{Env: base, ClientVersion: env.ClientVersion})
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
