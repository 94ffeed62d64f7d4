package check

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/all"
	"github.com/sessionfix/sessionfix/store/qwen"
)

// Re-dispatch detection (issue 13 item 3): for each stored history call, the tool(s) it
// reaches TODAY by the agent's own lookup (mcpname.QwenResolve, mcpname.CodexResolve,
// mcpname.ClaudeDispatch) over the current tool set (an inventory, --discover, or what the
// agent's configuration and history record), compared with the raw identity that was called.
// Only two classes are findings: redispatch (one tool, another raw identity than the one
// called) and ambiguous (several tools, or a stored spelling several tools share so the one
// called cannot be told). Nothing here rewrites anything; the fix plan's decision is quoted.

// Tool is a raw MCP identity (naming.Tool).
type Tool = naming.Tool

// Lookup is what re-dispatch detection knows of the current tool set beyond the stores.
type Lookup struct {
	// Qwen are the tools Qwen Code registers today (an --inventory), in the order given;
	// QwenSource names them in explanations ("inventory.json"). nil: Qwen calls are not checked.
	Qwen       []mcpname.QwenTool
	QwenSource string
	// Policy is the fix plan's: its per-agent slots (naming.AgentOf) hold the Codex tool sets
	// (inventory, else thread history, filtered by config.toml) and the Claude Code tools
	// (--inventory / --discover).
	Policy rewrite.Policy
}

// Redispatch is one stored call whose lookup today is a finding (naming.Redispatch).
type Redispatch = naming.Redispatch

// NewQwenTools lists an inventory's servers (sorted by key) and tools as Qwen tools.
func NewQwenTools(servers map[string][]string) []mcpname.QwenTool {
	var out []mcpname.QwenTool
	for _, k := range slices.Sorted(maps.Keys(servers)) {
		for _, t := range servers[k] {
			out = append(out, mcpname.QwenTool{Server: k, Tool: t})
		}
	}
	return out
}

// historyCall reports whether a site is a call name the agent sends back as history
// (naming.DispatchInput.HistoryCall with check's sent).
func historyCall(s *store.Site) bool { return naming.DispatchInput{Sent: sent}.HistoryCall(s) }

// Redispatches returns the findings of one store's plan, in the plan's order, one per distinct
// (stored call, called identity) with its count. An agent without a known tool set gives none.
func Redispatches(sp *rewrite.StorePlan, lk *Lookup) []Redispatch {
	if lk == nil || sp == nil || sp.Snap == nil {
		return nil
	}
	if a := all.Lookup(sp.Snap.Agent); a != nil && a.Redispatches != nil {
		return a.Redispatches(naming.DispatchInput{Snap: sp.Snap, Decisions: sp.Decisions, Policy: lk.Policy, Sent: sent})
	}
	switch sp.Snap.Agent {
	case qwen.ID:
		return qwenRedispatches(sp, lk)
	}
	return nil
}

type collector = naming.DispatchCollector

func fixText(d rewrite.Decision, class mcpname.Dispatch) string { return naming.DispatchFix(d, class) }

func tools[T any](ts []T, conv func(T) Tool) []Tool { return naming.Tools(ts, conv) }

func qwenTool(t mcpname.QwenTool) Tool { return Tool{Server: t.Server, Tool: t.Tool} }

func toolList(ts []Tool) string { return naming.ToolList(ts) }

// qwenRedispatches checks each history call of a Qwen Code store. The called identity: the
// telemetry record of the same name (ui_telemetry mcp_server_name) names the server, and the
// inventory tool of that server whose raw, legacy (0.12.0) or registered (0.24.x) spelling is
// the stored name is the tool; without telemetry, the one inventory tool with that spelling.
// Today's lookup: Qwen Code 0.24.x sends NormalizeMcp(stored) and its registry is keyed by
// Normalize(Raw(server, tool)) (qwen-reference.md §1 Naming; the spec's "Where names are produced and consumed").
func qwenRedispatches(sp *rewrite.StorePlan, lk *Lookup) []Redispatch {
	if lk.Qwen == nil {
		return nil
	}
	servers := map[string]map[string]int64{} // stored name → server → first telemetry line
	for _, s := range sp.Snap.Sites {
		if s.Kind == store.SiteTelemetry && s.Server != "" {
			if servers[s.Name] == nil {
				servers[s.Name] = map[string]int64{}
			}
			if _, ok := servers[s.Name][s.Server]; !ok {
				servers[s.Name][s.Server] = s.Loc.Line
			}
		}
	}
	src := cmp.Or(lk.QwenSource, "the inventory")
	qc := &qwenCache{tools: lk.Qwen, reg: map[string][]mcpname.QwenTool{}, who: map[[2]string][]mcpname.QwenTool{}}
	var c collector
	for _, d := range sp.Decisions {
		s := d.Site
		if !historyCall(s) || s.Units != nil || !mcpname.HasPrefix(s.Name) {
			continue
		}
		server, from := "", ""
		if sv := servers[s.Name]; len(sv) == 1 {
			for k, line := range sv {
				server, from = k, fmt.Sprintf("telemetry mcp_server_name %q, line %d", k, line)
			}
		}
		callers := qc.callers(s.Name, server)
		if len(callers) == 0 && server != "" {
			callers = qc.callers(s.Name, "")
			from = ""
		}
		got := qc.resolve(s.Name)
		sent := mcpname.NormalizeMcp(s.Name)
		r := Redispatch{Store: sp.Snap.Ref.Path, Loc: s.Loc, Agent: string(qwen.ID), Kind: string(s.Kind), JSONPath: s.Path,
			Stored: s.Name, Reaches: tools(got, qwenTool)}
		if r.Reaches == nil {
			r.Reaches = []Tool{}
		}
		var class mcpname.Dispatch
		switch {
		case len(callers) > 1:
			class = mcpname.DispatchSeveral
			r.Candidates = tools(callers, qwenTool)
			why := "the spelling (raw, legacy of 0.12.0 where characters outside [A-Za-z0-9_.-] become '_', or registered of 0.24.x) of each of"
			if mcpname.IsTruncationShape(s.Name) {
				why = "the middle-truncated legacy name (28 units + \"___\" + the last 32) of each of"
			}
			r.Rule = fmt.Sprintf("Qwen Code: the stored name is %s %s, so which one was called cannot be told; sent today as %s, which reaches %s",
				why, toolList(r.Candidates), sent, reachText(r.Reaches))
		case len(callers) == 1:
			called := qwenTool(callers[0])
			r.Called, r.CalledFrom = &called, from
			if from == "" {
				r.CalledFrom = "the only tool of " + src + " with this spelling"
			}
			class = mcpname.QwenClassify(got, callers[0])
			if class.Finding() {
				r.Rule = qwenRule(s.Name, sent, called, r.Reaches, class)
			}
		default:
			if len(got) < 2 {
				continue // no tool of the inventory spells it: nothing to compare
			}
			class = mcpname.DispatchSeveral
			r.Rule = qwenRule(s.Name, sent, Tool{}, r.Reaches, class)
		}
		if !class.Finding() {
			continue
		}
		r.Class, r.Fix = class.String(), fixText(d, class)
		c.Add(r)
	}
	return c.Out
}

func reachText(ts []Tool) string { return naming.ReachText(ts) }

// qwenRule explains a Qwen Code finding by its lookup rule.
func qwenRule(stored, sent string, called Tool, reaches []Tool, class mcpname.Dispatch) string {
	how := fmt.Sprintf("Qwen Code sends the stored call as normalizeMcp(%s) = %s", stored, sent)
	if sent == stored {
		how = fmt.Sprintf("Qwen Code sends the stored call %s as it is (provider-safe)", stored)
	}
	if class == mcpname.DispatchSeveral {
		return fmt.Sprintf("%s, the registered name of %d tools (%s): keys that flatten alike (normalize maps every character outside [A-Za-z0-9_-] to '_' and hashes only unsafe names, so a safe name can equal another tool's hashed one); the registry keeps the last one registered",
			how, len(reaches), toolList(reaches))
	}
	r := reaches[0]
	why := ""
	if mcpname.Legacy(mcpname.Raw(called.Server, called.Tool)) == stored && stored != mcpname.Raw(called.Server, called.Tool) {
		why = fmt.Sprintf(" (the stored name is the legacy spelling of %s, where '%s' flattened to '_')", called, flattened(called.Server+called.Tool))
	}
	return fmt.Sprintf("%s, the registered name of %s (normalize(%s)); the call was %s%s", how, r, mcpname.Raw(r.Server, r.Tool), called, why)
}

// flattened lists the characters Legacy replaces in s (outside [A-Za-z0-9_.-]).
func flattened(s string) string {
	var out []string
	seen := map[rune]bool{}
	for _, c := range s {
		ok := c < 128 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-')
		if !ok && !seen[c] {
			seen[c] = true
			out = append(out, string(c))
		}
	}
	return strings.Join(out, "', '")
}

// qwenCache looks the names of one store up once each: a store repeats the same few names, and
// each lookup normalizes every tool of the inventory.
type qwenCache struct {
	tools []mcpname.QwenTool
	reg   map[string][]mcpname.QwenTool
	who   map[[2]string][]mcpname.QwenTool
}

func (q *qwenCache) resolve(name string) []mcpname.QwenTool {
	r, ok := q.reg[name]
	if !ok {
		r = mcpname.QwenResolve(name, q.tools)
		q.reg[name] = r
	}
	return r
}

func (q *qwenCache) callers(name, server string) []mcpname.QwenTool {
	k := [2]string{name, server}
	r, ok := q.who[k]
	if !ok {
		r = mcpname.QwenCallers(name, server, q.tools)
		q.who[k] = r
	}
	return r
}
