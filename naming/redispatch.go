package naming

import (
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

// Re-dispatch detection (issue 13 item 3): for each stored history call, the tool(s) it
// reaches TODAY by the agent's own lookup over the current tool set, compared with the raw
// identity that was called. The lookup of each agent lives in its room (agent.Agent's
// Redispatches hook); package check runs it over every store plan. Only two classes are
// findings: redispatch (one tool, another raw identity than the one called) and ambiguous
// (several tools, or a stored spelling several tools share so the one called cannot be told).
// Nothing here rewrites anything; the fix plan's decision is quoted.

// Tool is a raw MCP identity: the configured server key and the tool name the server lists.
type Tool struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// String is "server/tool".
func (t Tool) String() string { return t.Server + "/" + t.Tool }

// Redispatch is one stored call whose lookup today is a finding, with the number of sites of
// the store that hold the same call (Loc is the first).
type Redispatch struct {
	Store string    `json:"store"`
	Loc   store.Loc `json:"loc"`
	Agent string    `json:"agent"`
	// Kind is the site kind ("call", "compressed", …), JSONPath the first site's path.
	Kind     string `json:"site"`
	JSONPath string `json:"path"`
	// Stored is the name as stored; Namespace the call's namespace member ("" when none).
	Stored    string `json:"stored"`
	Namespace string `json:"namespace,omitempty"`
	// Class is "redispatch" or "ambiguous" (mcpname.Dispatch.String).
	Class string `json:"class"`
	// Called is the raw identity that was called (nil: not known), CalledFrom where that
	// comes from ("telemetry mcp_server_name, line 4", "invocation record", …).
	Called     *Tool  `json:"called,omitempty"`
	CalledFrom string `json:"called_from,omitempty"`
	// Reaches are the tools the call reaches today (the one that answers first when the
	// agent picks one); Candidates, for a stored spelling several tools share, those tools.
	Reaches    []Tool `json:"reaches"`
	Candidates []Tool `json:"candidates,omitempty"`
	// Rule explains the finding by the agent's lookup rule; Fix says what fix does with it.
	Rule  string `json:"rule"`
	Fix   string `json:"fix"`
	Count int    `json:"count"`
}

// DispatchInput is what an agent's re-dispatch lookup gets of one store plan.
type DispatchInput struct {
	Snap *store.Snapshot
	// Decisions are the store plan's, in plan order.
	Decisions []Decision
	// Policy is the fix plan's: the agent's own slot (AgentOf) holds what its room knows of
	// today's tool set (configuration, inventory, discovered tools).
	Policy Policy
	// Inventory lists the tools of --inventory (servers sorted by key, tools in the order
	// given; nil: no inventory); InventorySource names it in explanations ("inventory.json").
	Inventory       []Tool
	InventorySource string
	// Sent reports whether the agent sends a site's name back to the model as a tool name
	// (not a response, telemetry, rule or text site).
	Sent func(*store.Site) bool
}

// HistoryCall reports whether a site is a call name the agent sends back as history (a call,
// a compressed or bootstrap copy, a checkpoint's), not a response, telemetry, rule or record
// that is never sent.
func (in DispatchInput) HistoryCall(s *store.Site) bool {
	if s.ReadOnly || s.Absent() || (in.Sent != nil && !in.Sent(s)) {
		return false
	}
	switch s.Kind {
	case store.SiteCall, store.SiteCompressed, store.SiteBootstrap, store.SiteCheckpoint:
		return !strings.Contains(s.Path, "functionResponse")
	}
	return false
}

// DispatchCollector merges findings of the same stored call and called identity (Add), in
// the order first seen (Out).
type DispatchCollector struct {
	Out []Redispatch
	at  map[string]int
}

// Add counts r, or appends it with Count 1 when its (namespace, stored, class, called) is new.
func (c *DispatchCollector) Add(r Redispatch) {
	if c.at == nil {
		c.at = map[string]int{}
	}
	k := r.Namespace + "\x00" + r.Stored + "\x00" + r.Class
	if r.Called != nil {
		k += "\x00" + r.Called.String()
	}
	if i, ok := c.at[k]; ok {
		c.Out[i].Count++
		return
	}
	r.Count = 1
	c.at[k] = len(c.Out)
	c.Out = append(c.Out, r)
}

// DispatchFix says what the fix plan does with a finding's site: it never renames a call into
// another tool's name; a rewrite only ever takes the called tool's own current name.
func DispatchFix(d Decision, class mcpname.Dispatch) string {
	switch d.Action {
	case ActRewrite:
		return fmt.Sprintf("fix rewrites it to %s (%s), the agent's own send-time spelling of the same stored call; the lookup above does not change", d.New, d.Source)
	case ActKeep:
		return "fix keeps it: " + d.Note
	}
	if class == mcpname.DispatchSeveral {
		return "fix leaves it: no rewrite can tell which of the tools was meant"
	}
	return "fix leaves it: renaming the call to another tool's name would rewrite what the history says was called; rename or remove the server that now answers, or start a new session"
}

// Tools converts an agent's tool type (server and tool) to Tools.
func Tools[T any](ts []T, conv func(T) Tool) []Tool {
	out := make([]Tool, len(ts))
	for i, t := range ts {
		out[i] = conv(t)
	}
	return out
}

// ToolList is "a/b, c/d".
func ToolList(ts []Tool) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

// ReachText is ToolList, or "no current tool" for none.
func ReachText(ts []Tool) string {
	if len(ts) == 0 {
		return "no current tool"
	}
	return ToolList(ts)
}
