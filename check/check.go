// Package check says which providers (package provider) reject the tool names a plan found in
// session stores, and the declared names of an inventory, and whether the name the fix plan
// would write passes instead. It reads the plan rewrite.PlanStore computed (the scan pipeline's):
// no second scanner, no second naming rule.
//
// The name a provider sees: a site's stored name, except for a call whose name and namespace
// are two members (one Site.Group): the provider sees the one name the agent's room says
// (agent.Agent.SentName; "mcp__fs" + "read_file" → "mcp__fs__read_file", schemes.md §A.4).
// Sites no provider receives are not checked, and counted: telemetry, usage-record keys,
// bridge-call arguments, permission rules and read-only raw identity records.
package check

import (
	"fmt"
	"slices"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/provider"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

// Rejection is one provider's verdict on one name: the rules it breaks.
type Rejection struct {
	Provider *provider.Provider
	Rules    []provider.Violation
}

// Finding is one name site (or one declared tool) that some provider rejects now or after fix.
type Finding struct {
	// Store is the store path ("" for a declared inventory name); Loc its line or row.
	Store string
	Loc   store.Loc
	// Kind is the site kind ("call", "response", "compressed", …; "declared" for an
	// inventory tool) and JSONPath the value's path in its record.
	Kind     string
	JSONPath string
	// Name is the name the provider sees; Units its exact UTF-16 units when it holds a lone
	// surrogate (else nil).
	Name  string
	Units []uint16
	Class mcpname.Class
	// Action is the fix plan's action; After the name the provider would see after fix
	// (Name when fix leaves the site as it is).
	Action naming.Action
	After  string
	// Sent is what the agent release that resumes the session (Result.Release) sends instead
	// of Name ("" when it sends Name as stored), as the agent's room says (agent.Agent.SentAs);
	// the providers of its Sending.Verbatim receive Name all the same.
	Sent string
	// Now and Then are the rejections of the name each provider receives now (Sent or Name)
	// and of After (only providers that reject).
	Now, Then []Rejection
	// Release, Note and Fix are set for a name an agent release offers for a configured
	// tool (agent.Declared): the release, what the name stands for, what helps.
	Release, Note, Fix string
}

// Result is the check of a set of stores and declared names.
type Result struct {
	Findings []Finding
	// Checked counts the names checked (a name+namespace group once); Skipped the sites
	// not sent to any provider, by kind.
	Checked int
	Skipped map[string]int
	// Release is the release of agent ReleaseAgent that resumes that agent's sessions (check
	// --<agent>-version): what it sends is checked (Finding.Sent). "": the stored bytes. Set
	// them with SetRelease.
	Release      string
	ReleaseAgent store.AgentID
	sending      *agent.Sending
}

// Verbatim lists the providers that still receive the stored names under the release
// SetRelease set (agent.Sending.Verbatim; nil: none, or no release set).
func (r *Result) Verbatim() []string {
	if r.sending == nil {
		return nil
	}
	return r.sending.Verbatim
}

// SetRelease sets the release of agent id that resumes its sessions ("" or "stored": the
// stored bytes are checked); what that release sends is the room's agent.Agent.SentAs. A
// release that does not parse is an error.
func (r *Result) SetRelease(id store.AgentID, v string) error {
	r.Release, r.ReleaseAgent, r.sending = "", "", nil
	if v == "" || v == "stored" {
		return nil
	}
	a, ok := all.Lookup(id).(agent.SentAser)
	if !ok {
		return fmt.Errorf("%s: no release sends other names than the stored ones", id)
	}
	s, err := a.SentAs(v)
	if err != nil {
		return err
	}
	r.Release, r.ReleaseAgent, r.sending = v, id, s
	return nil
}

// sentTo is the name provider p receives for f: Sent, except for the providers that receive
// the stored name all the same (Sending.Verbatim).
func (r *Result) sentTo(p *provider.Provider, f *Finding) (string, []uint16) {
	if f.Sent == "" || r.sending == nil || slices.Contains(r.sending.Verbatim, p.ID) {
		return f.Name, f.Units
	}
	return f.Sent, nil
}

// sent reports whether a provider receives the names of sites of this kind.
func sent(s *store.Site) bool {
	if s.ReadOnly {
		return false
	}
	switch s.Kind {
	case store.SiteTelemetry, store.SiteUsageKey, store.SiteBridge, store.SiteRule:
		return false
	}
	// A search query or a listing of deferred tools reaches the model as text, not as tool
	// names; their names are checked where they are tool names.
	return !all.TextSite(s.Kind)
}

// Reject returns the providers of ps that reject name (units: see Finding.Units).
func Reject(ps []*provider.Provider, name string, units []uint16) []Rejection {
	var out []Rejection
	for _, p := range ps {
		if vs := p.Check(name, units); len(vs) > 0 {
			out = append(out, Rejection{Provider: p, Rules: vs})
		}
	}
	return out
}

// Store adds the findings of one store's plan to r, in the plan's order.
func (r *Result) Store(sp *rewrite.StorePlan, ps []*provider.Provider) {
	if r.Skipped == nil {
		r.Skipped = map[string]int{}
	}
	path := sp.Snap.Ref.Path
	groups := map[string][]naming.Decision{}
	for _, d := range sp.Decisions {
		if g := d.Site.Group; g != "" {
			groups[g] = append(groups[g], d)
		}
	}
	done := map[string]bool{}
	for _, d := range sp.Decisions {
		s := d.Site
		if !sent(s) {
			r.Skipped[string(s.Kind)]++
			continue
		}
		f := Finding{Store: path, Loc: s.Loc, Kind: string(s.Kind), JSONPath: s.Path, Class: d.Class, Action: d.Action}
		if g := s.Group; g != "" {
			if done[g] {
				continue
			}
			done[g] = true
			f.Name, f.After, f.Action = groupNames(sp.Snap.Agent, groups[g])
			if n := nameSite(groups[g]); n != nil {
				f.Loc, f.JSONPath, f.Class = n.Site.Loc, n.Site.Path, n.Class
			}
		} else {
			f.Name, f.Units, f.After = s.Name, s.Units, s.Name
			if d.Action == naming.ActRewrite {
				f.After = d.New
			}
			if r.sending != nil && sp.Snap.Agent == r.ReleaseAgent {
				if sent, ok := r.sending.Sent(s.Name, s.Units); ok {
					f.Sent = sent
				}
			}
		}
		r.Checked++
		if f.Sent == "" {
			f.Now = Reject(ps, f.Name, f.Units)
		} else {
			for _, p := range ps {
				name, units := r.sentTo(p, &f)
				if vs := p.Check(name, units); len(vs) > 0 {
					f.Now = append(f.Now, Rejection{Provider: p, Rules: vs})
				}
			}
		}
		if f.After == f.Name && f.Action != naming.ActRewrite {
			f.Then = f.Now
		} else {
			f.Then = Reject(ps, f.After, nil)
		}
		if len(f.Now) > 0 || len(f.Then) > 0 {
			r.Findings = append(r.Findings, f)
		}
	}
}

// nameSite is the decision of a group's "name" member (nil when it has none).
func nameSite(ds []naming.Decision) *naming.Decision {
	for i := range ds {
		if ds[i].Site.Field != "namespace" {
			return &ds[i]
		}
	}
	return nil
}

// groupNames is the flat name a provider sees for a name+namespace group, before and after
// fix, and the group's action (the strongest of its members', as StorePlan.Names).
func groupNames(id store.AgentID, ds []naming.Decision) (now, after string, act naming.Action) {
	var ns, name, ns2, name2 string
	act = naming.ActNone
	for _, d := range ds {
		v, v2 := d.Site.Name, d.Site.Name
		if d.Action == naming.ActRewrite {
			v2 = d.New
			act = naming.ActRewrite
		} else if d.Action == naming.ActKeep && act == naming.ActNone {
			act = naming.ActKeep
		}
		if d.Site.Field == "namespace" {
			ns, ns2 = v, v2
		} else {
			name, name2 = v, v2
		}
	}
	return flat(id, ns, name), flat(id, ns2, name2), act
}

// flat is what a provider sees of a namespace and name: the name alone without a namespace,
// else the agent's agent.Agent.SentName (the name alone for an agent without one).
func flat(id store.AgentID, ns, name string) string {
	if ns == "" {
		return name
	}
	if a, ok := all.Lookup(id).(agent.SentNamer); ok {
		return a.SentName(ns, name)
	}
	return name
}

// Declared adds the findings of declared tool names (an inventory's): each name as given,
// with kind ("declared", "declared-raw"), After the same name (fix never renames a declared
// tool).
func (r *Result) Declared(kind string, names []string, ps []*provider.Provider) {
	for _, n := range names {
		r.Checked++
		rej := Reject(ps, n, nil)
		if len(rej) > 0 {
			r.Findings = append(r.Findings, Finding{Kind: kind, Name: n, After: n, Action: naming.ActNone, Now: rej, Then: rej})
		}
	}
}

// Offered adds the findings of the names agent releases offer for their configured tools
// (agent.Prepared.Declared): each name as the release offers it, Store the config naming the
// tool, JSONPath "server/tool", After the same name (fix never renames a declared tool).
func (r *Result) Offered(ds []agent.Declared, ps []*provider.Provider) {
	for _, d := range ds {
		r.Checked++
		rej := Reject(ps, d.Name, nil)
		if len(rej) > 0 {
			r.Findings = append(r.Findings, Finding{Store: d.Source, Kind: "declared", JSONPath: d.Server + "/" + d.Tool, Name: d.Name, After: d.Name,
				Action: naming.ActNone, Now: rej, Then: rej, Release: d.Release, Note: d.Note, Fix: d.Fix})
		}
	}
}

// Count is how many findings provider id rejects now (then: after fix).
func (r *Result) Count(id string, then bool) int {
	n := 0
	for _, f := range r.Findings {
		rs := f.Now
		if then {
			rs = f.Then
		}
		if slices.ContainsFunc(rs, func(x Rejection) bool { return x.Provider.ID == id }) {
			n++
		}
	}
	return n
}
