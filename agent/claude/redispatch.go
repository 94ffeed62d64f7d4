package claude

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// Redispatches checks each tool_use of a Claude Code session against the tools of
// --inventory / --discover (configuration order; ClaudePolicy.Tools of the plan's policy).
// The called identity: the one tool the release that wrote the line (its "version") named
// so; from 2.1.50 on, the first of several. Today's lookup: mcpname.ClaudeDispatch in the era
// of the current release (ClaudePolicy.Version, else the newest recorded). No tools: none.
func Redispatches(in naming.DispatchInput) []naming.Redispatch {
	cp := naming.AgentOf[naming.PathPolicy[ClaudePolicy]](in.Policy, ID).For(in.Snap.Ref.Path)
	if cp.Tools == nil {
		return nil
	}
	version := cmp.Or(cp.Version, mcpname.ClaudeLatestVersion)
	now, err := mcpname.ClaudeEraOf(version)
	if err != nil {
		now = mcpname.ClaudeEraDedup
	}
	meta := ClaudeMetaOf(in.Snap)
	var col naming.DispatchCollector
	for _, d := range in.Decisions {
		s := d.Site
		if s.Kind != store.SiteCall || s.ReadOnly || s.Absent() || !mcpname.HasPrefix(s.Name) {
			continue
		}
		var called *mcpname.ClaudeTool
		from := ""
		wrote := ""
		if meta != nil {
			wrote = meta.VersionAt(s.Loc.Line)
		}
		if e, err := mcpname.ClaudeEraOf(wrote); err == nil {
			ts := mcpname.ClaudeToolsNamed(e, s.Name, cp.Tools)
			switch {
			case len(ts) == 1:
				called, from = &ts[0], fmt.Sprintf("the only tool Claude Code %s (line %d) named so (%s era)", wrote, s.Loc.Line, e)
			case len(ts) > 1 && e >= mcpname.ClaudeEraDedup:
				called, from = &ts[0], fmt.Sprintf("the first of %d tools sharing the name, which answered in Claude Code %s (line %d)", len(ts), wrote, s.Loc.Line)
			}
		}
		class, got := mcpname.ClaudeDispatch(now, s.Name, called, cp.Tools)
		if !class.Finding() {
			continue
		}
		r := naming.Redispatch{Store: in.Snap.Ref.Path, Loc: s.Loc, Agent: string(ID), Kind: string(s.Kind), JSONPath: s.Path,
			Stored: s.Name, Class: class.String(), Reaches: naming.Tools(got, dispatchTool), CalledFrom: from}
		if called != nil {
			t := dispatchTool(*called)
			r.Called = &t
		}
		if class == mcpname.DispatchOther && len(got) > 1 {
			r.Reaches = r.Reaches[:1]
			r.Candidates = naming.Tools(got, dispatchTool)
		}
		names := "normalize maps every character outside [a-zA-Z0-9_-] of the server key and the tool to '_'"
		if class == mcpname.DispatchSeveral {
			r.Rule = fmt.Sprintf("Claude Code %s gives %d tools (%s) the same name %s (%s); the call cannot be attributed to one of them (the release that wrote it offered the name once per tool)", version, len(got), naming.ToolList(r.Reaches), s.Name, names)
		} else if len(got) > 1 {
			r.Rule = fmt.Sprintf("Claude Code %s gives %s the same name %s (%s), offers it once and the first configured answers: %s; the call was %s", version, strings.Join(strings.Split(naming.ToolList(r.Candidates), ", "), " and "), s.Name, names, r.Reaches[0], r.Called)
		} else {
			r.Rule = fmt.Sprintf("Claude Code %s names %s %s (%s); the call was %s", version, r.Reaches[0], s.Name, names, r.Called)
		}
		r.Fix = naming.DispatchFix(d, class)
		col.Add(r)
	}
	return col.Out
}

func dispatchTool(t mcpname.ClaudeTool) naming.Tool {
	return naming.Tool{Server: t.Server, Tool: t.Tool}
}
