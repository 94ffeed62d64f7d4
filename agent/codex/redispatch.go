package codex

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// Redispatches checks each history function_call of a Codex rollout (its name and
// namespace members are one call). The called identity: the invocation record of the call id
// (mcp_tool_call_end). Today's tool set: the inventory (--inventory / --discover), else the
// raw identities of the home's thread history, filtered as config.toml registers them; the
// lookup: mcpname.CodexResolve under config.toml's allocator parameters.
func Redispatches(in naming.DispatchInput) []naming.Redispatch {
	cp := naming.AgentOf[naming.PathPolicy[CodexPolicy]](in.Policy, ID).For(in.Snap.Ref.Path)
	set, label := cp.Inventory, cmp.Or(cp.InventorySource, "the inventory")
	if set == nil {
		set, label = cp.History, cmp.Or(cp.HistorySource, "the thread history")
	}
	if set == nil {
		return nil
	}
	var cur []mcpname.CodexTool
	for _, t := range set {
		if mcpname.CodexServerNameValid(t.Server) && cp.Config.Registers(t) && !slices.Contains(cur, t) {
			cur = append(cur, t)
		}
	}
	params := cp.Config.Params()
	alloc := mcpname.CodexAllocate(cur, params)
	ids := map[string]*store.Identity{}
	bad := map[string]bool{}
	for i, id := range in.Snap.Identities {
		if id.CallID == "" {
			continue
		}
		if p := ids[id.CallID]; p != nil && (p.Server != id.Server || p.Tool != id.Tool) {
			bad[id.CallID] = true
		}
		ids[id.CallID] = &in.Snap.Identities[i]
	}
	// call is one function_call: its name site, its namespace, and the decision that says
	// what fix does with it (the rewrite of either member, else the name's).
	type call struct {
		name   *store.Site
		ns     string
		hasNS  bool
		action naming.Decision
	}
	var calls []*call
	byGroup := map[string]*call{}
	for _, d := range in.Decisions {
		s := d.Site
		if s.ReadOnly || (in.Sent != nil && !in.Sent(s)) || (s.Kind != store.SiteCall && s.Kind != store.SiteCompressed) {
			continue
		}
		key := s.Group
		var c *call
		if key != "" {
			c = byGroup[key]
		}
		if c == nil {
			c = &call{}
			calls = append(calls, c)
			if key != "" {
				byGroup[key] = c
			}
		}
		if s.Field == FieldNamespace {
			if !s.Absent() {
				c.ns, c.hasNS = s.Name, true
			}
			if d.Action == naming.ActRewrite {
				c.action = d
			}
			continue
		}
		c.name = s
		if c.action.Site == nil || d.Action == naming.ActRewrite {
			c.action = d
		}
	}
	var col naming.DispatchCollector
	for _, c := range calls {
		if c.name == nil || c.name.Units != nil || (!c.hasNS && !mcpname.HasPrefix(c.name.Name) && !strings.Contains(c.name.Name, "__")) {
			continue
		}
		stored := mcpname.CodexName{Namespace: c.ns, Name: c.name.Name}
		var called *mcpname.CodexTool
		from := ""
		if id := ids[c.name.CallID]; id != nil && !bad[c.name.CallID] {
			called = &mcpname.CodexTool{Server: id.Server, Tool: id.Tool}
			from = fmt.Sprintf("invocation record of call %s, line %d", c.name.CallID, id.Loc.Line)
		}
		class, got := mcpname.CodexDispatchIn(stored, called, alloc)
		if !class.Finding() {
			continue
		}
		r := naming.Redispatch{Store: in.Snap.Ref.Path, Loc: c.name.Loc, Agent: string(ID), Kind: string(c.name.Kind), JSONPath: c.name.Path,
			Stored: c.name.Name, Namespace: c.ns, Class: class.String(), Reaches: naming.Tools(got, dispatchTool), CalledFrom: from}
		if called != nil {
			t := dispatchTool(*called)
			r.Called = &t
		}
		how := fmt.Sprintf("namespaced lookup: the allocator (SHA-1 suffixes on colliding namespaces and names) names %s today %s / %s", naming.ToolList(r.Reaches), c.ns, c.name.Name)
		if !c.hasNS {
			how = fmt.Sprintf("flat lookup (no namespace stored): %s is the E4 model string, E5/E6 joined string or canonical flat name of %s under today's allocator", c.name.Name, naming.ToolList(r.Reaches))
		}
		if class == mcpname.DispatchSeveral {
			r.Rule = fmt.Sprintf("Codex: %s; %d tools match, which one answers depends on the wire", how, len(got))
		} else {
			var own string
			switch n, ok := alloc[*called]; {
			case ok:
				own = fmt.Sprintf("; %s itself is named %s / %s today", r.Called, n.Namespace, n.Name)
			case !mcpname.CodexServerNameValid(called.Server):
				own = fmt.Sprintf("; server key %q is not valid for Codex", called.Server)
			case !cp.Config.Registers(*called):
				own = fmt.Sprintf("; %s does not register %s (server disabled or tool filtered)", cp.Config.Path, r.Called)
			default:
				own = fmt.Sprintf("; %s is not in %s", r.Called, label)
			}
			if t := got[0]; t.Server != called.Server && mcpname.CodexSanitize(t.Server) == mcpname.CodexSanitize(called.Server) {
				own += fmt.Sprintf("; the keys %q and %q sanitize alike (every character outside [A-Za-z0-9_] becomes '_')", called.Server, t.Server)
			}
			r.Rule = fmt.Sprintf("Codex: %s (over %s); the call was %s%s", how, label, r.Called, own)
		}
		r.Fix = naming.DispatchFix(c.action, class)
		col.Add(r)
	}
	return col.Out
}

func dispatchTool(t mcpname.CodexTool) naming.Tool {
	return naming.Tool{Server: t.Server, Tool: t.Tool}
}
