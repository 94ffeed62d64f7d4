// Package rewrite turns scanned name sites into a plan (what would change, and why each other
// name is kept), applies a plan with backups and a journal, and undoes runs.
//
// The plan is data: Build is pure and deterministic (sorted), Apply consumes it, and dry-run
// only prints it. rewrite imports store (store/all to reopen stores for undo, store/jsonl and
// store/codex for the Codex rollout layout and config) and mcpname; it never imports scan,
// audit, reports or cmd.
package rewrite

import (
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/codex"
	"github.com/sessionfix/sessionfix/store/qwen"
)

// Action is what the plan does with one name site.
type Action string

// Actions of a Decision.
const (
	ActRewrite Action = "rewrite" // replaced by New
	ActKeep    Action = "keep"    // a legacy name deliberately kept (reported)
	ActNone    Action = "none"    // nothing to do (builtin, clean, normalized)
)

// Policy holds the user's choices for the rewrite rule (naming.md "Classes").
type Policy struct {
	// KeepTruncated keeps legacy-truncated-dotted names instead of normalizing them.
	KeepTruncated bool
	// RewriteLossy rewrites lossy-legacy names to the registered name of the one inventory
	// tool they belong to (needs Index).
	RewriteLossy bool
	// Index holds known raw identities (an inventory). May be nil.
	Index *mcpname.Index
	// Codex is what the Codex namer knows beyond the rollouts (inventory, config.toml).
	Codex CodexPolicy
	// CodexByPath holds, when one run covers rollouts of several Codex homes, the policy of
	// each rollout by its path (each home has its own config.toml and history); a rollout not
	// in it uses Codex. Read-only while stores are planned.
	CodexByPath map[string]*CodexPolicy
	// Claude is what the Claude Code namer knows beyond the sessions (claude.go); ClaudeByPath
	// the policy of each session by path when one run covers several Claude Code homes.
	Claude       ClaudePolicy
	ClaudeByPath map[string]*ClaudePolicy
}

// Decision is the verdict on one name site.
type Decision struct {
	// Site points into the snapshot's Sites (or at a site a Namer adds, such as a Codex
	// namespace member to insert); decisions never copy sites.
	Site   *store.Site   `json:"site"`
	Class  mcpname.Class `json:"class"`
	Action Action        `json:"action"`
	New    string        `json:"new,omitempty"`
	// Source says where New came from ("normalizeMcp", "inventory: mcp__lit__get+data", …).
	Source string `json:"source,omitempty"`
	// Note explains a keep or flags a rewrite ("no current tool answers to the new name").
	Note string `json:"note,omitempty"`
}

// KeepsRejected reports whether d keeps a name a provider rejects where the agent sends it back
// to the model (issue 8 item 3: a script must tell "all clean" from "broken session left as
// is"): a Codex call nothing attributes (ClassCodexUnattributed), or any other kept name outside
// the provider rule of mcpname.IsProviderSafe (^[A-Za-z][A-Za-z0-9_-]*$, at most 63 units: a
// dotted name kept by --keep-truncated, a key clash, a file that must not be written).
// Reported-only sites (raw identity records, permission rules) never count: no provider sees
// them. Middle-truncated and lossy legacy names are provider-safe, so keeping them is no
// finding.
func (d Decision) KeepsRejected() bool {
	if d.Action != ActKeep || d.Site == nil || d.Site.ReadOnly {
		return false
	}
	if d.Class == ClassCodexUnattributed {
		return true
	}
	if d.Site.Units != nil {
		return !mcpname.IsProviderSafeUnits(d.Site.Units)
	}
	return !mcpname.IsProviderSafe(d.Site.Name)
}

// StorePlan is the plan for one store.
type StorePlan struct {
	Store     store.Store     `json:"-"`
	Snap      *store.Snapshot `json:"-"`
	Decisions []Decision      `json:"decisions"`
	// Warnings are plan-level findings (a call and its response disagree, a key clash).
	Warnings []store.Problem `json:"warnings,omitempty"`
}

// Edits returns the edits of the store's rewrite decisions, in offset order.
func (sp *StorePlan) Edits() []store.Edit {
	var out []store.Edit
	for _, d := range sp.Decisions {
		if d.Action == ActRewrite {
			out = append(out, store.Edit{Site: *d.Site, New: d.New})
		}
	}
	return out
}

// Count returns how many names have action a. Sites of one Group (a Codex function_call's
// name and namespace) are one name, whose action is the strongest of its sites' (rewrite, then
// keep, then none).
func (sp *StorePlan) Count(a Action) int {
	n := 0
	for _, d := range sp.Names() {
		if d.Action == a {
			n++
		}
	}
	return n
}

// Names returns one decision per name: a lone site's own, or, for the sites of one Group, the
// first decision with the group's strongest action (see Count). The order is the plan's.
// Without groups it is sp.Decisions itself (no copy: read only).
func (sp *StorePlan) Names() []Decision {
	grouped := false
	for i := range sp.Decisions {
		if sp.Decisions[i].Site.Group != "" {
			grouped = true
			break
		}
	}
	if !grouped {
		return sp.Decisions
	}
	out := make([]Decision, 0, len(sp.Decisions))
	at := map[string]int{}
	for _, d := range sp.Decisions {
		if d.Site.Group == "" {
			out = append(out, d)
			continue
		}
		i, seen := at[d.Site.Group]
		switch {
		case !seen:
			at[d.Site.Group] = len(out)
			out = append(out, d)
		case actionRank(d.Action) > actionRank(out[i].Action):
			out[i] = d
		}
	}
	return out
}

func actionRank(a Action) int {
	switch a {
	case ActRewrite:
		return 2
	case ActKeep:
		return 1
	}
	return 0
}

// NameCount counts the names an edit list changes: edits of sites of one Group count once.
func NameCount(edits []store.Edit) int {
	n := 0
	groups := map[string]bool{}
	for _, e := range edits {
		if g := e.Site.Group; g != "" {
			if groups[g] {
				continue
			}
			groups[g] = true
		}
		n++
	}
	return n
}

// Plan is the whole plan, one StorePlan per readable store, sorted by path.
type Plan struct {
	Stores []*StorePlan
}

// Totals summarizes a plan: the counts of a run report, filled store by store by the caller's
// aggregate from each StorePlan's Names (sites), Count(ActRewrite) and kept decisions.
type Totals struct {
	Stores        int `json:"stores"`
	Sites         int `json:"sites"`
	Rewrite       int `json:"rewrite"`
	RewriteStores int `json:"rewrite_stores"`
	Kept          int `json:"kept"`
	KeptTruncated int `json:"kept_truncated"`
	// KeptRejected counts the kept names a provider rejects (Decision.KeepsRejected).
	KeptRejected int                   `json:"kept_rejected"`
	ByClass      map[mcpname.Class]int `json:"by_class"`
}

// Namer decides the fate of every site of one store. Implementations are pure.
type Namer interface {
	Decide(snap *store.Snapshot, pol Policy) []Decision
}

// NamerFor returns the naming rule of an agent: Qwen Code's normalizeMcp classes for "qwen",
// the current Codex name of each rejected call's raw identity for "codex" (codex.go), the
// current Claude Code name of each stored name's raw identity for "claude" (claude.go), and the
// provider-safe rule (normalize only names a provider rejects) for any other agent. Every agent
// is listed here explicitly.
func NamerFor(agent store.AgentID) Namer {
	switch agent {
	case qwen.ID:
		return qwenNamer{}
	case codex.ID:
		return codexNamer{}
	case "claude":
		return claudeNamer{}
	default:
		return providerSafeNamer{}
	}
}

// Build makes the plan for scanned stores (snapshots with their stores). Stores that could not
// be read are left out (the caller reports them). Each store is planned on its own (see
// PlanStore), so Build and the streaming Process give the same decisions.
func Build(scanned []Scanned, pol Policy) *Plan {
	p := &Plan{}
	for _, s := range scanned {
		if s.Snap == nil {
			continue
		}
		p.Stores = append(p.Stores, PlanStore(s.Store, s.Snap, pol))
	}
	sort.Slice(p.Stores, func(i, j int) bool { return p.Stores[i].Snap.Ref.Path < p.Stores[j].Snap.Ref.Path })
	return p
}

// PlanStore plans one scanned store: the agent's Namer decides each site, then a call and its
// response are checked to end with the same name and object keys are kept distinct. The index
// of known raw identities is completed with the store's own legacy-dotted names (Qwen Code
// treats a restored dotted name as a raw identity), so a name normalized from one of them in the
// same store classifies as "normalized". Decisions are sorted by position.
func PlanStore(st store.Store, snap *store.Snapshot, pol Policy) *StorePlan {
	pol.Index = enrichIndex(pol.Index, snap)
	sp := &StorePlan{Store: st, Snap: snap, Decisions: NamerFor(snap.Agent).Decide(snap, pol)}
	checkPairs(sp)
	checkKeyClashes(sp)
	if snap.NotWritable == "" && !utf8.ValidString(snap.Ref.Path) {
		// A run's manifest and a plan file are JSON: a path that is not UTF-8 would be recorded
		// with U+FFFD in it, and undo would look for (undo --force would create) another file.
		snap.NotWritable = "its path is not valid UTF-8 (a run manifest could not name it for undo)"
		if sp.Count(ActRewrite) > 0 { // an error of the store: the run is partial (exit 3)
			snap.Problems = append(snap.Problems, store.Problem{Severity: store.SevError,
				Reason: "the store's path is not valid UTF-8: not rewritten (a run manifest, JSON, could not name it for undo); rename the file to rewrite it"})
		}
	}
	if snap.NotWritable != "" {
		// The store must not be written (invalid UTF-8, …): what would have been rewritten is
		// kept and says why; the store's own problem makes the run partial.
		for i := range sp.Decisions {
			if d := &sp.Decisions[i]; d.Action == ActRewrite {
				d.Action, d.Note = ActKeep, fmt.Sprintf("not rewritten: %s (would be %s)", snap.NotWritable, d.New)
				d.New = ""
			}
		}
	}
	sort.SliceStable(sp.Decisions, func(i, j int) bool {
		a, b := sp.Decisions[i].Site.Loc, sp.Decisions[j].Site.Loc
		if a.Row != b.Row {
			return a.Row < b.Row
		}
		return a.Offset < b.Offset
	})
	return sp
}

// Scanned pairs a store with its snapshot.
type Scanned struct {
	Store store.Store
	Snap  *store.Snapshot
}

// enrichIndex returns ix plus the store's legacy-dotted names as raw identities (ix itself is
// not modified; nil when there is nothing to know).
func enrichIndex(ix *mcpname.Index, snap *store.Snapshot) *mcpname.Index {
	if snap.Agent != qwen.ID {
		return ix
	}
	var dotted []string
	for _, site := range snap.Sites {
		if site.Units == nil && mcpname.HasPrefix(site.Name) && !mcpname.IsProviderSafe(site.Name) && !mcpname.IsTruncationShape(site.Name) {
			dotted = append(dotted, site.Name)
		}
	}
	if len(dotted) == 0 {
		return ix
	}
	if ix == nil {
		return mcpname.NewIndex(dotted...)
	}
	return ix.Extend(dotted...)
}

// qwenNamer is Qwen Code 0.24.4's rule: normalizeMcp of each stored name, with the classes of
// naming.md deciding what is kept.
type qwenNamer struct{}

func (qwenNamer) Decide(snap *store.Snapshot, pol Policy) []Decision {
	out := make([]Decision, 0, len(snap.Sites))
	// A store repeats the same few names: classify each distinct name once (the result, New
	// included, is shared by its sites).
	cache := map[string]Decision{}
	for i := range snap.Sites {
		site := &snap.Sites[i]
		if site.Units == nil {
			if d, ok := cache[site.Name]; ok {
				d.Site = site
				out = append(out, readOnlyGuard(d))
				continue
			}
		}
		var c mcpname.Classification
		if site.Units != nil {
			c = mcpname.ClassifyUnits(site.Units, pol.Index)
		} else {
			c = mcpname.Classify(site.Name, pol.Index)
		}
		d := qwenDecision(site, c, pol)
		if site.Units == nil {
			cache[site.Name] = d
		}
		out = append(out, readOnlyGuard(d))
	}
	return out
}

// readOnlyGuard turns a rewrite of a read-only site into a keep.
func readOnlyGuard(d Decision) Decision {
	if d.Site.ReadOnly && d.Action == ActRewrite {
		d.Action, d.New, d.Note = ActKeep, "", readOnlyNote
	}
	return d
}

// qwenDecision applies the classes of naming.md to one classified name.
func qwenDecision(site *store.Site, c mcpname.Classification, pol Policy) Decision {
	d := Decision{Site: site, Class: c.Class, Action: ActNone}
	switch c.Class {
	case mcpname.ClassLegacyDotted:
		d.Action, d.New, d.Source = ActRewrite, c.Registered, "normalizeMcp"
	case mcpname.ClassLegacyTruncatedDotted:
		if pol.KeepTruncated {
			d.Action, d.Note = ActKeep, "middle-truncated legacy name kept (--keep-truncated)"
		} else {
			d.Action, d.New, d.Source = ActRewrite, c.Registered, "normalizeMcp"
			d.Note = "middle-truncated: no current tool answers to the new name"
		}
		if c.Owner != "" {
			d.Note += fmt.Sprintf("; legacy spelling of %s (registered %s)", c.Owner, c.OwnerRegistered)
		}
	case mcpname.ClassLegacyTruncated:
		d.Action, d.Note = ActKeep, "middle-truncated legacy name kept as it is (possibly truncated; its middle cannot be rebuilt)"
		if c.Owner == "" && mcpname.HasHashSuffix(site.Name) {
			// normalize keeps the "___" at 28 of a truncated dotted name and appends a
			// hash: this is most likely such a name already rewritten.
			d.Action, d.Note = ActNone, "truncation shape with a hash suffix: most likely a middle-truncated dotted name already normalized"
		}
		if c.Owner != "" {
			d.Note += fmt.Sprintf("; legacy spelling of %s (registered %s)", c.Owner, c.OwnerRegistered)
		}
	case mcpname.ClassLossyLegacy:
		if pol.RewriteLossy {
			d.Action, d.New, d.Source = ActRewrite, c.OwnerRegistered, "inventory: "+c.Owner
		} else {
			d.Action = ActKeep
			d.Note = fmt.Sprintf("lossy legacy spelling of %s (registered %s); rewrite with --rewrite-lossy", c.Owner, c.OwnerRegistered)
		}
	}
	return d
}

// readOnlyNote explains a site that is reported but never rewritten (raw identity records,
// permission rules kept in a store).
const readOnlyNote = "reported only: this record is never rewritten"

// providerSafeNamer rewrites only names a provider rejects, with Normalize (stores.md §3: for
// agents that do not use mcp__ names).
type providerSafeNamer struct{}

func (providerSafeNamer) Decide(snap *store.Snapshot, pol Policy) []Decision {
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
				d.Action, d.Note = ActKeep, readOnlyNote
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

// checkPairs verifies that a call and its response (same call id) end with the same name.
// The rule is a function of the stored name, so equal old names always end equal; differing
// ones are reported.
func checkPairs(sp *StorePlan) {
	type end struct {
		final string
		d     *Decision
	}
	calls := map[string]end{}
	final := func(d *Decision) string {
		if d.Action == ActRewrite {
			return d.New
		}
		return d.Site.Name
	}
	for i := range sp.Decisions {
		d := &sp.Decisions[i]
		if d.Site.CallID != "" && isCallSite(*d.Site) {
			calls[pairKey(*d.Site)] = end{final(d), d}
		}
	}
	for i := range sp.Decisions {
		d := &sp.Decisions[i]
		if d.Site.CallID == "" || !isResponseSite(*d.Site) {
			continue
		}
		c, ok := calls[pairKey(*d.Site)]
		if ok && c.final != final(d) {
			sp.Warnings = append(sp.Warnings, store.Problem{Loc: d.Site.Loc, Severity: store.SevWarning,
				Reason: fmt.Sprintf("response %q of call id %s ends as %q but its call (line %d) ends as %q",
					d.Site.Name, d.Site.CallID, final(d), c.d.Site.Loc.Line, c.final)})
		}
	}
}

func isCallSite(s store.Site) bool {
	return s.Kind == store.SiteCall || s.Field == "call"
}

func isResponseSite(s store.Site) bool {
	return s.Kind == store.SiteResponse || s.Field == "response"
}

// pairKey scopes call ids: the live history and each snapshot (compressed, bootstrap) pair
// separately.
func pairKey(s store.Site) string {
	scope := "history"
	if s.Kind == store.SiteCompressed || s.Kind == store.SiteBootstrap {
		scope = fmt.Sprintf("%s@%d", s.Kind, s.Loc.Line)
	}
	return scope + "\x00" + s.CallID
}

// checkKeyClashes cancels rewrites of object keys that would duplicate another key of the same
// object (JSON.parse keeps only the last duplicate, so counts would be lost).
func checkKeyClashes(sp *StorePlan) {
	byScope := map[string][]int{}
	for i, d := range sp.Decisions {
		if d.Site.Key && d.Site.Scope != "" {
			byScope[d.Site.Scope] = append(byScope[d.Site.Scope], i)
		}
	}
	for _, idx := range byScope {
		seen := map[string]int{}
		for _, i := range idx {
			d := &sp.Decisions[i]
			name := d.Site.Name
			if d.Action == ActRewrite {
				name = d.New
			}
			seen[name]++
		}
		for _, i := range idx {
			d := &sp.Decisions[i]
			if d.Action == ActRewrite && seen[d.New] > 1 {
				sp.Warnings = append(sp.Warnings, store.Problem{Loc: d.Site.Loc, Severity: store.SevWarning,
					Reason: fmt.Sprintf("key %q not renamed to %q: another key of the same object (%s) is or would become %q, and JSON keeps only one of duplicate keys", d.Site.Name, d.New, d.Site.Scope, d.New)})
				d.Action, d.Note = ActKeep, fmt.Sprintf("would duplicate key %q", d.New)
				d.New = ""
			}
		}
	}
}
