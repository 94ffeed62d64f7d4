package check

import (
	"github.com/sessionfix/sessionfix/agent"
	"maps"
	"slices"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/rewrite"
)

// Re-dispatch detection (issue 13 item 3): for each stored history call, the tool(s) it
// reaches TODAY by the agent's own lookup over the current tool set (an inventory,
// --discover, or what the agent's configuration and history record), compared with the raw
// identity that was called. Each agent's lookup lives in its room (agent.Agent.Redispatches);
// this runs the one of the store's agent. Only two classes are findings: redispatch (one
// tool, another raw identity than the one called) and ambiguous (several tools, or a stored
// spelling several tools share so the one called cannot be told). Nothing here rewrites
// anything; the fix plan's decision is quoted.

// Tool is a raw MCP identity (naming.Tool).
type Tool = naming.Tool

// Redispatch is one stored call whose lookup today is a finding (naming.Redispatch).
type Redispatch = naming.Redispatch

// Lookup is what re-dispatch detection knows of the current tool set beyond the stores.
type Lookup struct {
	// Inventory are the tools of --inventory (NewInventoryTools); InventorySource names them
	// in explanations ("inventory.json"). nil: an agent whose lookup needs it checks nothing.
	Inventory       []Tool
	InventorySource string
	// Policy is the fix plan's: its per-agent slots (naming.AgentOf) hold what each room knows
	// of today's tool set (configuration, inventory, thread history, discovered tools).
	Policy naming.Policy
}

// NewInventoryTools lists an inventory's servers (sorted by key) and tools (in the order
// given) as Tools.
func NewInventoryTools(servers map[string][]string) []Tool {
	var out []Tool
	for _, k := range slices.Sorted(maps.Keys(servers)) {
		for _, t := range servers[k] {
			out = append(out, Tool{Server: k, Tool: t})
		}
	}
	return out
}

// Redispatches returns the findings of one store's plan, in the plan's order, one per distinct
// (stored call, called identity) with its count (agent.Agent.Redispatches of the store's
// agent). An agent without a lookup or without a known tool set gives none.
func Redispatches(sp *rewrite.StorePlan, lk *Lookup) []Redispatch {
	if lk == nil || sp == nil || sp.Snap == nil {
		return nil
	}
	a, ok := all.Lookup(sp.Snap.Agent).(agent.Redispatcher)
	if !ok {
		return nil
	}
	return a.Redispatches(naming.DispatchInput{Snap: sp.Snap, Decisions: sp.Decisions, Policy: lk.Policy,
		Inventory: lk.Inventory, InventorySource: lk.InventorySource, Sent: sent})
}
