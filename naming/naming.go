// Package naming is the contract between the plan (package rewrite) and the agents' naming
// rules: a Namer decides, for every name site of one scanned store, what becomes of it (a
// Decision: rewrite to New, keep with a Note, or nothing), under a Policy (the user's choices
// plus what each agent's room knows beyond the stores: inventories, configurations).
//
// The naming rule of an agent lives in its room (agent/<agent>, its agent.Agent.Namer);
// naming itself holds the agent-neutral parts: the types, the provider-safe rule of agents
// without a rule of their own (ProviderSafe), and the typed per-agent slot of Policy. It sits
// below the rooms and the engines.
package naming

import (
	"maps"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

// Action is what the plan does with one name site.
type Action string

// Actions of a Decision.
const (
	ActRewrite Action = "rewrite" // replaced by New
	ActKeep    Action = "keep"    // a legacy name deliberately kept (reported)
	ActNone    Action = "none"    // nothing to do (builtin, clean, normalized)
)

// Decision is the verdict on one name site.
type Decision struct {
	// Site points into the snapshot's Sites (or at a site a Namer adds, such as a member to
	// insert); decisions never copy sites.
	Site   *store.Site   `json:"site"`
	Class  mcpname.Class `json:"class"`
	Action Action        `json:"action"`
	New    string        `json:"new,omitempty"`
	// Source says where New came from ("normalizeMcp", "inventory: mcp__lit__get+data", …).
	Source string `json:"source,omitempty"`
	// Note explains a keep or flags a rewrite ("no current tool answers to the new name").
	Note string `json:"note,omitempty"`
	// Rejected is set by a namer that found the stored name rejected by a provider although
	// the site's own text may pass the provider rule (a name whose whole stored form, e.g.
	// namespace + name, is what the agent sends); KeepsRejected counts such a kept name.
	Rejected bool `json:"-"`
	// Held says why the plan keeps a name its namer decided to rewrite, when the reason is the
	// store's or the plan's, not the name's (set by package rewrite): "its file is not rewritten:
	// invalid UTF-8 at line 5 of PATH", "it would duplicate a key of its JSON object"; "" when the
	// namer itself kept the name. The closing line names it instead of the class's reason.
	Held string `json:"-"`
}

// KeepsRejected reports whether d keeps a name a provider rejects where the agent sends it back
// to the model (issue 8 item 3: a script must tell "all clean" from "broken session left as
// is"): a name its namer marked Rejected (a call nothing attributes), or any other kept name
// outside the provider rule of mcpname.IsProviderSafe (^[A-Za-z][A-Za-z0-9_-]*$, at most 63
// units: a dotted name kept by --keep-truncated, a key clash, a file that must not be written).
// Reported-only sites (raw identity records, permission rules) never count: no provider sees
// them. Middle-truncated and lossy legacy names are provider-safe, so keeping them is no
// finding.
func (d Decision) KeepsRejected() bool {
	if d.Action != ActKeep || d.Site == nil || d.Site.ReadOnly {
		return false
	}
	if d.Rejected {
		return true
	}
	if d.Site.Units != nil {
		return !mcpname.IsProviderSafeUnits(d.Site.Units)
	}
	return !mcpname.IsProviderSafe(d.Site.Name)
}

// Namer decides the fate of every site of one store: one Decision per site (in site order),
// plus decisions on sites the namer adds (a member to insert). Implementations are pure and
// read pol only.
type Namer interface {
	Decide(snap *store.Snapshot, pol Policy) []Decision
}

// Appender is a Namer that appends its decisions to a slice it is given: a caller planning
// store after store (package rewrite's batches) hands the same memory back each time instead of
// a new slice per store (112 bytes a site: ~100 MB a scan of make bench's dense corpus).
// AppendDecisions(dst, snap, pol) returns append(dst, Decide(snap, pol)...), and reads dst's
// spare capacity as scratch only.
type Appender interface {
	Namer
	AppendDecisions(dst []Decision, snap *store.Snapshot, pol Policy) []Decision
}

// Policy holds the user's choices for the rewrite rule (naming.md "Classes") and, per agent,
// what that agent's namer knows beyond the stores (SetAgent/AgentOf).
type Policy struct {
	// KeepTruncated keeps legacy-truncated-dotted names instead of normalizing them.
	KeepTruncated bool
	// RewriteLossy rewrites lossy-legacy names to the registered name of the one inventory
	// tool they belong to (needs Index).
	RewriteLossy bool
	// Index holds known raw identities (an inventory). May be nil.
	Index *mcpname.Index

	// agents holds each agent's own policy, a *T only its room knows (SetAgent).
	agents map[store.AgentID]any
}

// SetAgent keeps v as agent id's own policy in pol (nil removes it). T is a type of the
// agent's room; copies of pol made before keep what they had. Not safe for concurrent use
// with readers of pol; a policy is read-only while stores are planned.
func SetAgent[T any](pol *Policy, id store.AgentID, v *T) {
	m := maps.Clone(pol.agents)
	if m == nil {
		m = map[store.AgentID]any{}
	}
	if v == nil {
		delete(m, id)
	} else {
		m[id] = v
	}
	pol.agents = m
}

// AgentOf returns the *T SetAgent kept for agent id in pol, or nil when pol keeps nothing for
// it or a value of another type.
func AgentOf[T any](pol Policy, id store.AgentID) *T {
	v, _ := pol.agents[id].(*T)
	return v
}

// PathPolicy is an agent's own policy for one run: Default, or, when the run covers stores of
// several homes of the agent (each with its own configuration), the policy of each store by
// its path in ByPath. Read-only while stores are planned.
type PathPolicy[T any] struct {
	Default T
	ByPath  map[string]*T
}

// For returns the policy of the store at path: its ByPath entry, else Default (the zero T for
// a nil p).
func (p *PathPolicy[T]) For(path string) T {
	if p == nil {
		var zero T
		return zero
	}
	if c := p.ByPath[path]; c != nil {
		return *c
	}
	return p.Default
}

// Add gives pol to the stores at paths, the way an agent's policy gathering hands out one
// policy per home: as Default when it is the only home's (only), else as one ByPath entry per
// store path (all pointing at one copy of pol).
func (p *PathPolicy[T]) Add(pol T, paths []string, only bool) {
	if only {
		p.Default = pol
		return
	}
	if p.ByPath == nil {
		p.ByPath = map[string]*T{}
	}
	for _, s := range paths {
		p.ByPath[s] = &pol
	}
}

// ClassInfo describes, for reports, a class an agent's namer gives beyond mcpname.Classes.
type ClassInfo struct {
	Class mcpname.Class
	// Action is what fix does with a name of the class (the "fix action" column of scan's
	// class table).
	Action string
	// Kept says why a kept name of the class is kept although a provider rejects it, and how
	// to get it rewritten (the summary's kept line); "" for a class whose names are never kept
	// rejected.
	Kept string
	// KeptInHome, when set, replaces Kept when every store of the agent was planned with the
	// configuration of an agent home given as PATH (advice to give the whole home is moot).
	KeptInHome string
}

// ReadOnlyNote explains a site that is reported but never rewritten (raw identity records,
// permission rules kept in a store).
const ReadOnlyNote = "reported only: this record is never rewritten"

// ReadOnlyGuard turns a rewrite of a read-only site into a keep (ReadOnlyNote).
func ReadOnlyGuard(d Decision) Decision {
	guardReadOnly(&d)
	return d
}

// guardReadOnly is ReadOnlyGuard in place.
func guardReadOnly(d *Decision) {
	if d.Site.ReadOnly && d.Action == ActRewrite {
		d.Action, d.New, d.Note = ActKeep, "", ReadOnlyNote
	}
}

// ProviderSafe rewrites only names a provider rejects, with mcpname.Normalize (stores.md §3:
// the rule of agents that have no naming rule of their own).
type ProviderSafe struct{}

// Decide implements Namer.
func (ProviderSafe) Decide(snap *store.Snapshot, pol Policy) []Decision {
	out := make([]Decision, 0, len(snap.Sites))
	for i := range snap.Sites {
		site := &snap.Sites[i]
		d := Decision{Site: site, Class: mcpname.ClassClean, Action: ActNone}
		safe := site.Units == nil && mcpname.IsProviderSafe(site.Name)
		if !mcpname.HasPrefix(site.Name) && safe {
			d.Class = mcpname.ClassBuiltin
		}
		if !safe {
			d.Class = mcpname.ClassLegacyDotted
			if site.ReadOnly {
				d.Action, d.Note = ActKeep, ReadOnlyNote
			} else {
				d.Action, d.Source = ActRewrite, "normalize"
				if site.Units != nil {
					d.New = mcpname.NormalizeUnits(site.Units)
				} else {
					d.New = mcpname.Normalize(site.Name)
				}
			}
		}
		out = append(out, d)
	}
	return out
}
