package qwen

import (
	"context"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/naming"
)

// AuditHistory is the audit's re-dispatch check of the Qwen Code session history at roots
// with inv (source names it in explanations: "file inv.json", "discovered") as today's tool
// set (the engine's check: agent.AuditEngine.History; the scan's policy gets inv's Index).
// Nothing when roots or inv is empty: an audit's inventory may be discovered or inferred
// rather than a file. Nothing is written.
func AuditHistory(ctx context.Context, check agent.HistoryCheck, roots []string, inv *mcpinventory.Inventory, source string) ([]naming.Redispatch, []error, error) {
	if len(roots) == 0 || inv == nil {
		return nil, nil, nil
	}
	servers := map[string][]string{}
	for _, k := range inv.Keys() {
		servers[k] = []string{}
		for _, t := range inv.Servers[k].Tools {
			servers[k] = append(servers[k], t.Name)
		}
	}
	return check(ctx, agent.HistoryInput{Agent: ID, Roots: roots, Servers: servers, Source: source,
		Policy: func(p *naming.Policy) { p.Index = inv.Index() }})
}
