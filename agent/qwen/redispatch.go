package qwen

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// Redispatches checks each history call of a Qwen Code store. The called identity: the
// telemetry record of the same name (ui_telemetry mcp_server_name) names the server, and the
// inventory tool of that server whose raw, legacy (0.12.0) or registered (0.24.x) spelling is
// the stored name is the tool; without telemetry, the one inventory tool with that spelling.
// Today's lookup: Qwen Code 0.24.x sends NormalizeMcp(stored) and its registry is keyed by
// Normalize(Raw(server, tool)) (qwen-reference.md §1 Naming; the spec's "Where names are produced and consumed").
func Redispatches(in naming.DispatchInput) []naming.Redispatch {
	if in.Inventory == nil {
		return nil
	}
	inv := make([]mcpname.QwenTool, len(in.Inventory))
	for i, t := range in.Inventory {
		inv[i] = mcpname.QwenTool{Server: t.Server, Tool: t.Tool}
	}
	servers := map[string]map[string]int64{} // stored name → server → first telemetry line
	for _, s := range in.Snap.Sites {
		if s.Kind == store.SiteTelemetry && s.Server != "" {
			if servers[s.Name] == nil {
				servers[s.Name] = map[string]int64{}
			}
			if _, ok := servers[s.Name][s.Server]; !ok {
				servers[s.Name][s.Server] = s.Loc.Line
			}
		}
	}
	src := cmp.Or(in.InventorySource, "the inventory")
	qc := &qwenCache{tools: inv, reg: map[string][]mcpname.QwenTool{}, who: map[[2]string][]mcpname.QwenTool{}}
	var c naming.DispatchCollector
	for _, d := range in.Decisions {
		s := d.Site
		if !in.HistoryCall(s) || s.Units != nil || !mcpname.HasPrefix(s.Name) {
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
		r := naming.Redispatch{Store: in.Snap.Ref.Path, Loc: s.Loc, Agent: string(ID), Kind: string(s.Kind), JSONPath: s.Path,
			Stored: s.Name, Reaches: naming.Tools(got, dispatchTool)}
		if r.Reaches == nil {
			r.Reaches = []naming.Tool{}
		}
		var class mcpname.Dispatch
		switch {
		case len(callers) > 1:
			class = mcpname.DispatchSeveral
			r.Candidates = naming.Tools(callers, dispatchTool)
			why := "the spelling (raw, legacy of 0.12.0 where characters outside [A-Za-z0-9_.-] become '_', or registered of 0.24.x) of each of"
			if mcpname.IsTruncationShape(s.Name) {
				why = "the middle-truncated legacy name (28 units + \"___\" + the last 32) of each of"
			}
			r.Rule = fmt.Sprintf("Qwen Code: the stored name is %s %s, so which one was called cannot be told; sent today as %s, which reaches %s",
				why, naming.ToolList(r.Candidates), sent, naming.ReachText(r.Reaches))
		case len(callers) == 1:
			called := dispatchTool(callers[0])
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
			r.Rule = qwenRule(s.Name, sent, naming.Tool{}, r.Reaches, class)
		}
		if !class.Finding() {
			continue
		}
		r.Class, r.Fix = class.String(), naming.DispatchFix(d, class)
		c.Add(r)
	}
	return c.Out
}

// qwenRule explains a Qwen Code finding by its lookup rule.
func qwenRule(stored, sent string, called naming.Tool, reaches []naming.Tool, class mcpname.Dispatch) string {
	how := fmt.Sprintf("Qwen Code sends the stored call as normalizeMcp(%s) = %s", stored, sent)
	if sent == stored {
		how = fmt.Sprintf("Qwen Code sends the stored call %s as it is (provider-safe)", stored)
	}
	if class == mcpname.DispatchSeveral {
		return fmt.Sprintf("%s, the registered name of %d tools (%s): keys that flatten alike (normalize maps every character outside [A-Za-z0-9_-] to '_' and hashes only unsafe names, so a safe name can equal another tool's hashed one); the registry keeps the last one registered",
			how, len(reaches), naming.ToolList(reaches))
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

func dispatchTool(t mcpname.QwenTool) naming.Tool { return naming.Tool{Server: t.Server, Tool: t.Tool} }
