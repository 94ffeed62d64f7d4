package pipeline

import (
	"context"
	"fmt"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/check"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

// dispatchTools lists an inventory's servers and tools (check.NewInventoryTools).
func dispatchTools(inv *mcpinventory.Inventory) []check.Tool {
	servers := map[string][]string{}
	for _, k := range inv.Keys() {
		servers[k] = []string{}
		for _, t := range inv.Servers[k].Tools {
			servers[k] = append(servers[k], t.Name)
		}
	}
	return check.NewInventoryTools(servers)
}

// HistoryCheck is the engine's read-only re-dispatch check of a session history for an
// agent's audit (agent.AuditEngine.History): the scan pipeline over in.Roots for in.Agent with
// its option values, in.Policy applied to the run's policy and in.Lookup to the lookup's copy,
// today's tools in.Servers (named in.Source) when given; the findings are []check.Redispatch
// (check.Redispatches), the errors the stores or parts of them that could not be read
// ("path: reason"). Nothing is written, no MCP server is started.
func HistoryCheck(env Env) agent.HistoryCheck {
	return func(ctx context.Context, in agent.HistoryInput) ([]check.Redispatch, []error, error) {
		p, err := New(ctx, env, in.Roots, Options{Agent: string(in.Agent), AgentOptions: in.Options})
		if err != nil {
			return nil, nil, err
		}
		if in.Policy != nil {
			in.Policy(&p.Policy)
		}
		pol := p.Policy
		if in.Lookup != nil {
			in.Lookup(&pol)
		}
		l := &check.Lookup{Policy: pol}
		if in.Servers != nil {
			l.Inventory, l.InventorySource = check.NewInventoryTools(in.Servers), in.Source
		}
		p.Summary.Dispatch = l
		if _, err := p.Run(ctx, rewrite.ProcessOptions{}, nil); err != nil {
			return nil, nil, err
		}
		var errs []error
		for _, pr := range p.Summary.Report.Problems {
			if pr.Severity == string(store.SevError) {
				errs = append(errs, fmt.Errorf("%s: %s", pr.Path, pr.Reason))
			}
		}
		return p.Summary.Report.Redispatch, errs, nil
	}
}
