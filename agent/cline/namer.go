package cline

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// Cline's repair (issue 27 item 4), opt-in:
//
//   - A Cline 2.x task: 2.18.0 resends the history verbatim, with the uids of the run that
//     wrote it, beside a live tool list of new uids; a strict endpoint rejects a dotted, "+" or
//     non-ASCII name in either. A rejected stored name uid + "0mcp0" + tool is rewritten to the
//     same uid + "0mcp0" + the sanitized tool (Cline2Repair) only when --inventory (or
//     --discover) confirms the call's raw tool (its server read from the call's result text)
//     and only when that leaves a name a provider accepts; everything else is kept and
//     reported. Rewriting history never helps while 2.x still offers the tool by its raw name:
//     the fix there is the server's tool name or disabling the tool (check says so).
//   - A Cline 3.x session: every name 3.x writes is provider-safe; a stored name that is not
//     (written by another rule) gets the 3.x rule (mcpname.Cline3Normalize of the stored name).
//
// Provider-safe names are never rewritten. A 2.x MCP name always carries a uid of the run that
// wrote it, which no current tool has (cline2-old-uid, reported); a 3.x name that no tool of
// --inventory has is reported when the inventory is given (cline3-no-tool).

// Classes of a Cline name (reported by scan next to mcpname.Classes).
const (
	// ClassCline2Renamed: a rejected 2.x name of a tool --inventory confirms, rewritten to the
	// same uid and the sanitized tool.
	ClassCline2Renamed mcpname.Class = "cline2-renamed"
	// ClassCline2Rejected: a rejected 2.x name kept (its tool not confirmed, or its server
	// unknown).
	ClassCline2Rejected mcpname.Class = "cline2-rejected"
	// ClassCline2OldUID: a provider-safe 2.x MCP name; its uid belongs to the run that wrote it
	// (no current tool has it), which 2.x resends as it is.
	ClassCline2OldUID mcpname.Class = "cline2-old-uid"
	// ClassCline3Renamed: a 3.x name a provider rejects, rewritten by the 3.x rule.
	ClassCline3Renamed mcpname.Class = "cline3-renamed"
	// ClassCline3NoTool: a 3.x name no tool of the inventory has.
	ClassCline3NoTool mcpname.Class = "cline3-no-tool"
)

// Classes describes the Cline-only classes in report order (agent.Agent.Classes).
var Classes = []naming.ClassInfo{
	{Class: ClassCline2Renamed, Action: "rewrite to the same uid + the sanitized tool (a tool --inventory confirms)"},
	{Class: ClassCline2Rejected, Action: "keep (Cline 2.x name a provider rejects; its tool not confirmed by --inventory)",
		Kept: "a Cline 2.x call of a tool --inventory does not confirm (or whose server is unknown); while the tool is configured 2.x offers the same name live: rename the tool at its server or disable it, then confirm it with --inventory"},
	{Class: ClassCline2OldUID, Action: "report (Cline 2.x name with the uid of the run that wrote it; accepted)"},
	{Class: ClassCline3Renamed, Action: "rewrite by Cline 3.x's rule (sanitize, cut to 55, SHA-1 suffix)"},
	{Class: ClassCline3NoTool, Action: "report (no tool of --inventory has this Cline 3.x name)"},
}

// Policy is what the Cline namer knows beyond the stores: the raw tools the user confirms.
type Policy struct {
	// Tools are the raw tools of --inventory and --discover, in order; nil: none confirmed.
	Tools []agent.Tool
	// Source names them in notes ("inventory tools.json").
	Source string
}

// Cline2Repair is the tool part the repair writes for raw tool of a server whose other tools
// are others: the tool sanitized as Cline 3.x sanitizes (each run of characters outside
// [A-Za-z0-9_-] becomes one "_"); when that is another tool's name on the same server, "_"
// and the first 8 hex digits of SHA-1 of the raw tool are appended (3.x's disambiguation), so
// two calls of two tools never share a name.
func Cline2Repair(tool string, others []string) string {
	s := mcpname.Cline3Sanitize(tool)
	if s == "" {
		s = "mcp_tool"
	}
	if slices.Contains(others, s) {
		sum := sha1.Sum([]byte(tool))
		s += "_" + hex.EncodeToString(sum[:])[:8]
	}
	return s
}

type namer struct{}

// Decide implements naming.Namer (see the comment at the top of this file).
func (namer) Decide(snap *store.Snapshot, pol naming.Policy) []naming.Decision {
	p := naming.AgentOf[naming.PathPolicy[Policy]](pol, ID).For(snap.Ref.Path)
	out := make([]naming.Decision, len(snap.Sites))
	for i := range snap.Sites {
		if snap.Ref.Kind == KindSession {
			out[i] = decide3(&snap.Sites[i], p)
		} else {
			out[i] = decide2(&snap.Sites[i], p)
		}
	}
	return out
}

// safe reports whether a stored name passes ^[a-zA-Z0-9_-]{1,64}$ (a lone surrogate never does).
func safe(site *store.Site) bool { return site.Units == nil && mcpname.IsClineSafe(site.Name) }

func (p Policy) source() string {
	if p.Source == "" {
		return "the inventory"
	}
	return p.Source
}

// confirmed reports whether the policy's tools hold server/tool, and the other tools of server.
func (p Policy) confirmed(server, tool string) (ok bool, others []string) {
	for _, t := range p.Tools {
		if t.Server != server {
			continue
		}
		if t.Tool == tool {
			ok = true
		} else {
			others = append(others, t.Tool)
		}
	}
	return ok, others
}

func decide2(site *store.Site, p Policy) naming.Decision {
	d := naming.Decision{Site: site, Class: mcpname.ClassClean, Action: naming.ActNone}
	uid, tool, mcp := mcpname.Cline2Split(site.Name)
	switch {
	case !mcp && safe(site):
		d.Class = mcpname.ClassBuiltin
		return d
	case !mcp:
		d.Class, d.Action = ClassCline2Rejected, naming.ActKeep
		d.Note = "not a Cline 2.x MCP name (uid + 0mcp0 + tool): kept"
		return d
	case safe(site):
		d.Class = ClassCline2OldUID
		d.Note = "uid " + uid + " of the run that wrote it"
		if site.Server != "" {
			d.Note += " (server " + site.Server + ")"
		}
		return d
	}
	d.Class, d.Action = ClassCline2Rejected, naming.ActKeep
	if site.Server == "" {
		d.Note = fmt.Sprintf("tool %s of an unknown server (no result text names it): kept", tool)
		return d
	}
	ok, others := p.confirmed(site.Server, tool)
	if !ok {
		d.Note = fmt.Sprintf("%s/%s: while it is configured Cline 2.x offers it as <uid>0mcp0%s and every request fails; rename the tool at its server or disable it, and confirm it with --inventory to rewrite its history", site.Server, tool, tool)
		if p.Tools != nil {
			d.Note = fmt.Sprintf("%s/%s is not in %s: kept", site.Server, tool, p.source())
		}
		return d
	}
	nw := uid + mcpname.Cline2Marker + Cline2Repair(tool, others)
	if !mcpname.IsClineSafe(nw) {
		d.Note = fmt.Sprintf("%s/%s: the sanitized name %s is still over %d: kept", site.Server, tool, nw, mcpname.ClineMaxLength)
		return d
	}
	d.Class, d.Action, d.New = ClassCline2Renamed, naming.ActRewrite, nw
	d.Source = fmt.Sprintf("%s/%s confirmed by %s; same uid, sanitized tool", site.Server, tool, p.source())
	return d
}

func decide3(site *store.Site, p Policy) naming.Decision {
	d := naming.Decision{Site: site, Class: mcpname.ClassClean, Action: naming.ActNone}
	if !safe(site) {
		d.Class, d.Action, d.New, d.Source = ClassCline3Renamed, naming.ActRewrite, mcpname.Cline3Normalize(site.Name), "Cline 3.x's rule"
		return d
	}
	if p.Tools == nil {
		return d
	}
	for _, t := range p.Tools {
		if mcpname.Cline3Name(t.Server, t.Tool) == site.Name {
			return d
		}
	}
	for _, t := range p.Tools {
		if len(site.Name) > len(mcpname.Cline3Sanitize(t.Server))+2 && site.Name[:len(mcpname.Cline3Sanitize(t.Server))+2] == mcpname.Cline3Sanitize(t.Server)+mcpname.Cline3Join {
			d.Class = ClassCline3NoTool
			d.Note = fmt.Sprintf("no tool of %s is named %s by Cline 3.x (server %s)", p.source(), site.Name, t.Server)
			return d
		}
	}
	d.Class = mcpname.ClassBuiltin
	return d
}
