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
// lookup: mcpname.CodexResolve under config.toml's allocator parameters. Its steps: today's
// tools and their names (todaysNames), the calls' invocation records (callIdentities), the
// calls (historyCalls), each call looked up (lookup.finding).
func Redispatches(in naming.DispatchInput) []naming.Redispatch {
	cp := naming.AgentOf[naming.PathPolicy[CodexPolicy]](in.Policy, ID).For(in.Snap.Ref.Path)
	l, ok := todaysNames(cp)
	if !ok {
		return nil
	}
	l.ids, l.bad = callIdentities(in.Snap)
	var col naming.DispatchCollector
	for _, c := range historyCalls(in) {
		if r, ok := l.finding(in.Snap.Ref.Path, c); ok {
			col.Add(r)
		}
	}
	return col.Out
}

// lookup is what a call is looked up in: the policy, today's names (the allocator over the
// tools config.toml registers) and what they were read from, the invocation records by call id
// (bad: a call id recorded with two identities).
type lookup struct {
	cp    CodexPolicy
	label string
	alloc map[mcpname.CodexTool]mcpname.CodexName
	ids   map[string]*store.Identity
	bad   map[string]bool
}

// todaysNames is the lookup of today's tools: the inventory, else the thread history's raw
// identities (label: which), those config.toml registers under a valid server key, named by
// the allocator under config.toml's parameters; false when neither is known.
func todaysNames(cp CodexPolicy) (lookup, bool) {
	set, label := cp.Inventory, cmp.Or(cp.InventorySource, "the inventory")
	if set == nil {
		set, label = cp.History, cmp.Or(cp.HistorySource, "the thread history")
	}
	if set == nil {
		return lookup{}, false
	}
	var cur []mcpname.CodexTool
	for _, t := range set {
		if mcpname.CodexServerNameValid(t.Server) && cp.Config.Registers(t) && !slices.Contains(cur, t) {
			cur = append(cur, t)
		}
	}
	return lookup{cp: cp, label: label, alloc: mcpname.CodexAllocate(cur, cp.Config.Params())}, true
}

// callIdentities are the invocation records of snap by call id, and the call ids recorded
// with two different identities (bad: not used).
func callIdentities(snap *store.Snapshot) (map[string]*store.Identity, map[string]bool) {
	ids := map[string]*store.Identity{}
	bad := map[string]bool{}
	for i, id := range snap.Identities {
		if id.CallID == "" {
			continue
		}
		if p := ids[id.CallID]; p != nil && (p.Server != id.Server || p.Tool != id.Tool) {
			bad[id.CallID] = true
		}
		ids[id.CallID] = &snap.Identities[i]
	}
	return ids, bad
}

// call is one function_call: its name site, its namespace, and the decision that says
// what fix does with it (the rewrite of either member, else the name's).
type call struct {
	name   *store.Site
	ns     string
	hasNS  bool
	action naming.Decision
}

// historyCalls are the function_calls of the decisions sent to the model (call and
// compressed sites; a call's members share a Group), in order.
func historyCalls(in naming.DispatchInput) []*call {
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
	return calls
}

// finding is the re-dispatch finding of call c of the store at path: the stored name looked
// up among today's names against the identity its invocation record says was called; false
// when c is no MCP call or reaches what it called.
func (l lookup) finding(path string, c *call) (naming.Redispatch, bool) {
	if c.name == nil || c.name.Units != nil || (!c.hasNS && !mcpname.HasPrefix(c.name.Name) && !strings.Contains(c.name.Name, "__")) {
		return naming.Redispatch{}, false
	}
	stored := mcpname.CodexName{Namespace: c.ns, Name: c.name.Name}
	var called *mcpname.CodexTool
	from := ""
	if id := l.ids[c.name.CallID]; id != nil && !l.bad[c.name.CallID] {
		called = &mcpname.CodexTool{Server: id.Server, Tool: id.Tool}
		from = fmt.Sprintf("invocation record of call %s, line %d", c.name.CallID, id.Loc.Line)
	}
	class, got := mcpname.CodexDispatchIn(stored, called, l.alloc)
	if !class.Finding() {
		return naming.Redispatch{}, false
	}
	r := naming.Redispatch{Store: path, Loc: c.name.Loc, Agent: string(ID), Kind: string(c.name.Kind), JSONPath: c.name.Path,
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
		r.Rule = fmt.Sprintf("Codex: %s (over %s); the call was %s%s", how, l.label, r.Called, l.calledNote(*called, got[0], r.Called))
	}
	r.Fix = naming.DispatchFix(c.action, class)
	return r, true
}

// calledNote says why the called tool does not answer its call today (what it is named, or
// why it is not there) and, when got (what answers) has a server key that sanitizes like
// the called one's, that the keys collide; shown is how the called tool is written.
func (l lookup) calledNote(called, got mcpname.CodexTool, shown *naming.Tool) string {
	var own string
	switch n, ok := l.alloc[called]; {
	case ok:
		own = fmt.Sprintf("; %s itself is named %s / %s today", shown, n.Namespace, n.Name)
	case !mcpname.CodexServerNameValid(called.Server):
		own = fmt.Sprintf("; server key %q is not valid for Codex", called.Server)
	case !l.cp.Config.Registers(called):
		own = fmt.Sprintf("; %s does not register %s (server disabled or tool filtered)", l.cp.Config.Path, shown)
	default:
		own = fmt.Sprintf("; %s is not in %s", shown, l.label)
	}
	if got.Server != called.Server && mcpname.CodexSanitize(got.Server) == mcpname.CodexSanitize(called.Server) {
		own += fmt.Sprintf("; the keys %q and %q sanitize alike (every character outside [A-Za-z0-9_] becomes '_')", called.Server, got.Server)
	}
	return own
}

func dispatchTool(t mcpname.CodexTool) naming.Tool {
	return naming.Tool{Server: t.Server, Tool: t.Tool}
}
