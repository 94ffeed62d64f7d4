package kilo

import (
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// Classes of a Kilo name (reported by scan next to mcpname.Classes).
const (
	// ClassKiloRenamed: Kilo now registers the tool under another name (its sanitize of the
	// stored name); rewritten to it.
	ClassKiloRenamed mcpname.Class = "kilo-renamed"
	// ClassKiloOverLong: a name over 64 UTF-16 units that Kilo still registers for a
	// configured tool (it has no cap); kept.
	ClassKiloOverLong mcpname.Class = "kilo-over-long"
	// ClassKiloGone: a name over 64 of a tool --inventory / --discover shows is no longer
	// configured; rewritten to a provider-safe name (mcpname.Normalize).
	ClassKiloGone mcpname.Class = "kilo-gone"
	// ClassKiloShared: the name Kilo now registers for the stored name is shared by two raw
	// tools (the later answers); kept, a rewrite could send the call to the other tool.
	ClassKiloShared mcpname.Class = "kilo-shared"
)

// Classes describes the Kilo-only classes in report order (agent.Agent.Classes).
var Classes = []naming.ClassInfo{
	{Class: ClassKiloRenamed, Action: "rewrite to the name the current Kilo registers (its sanitize of the stored name)"},
	{Class: ClassKiloOverLong, Action: "keep (Kilo registers it as is, over 64; providers with a 64 limit reject it)",
		Kept: "the name Kilo registers for a configured tool (over 64: providers with a 64 limit reject the live tool list too); fix: shorten the tool's name at its server or disable the tool, then run fix with --inventory or --discover showing it gone"},
	{Class: ClassKiloGone, Action: "rewrite to a provider-safe name (normalize): no configured tool has it any more"},
	{Class: ClassKiloShared, Action: "keep (two raw tools share the name Kilo registers now; the later answers)",
		Kept: "Kilo now gives this name to two raw tools and the later one answers: a rewrite would send the call to the other tool"},
}

// Policy is what the Kilo namer knows beyond the database: the raw tools configured now.
type Policy struct {
	// Tools are the raw tools of --inventory and --discover, in configuration order; nil:
	// none known (over-long names are then kept).
	Tools []agent.Tool
	// Source names them in notes ("inventory tools.json").
	Source string
}

// byName maps each model-facing name of p's tools to the raw tools behind it (nil: no tools).
func (p Policy) byName() map[string][]agent.Tool {
	if p.Tools == nil {
		return nil
	}
	m := map[string][]agent.Tool{}
	for _, t := range p.Tools {
		n := mcpname.KiloName(t.Server, t.Tool)
		m[n] = append(m[n], t)
	}
	return m
}

type namer struct{}

// Decide implements naming.Namer: the names Kilo's current release registers differently (the
// package comment).
func (namer) Decide(snap *store.Snapshot, pol naming.Policy) []naming.Decision {
	kp := naming.AgentOf[naming.PathPolicy[Policy]](pol, ID).For(snap.Ref.Path)
	names := kp.byName()
	source := kp.Source
	if source == "" {
		source = "the inventory"
	}
	out := make([]naming.Decision, len(snap.Sites))
	for i := range snap.Sites {
		out[i] = decide(&snap.Sites[i], names, source)
	}
	return out
}

// decide is the decision on one site (names: the current tools by name, nil when unknown).
func decide(site *store.Site, names map[string][]agent.Tool, source string) naming.Decision {
	d := naming.Decision{Site: site, Class: mcpname.ClassClean, Action: naming.ActNone}
	name := site.Name
	safe := site.Units == nil && mcpname.IsProviderSafe(name)
	if safe && !mcpname.HasPrefix(name) {
		d.Class = mcpname.ClassBuiltin
	}
	if site.ReadOnly {
		if !safe {
			d.Class, d.Action, d.Note = mcpname.ClassLegacyDotted, naming.ActKeep, naming.ReadOnlyNote
		}
		return d
	}
	// A lone surrogate is U+FFFD in Name: one unit for one unit, and both become "_".
	cur := mcpname.KiloSanitize(name)
	gone := names != nil && len(names[cur]) == 0
	switch {
	case cur != name && len(names[cur]) > 1:
		d.Class, d.Action = ClassKiloShared, naming.ActKeep
		d.Note = fmt.Sprintf("Kilo now registers %s for %s; the last answers", cur, toolList(names[cur]))
	case cur != name && gone && mcpname.Len(cur) > 64:
		d.Class, d.Action, d.New = ClassKiloGone, naming.ActRewrite, mcpname.Normalize(name)
		d.Source = "normalize: no configured tool has this name (" + source + ")"
	case cur != name:
		d.Class, d.Action, d.New, d.Source = ClassKiloRenamed, naming.ActRewrite, cur, "Kilo's sanitize"
		if gone {
			d.Note = "no configured tool has this name (" + source + ")"
		}
		if mcpname.Len(cur) > 64 {
			d.Note = strings.TrimPrefix(d.Note+"; still over 64: Kilo registers it so", "; ")
		}
	case mcpname.Len(name) > 64 && gone:
		d.Class, d.Action, d.New = ClassKiloGone, naming.ActRewrite, mcpname.Normalize(name)
		d.Source = "normalize: no configured tool has this name (" + source + ")"
	case mcpname.Len(name) > 64:
		d.Class, d.Action = ClassKiloOverLong, naming.ActKeep
		d.Note = "Kilo registers this name for a configured tool; shorten the tool's name at its server or disable it"
		if names == nil {
			d.Note = "Kilo registers this name while the tool is configured; shorten the tool's name at its server or disable it, then pass --inventory or --discover"
		}
	}
	return d
}

// toolList names raw tools as "server/tool, server/tool".
func toolList(ts []agent.Tool) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.Server + "/" + t.Tool
	}
	return strings.Join(parts, " and ")
}
