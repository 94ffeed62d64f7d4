// Package rewrite turns scanned name sites into a plan (what would change, and why each other
// name is kept) and applies it, store by store, through the one worker pool; each rewrite is
// recorded in a run (package runlog: run directory, backups, journal, manifest, undo).
//
// The plan is data: Build is pure and deterministic (sorted), Apply consumes it, and dry-run
// only prints it. The naming rules are the agents' (agent.Agent.Namer in each room, found
// through agent/all by NamerFor); rewrite adds what holds for every agent (a call and its
// response end alike, object keys stay distinct, unwritable stores are kept).
package rewrite

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/freelist"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// StorePlan is the plan for one store.
type StorePlan struct {
	Store     store.Store       `json:"-"`
	Snap      *store.Snapshot   `json:"-"`
	Decisions []naming.Decision `json:"decisions"`
	// Warnings are plan-level findings (a call and its response disagree, a key clash).
	Warnings []store.Problem `json:"warnings,omitempty"`
	// notWritten counts the rewrites held because the store must not be written
	// (Snapshot.NotWritable): notWritableProblem.
	notWritten int
	// pooled says Decisions came from freeDecisions (planStore): release gives them back.
	pooled bool
	// ungrouped says no decision's site has a Group (set by planStore, which looked): Names is
	// then Decisions without a look at every site (Count, Names and the summary ask several
	// times per plan).
	ungrouped bool
	// pairs counts the plan's call and response sites (countPairSites) once pairsKnown; calls
	// is the index of its calls (callsOf) once built and while valid (nil after a sort of the
	// decisions, and once they were released): checkPairsOf makes both, and checkPairsAcross
	// reads them instead of going over the decisions of both batches again (a dense session's
	// batch has 10,000 sites; indexing and counting them twice more was ~3 % of the CPU of a
	// scan of make bench's dense corpus).
	pairs      pairSites
	pairsKnown bool
	calls      *callIndex
}

// freeDecisions is the free list of Decisions slices Process's plans give back once their
// result was emitted (StorePlan.release): the next store's plan appends to one (naming.Appender)
// instead of allocating its own, 112 bytes a site (~100 MB of the ~175 MB a scan of make
// bench's dense corpus allocated).
var freeDecisions = freelist.List[naming.Decision]{Max: 4}

// release gives a pooled plan's Decisions back to freeDecisions (cleared) and leaves the plan
// without decisions; nothing for a plan that was not pooled, or nil. Only once nothing reads
// the plan any more (its result emitted, no later batch's check reading it).
func (sp *StorePlan) release() {
	if sp == nil || !sp.pooled {
		return
	}
	freeDecisions.PutUsed(sp.Decisions) // appended to (naming.Appender), never cut
	sp.Decisions, sp.pooled, sp.calls, sp.pairs, sp.pairsKnown = nil, false, nil, pairSites{}, false
}

// Edits returns the edits of the store's rewrite decisions, in offset order.
func (sp *StorePlan) Edits() []store.Edit {
	n := 0
	for i := range sp.Decisions {
		if sp.Decisions[i].Action == naming.ActRewrite {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]store.Edit, 0, n) // one allocation of the exact size (a dense session has 70,000)
	for _, d := range sp.Decisions {
		if d.Action == naming.ActRewrite {
			out = append(out, store.Edit{Site: *d.Site, New: d.New})
		}
	}
	return out
}

// Count returns how many names have action a. Sites of one Group (a call's name and its
// namespace member) are one name, whose action is the strongest of its sites' (rewrite, then
// keep, then none).
func (sp *StorePlan) Count(a naming.Action) int {
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
func (sp *StorePlan) Names() []naming.Decision {
	if sp.ungrouped || !hasGroups(sp.Decisions) {
		return sp.Decisions
	}
	out := make([]naming.Decision, 0, len(sp.Decisions))
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

// Grouped reports whether some decision's site has a Group (sites rewritten together: see
// Names); without, Names is Decisions.
func (sp *StorePlan) Grouped() bool { return !sp.ungrouped && hasGroups(sp.Decisions) }

// hasGroups reports whether a decision's site has a Group.
func hasGroups(ds []naming.Decision) bool {
	for i := range ds {
		if ds[i].Site.Group != "" {
			return true
		}
	}
	return false
}

func actionRank(a naming.Action) int {
	switch a {
	case naming.ActRewrite:
		return 2
	case naming.ActKeep:
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

// NamerFor returns the naming rule of an agent: the Namer of its room in the agent list
// (agent.Agent.Namer), or naming.ProviderSafe (normalize only names a provider rejects) for an
// agent without one or not in the list.
func NamerFor(id store.AgentID) naming.Namer {
	if a := all.Lookup(id); a != nil && a.Core().Namer != nil {
		return a.Core().Namer
	}
	return naming.ProviderSafe{}
}

// PlanStore plans one scanned store: the agent's Namer decides each site, then a call and its
// response are checked to end with the same name and object keys are kept distinct.
// Decisions are sorted by position.
func PlanStore(st store.Store, snap *store.Snapshot, pol naming.Policy) *StorePlan {
	sp := planStore(st, snap, pol, false)
	sp.calls = nil // only a next batch's checkPairsAcross reads it
	return sp
}

// planStore is PlanStore; with pooled, an agent's naming.Appender appends the decisions to a
// slice of freeDecisions, which the plan's release gives back (Process's results).
func planStore(st store.Store, snap *store.Snapshot, pol naming.Policy, pooled bool) *StorePlan {
	sp := &StorePlan{Store: st, Snap: snap}
	if a, ok := NamerFor(snap.Agent).(naming.Appender); ok && pooled {
		sp.Decisions, sp.pooled = a.AppendDecisions(freeDecisions.Get(len(snap.Sites)), snap, pol), true
	} else {
		sp.Decisions = NamerFor(snap.Agent).Decide(snap, pol)
	}
	sv := surveyPlan(sp)
	sp.ungrouped = !sv.groups
	checkPairsOf(sp, sv.pairs)
	if sv.keys {
		checkKeyClashes(sp)
	}
	if snap.NotWritable == "" && !utf8.ValidString(snap.Ref.Path) {
		// A run's manifest and a plan file are JSON: a path that is not UTF-8 would be recorded
		// with U+FFFD in it, and undo would look for (undo --force would create) another file.
		snap.NotWritable = "its path is not valid UTF-8 (a run manifest could not name it for undo)"
		if sp.Count(naming.ActRewrite) > 0 { // an error of the store: the run is partial (exit 3)
			snap.Problems = append(snap.Problems, store.Problem{Severity: store.SevError,
				Reason: "the store's path is not valid UTF-8: not rewritten (a run manifest, JSON, could not name it for undo); rename the file to rewrite it"})
		}
	}
	if snap.NotWritable != "" {
		// The store must not be written (invalid UTF-8, …): what would have been rewritten is
		// kept and says why; the store's own problem makes the run partial.
		sp.notWritten = holdRewrites(sp, snap.NotWritable)
	}
	// A namer gives its decisions in site order, which is position order for most stores
	// (a JSONL file by offset; a SQLite batch by rowid, which is label order when the labels
	// are): checked in the survey's pass (nothing since reordered them), sorted only when not.
	if !sv.sorted {
		slices.SortStableFunc(sp.Decisions, byPosition)
		sp.calls = nil // it points at decisions by their place
	}
	return sp
}

// planSurvey is what planStore needs to know of a plan's sites, found in one pass over them
// (a dense session's 6,000 sites are 1.5 MB: each pass over them reads that much memory).
type planSurvey struct {
	groups bool      // a site has a Group (StorePlan.ungrouped)
	keys   bool      // a site is an object key with a Scope (checkKeyClashes has work)
	sorted bool      // the decisions are in position order (byPosition)
	pairs  pairSites // countPairSites
}

// surveyPlan looks at every decision's site of sp once.
func surveyPlan(sp *StorePlan) planSurvey {
	sv := planSurvey{sorted: true}
	for i := range sp.Decisions {
		d := &sp.Decisions[i]
		s := d.Site
		if s.Group != "" {
			sv.groups = true
		}
		if s.Key && s.Scope != "" {
			sv.keys = true
		}
		if i > 0 && sv.sorted {
			// byPosition(previous, d) > 0, without copying both decisions
			p, c := &sp.Decisions[i-1].Site.Loc, &s.Loc
			if c.Row < p.Row || (c.Row == p.Row && c.Offset < p.Offset) {
				sv.sorted = false
			}
		}
		sv.pairs.add(s)
	}
	return sv
}

// holdRewrites keeps what sp would rewrite, each decision saying why (the file is not
// rewritten: why).
func holdRewrites(sp *StorePlan, why string) int {
	n := 0
	for i := range sp.Decisions {
		if d := &sp.Decisions[i]; d.Action == naming.ActRewrite {
			d.Action, d.Note = naming.ActKeep, fmt.Sprintf("not rewritten: %s (would be %s)", why, d.New)
			d.New, d.Held = "", fmt.Sprintf("its file %s is not rewritten: %s", sp.Snap.Ref.Path, why)
			n++
		}
	}
	return n
}

// notWritableProblem is the error that makes a run partial (exit 3, docs/exit-codes.md: a
// store that could not be rewritten) when held names of a store that must not be written
// (Snapshot.NotWritable) needed rewriting, and the store has no error of its own saying so
// (invalid UTF-8 has one; a profile's refusal, such as a database schema older than the release
// that reads it, is only a warning of the scan: it matters when a name needed rewriting).
// held is the number of names kept. The scan's warning of the same reason ("not rewritten:
// " + NotWritable), when there is one, becomes that error in place (said once); else the
// error is returned (ok) for the caller to add. Nothing when none was held, or when the store
// already failed.
func notWritableProblem(snap *store.Snapshot, held int) (store.Problem, bool) {
	if held == 0 || snap.NotWritable == "" || snap.Failed() {
		return store.Problem{}, false
	}
	names := "1 name it would rewrite is"
	if held != 1 {
		names = fmt.Sprintf("%d names it would rewrite are", held)
	}
	reason := fmt.Sprintf("not rewritten: %s; %s kept and nothing is written to it", snap.NotWritable, names)
	for i := range snap.Problems {
		if p := &snap.Problems[i]; p.Severity == store.SevWarning && p.Reason == "not rewritten: "+snap.NotWritable {
			p.Severity, p.Reason = store.SevError, reason
			return store.Problem{}, false
		}
	}
	return store.Problem{Severity: store.SevError, Reason: reason}, true
}

// byPosition orders decisions by row label, then by offset in the row or file.
func byPosition(x, y naming.Decision) int {
	a, b := &x.Site.Loc, &y.Site.Loc
	if c := strings.Compare(a.Row, b.Row); c != 0 {
		return c
	}
	return cmp.Compare(a.Offset, b.Offset)
}

// checkPairs verifies that a call and its response (same call id) end with the same name.
// The rule is a function of the stored name, so equal old names always end equal; differing
// ones are reported. A plan without response sites (a database whose tool records each hold
// their own call) has nothing to compare and builds no map. The responses are read in place
// (no list of them is made: 9 MB allocated per scan of the dense bench corpus) and the map of
// calls is made at its size.
func checkPairs(sp *StorePlan) { checkPairsOf(sp, countPairSites(sp)) }

// checkPairsOf is checkPairs given countPairSites(sp).
func checkPairsOf(sp *StorePlan, n pairSites) {
	sp.pairs, sp.pairsKnown, sp.calls = n, true, nil
	if n.responses == 0 {
		return
	}
	calls := sp.callIndex()
	for i := range sp.Decisions {
		if d := &sp.Decisions[i]; d.Site.CallID != "" && isResponseSite(d.Site) {
			if c, ok := calls.find(d.Site); ok {
				warnPair(sp, c, d)
			}
		}
	}
}

// checkPairsAcross is checkPairs for a response of batch cur whose call is not in cur but in
// prev, the batch planned just before it (store.BatchScanner: a call and its response kept in
// consecutive rows may fall on either side of a batch boundary). A call in cur wins, as
// it does within a batch; a call more than one batch before its response is not compared. prev
// nil, or cur without response sites: nothing to do (no map is built).
func checkPairsAcross(prev, cur *StorePlan) {
	if prev == nil {
		return
	}
	if cur.pairSites().responses == 0 {
		return
	}
	here, before := cur.callIndex(), prev.callIndex()
	for i := range cur.Decisions {
		d := &cur.Decisions[i]
		if d.Site.CallID == "" || !isResponseSite(d.Site) {
			continue
		}
		if _, ok := here.find(d.Site); ok {
			continue
		}
		if c, ok := before.find(d.Site); ok {
			warnPair(cur, c, d)
		}
	}
}

// pairSites counts the sites of a plan that carry a call id: responses, and calls in the live
// history and in snapshots (pairKey's scopes).
type pairSites struct{ responses, liveCalls, snapCalls int }

// countPairSites counts sp's response and call sites that carry a call id.
func countPairSites(sp *StorePlan) pairSites {
	var n pairSites
	for i := range sp.Decisions {
		n.add(sp.Decisions[i].Site)
	}
	return n
}

// add counts site s.
func (n *pairSites) add(s *store.Site) {
	if s.CallID == "" {
		return
	}
	if isResponseSite(s) {
		n.responses++
	}
	if isCallSite(s) {
		if snapshotScope(s) {
			n.snapCalls++
		} else {
			n.liveCalls++
		}
	}
}

// callIndex maps each call id of a plan, in its scope (pairKey), to the decision of its last
// call site: the live history's by the id alone (a string key: hashed and compared faster than
// a pairID), each snapshot's by its pairID.
type callIndex struct {
	live  map[string]*naming.Decision
	snaps map[pairID]*naming.Decision
}

// find returns the decision of the last call site of s's call id in s's scope.
func (ci callIndex) find(s *store.Site) (*naming.Decision, bool) {
	if snapshotScope(s) {
		c, ok := ci.snaps[pairKey(s)]
		return c, ok
	}
	c, ok := ci.live[s.CallID]
	return c, ok
}

// pairSites is countPairSites(sp), counted once.
func (sp *StorePlan) pairSites() pairSites {
	if !sp.pairsKnown {
		sp.pairs, sp.pairsKnown = countPairSites(sp), true
	}
	return sp.pairs
}

// callIndex is callsOf(sp, sp.pairSites()), built once and kept (StorePlan.calls) until the
// decisions are sorted or released.
func (sp *StorePlan) callIndex() callIndex {
	if sp.calls == nil {
		ci := callsOf(sp, sp.pairSites())
		sp.calls = &ci
	}
	return *sp.calls
}

// callsOf indexes the call sites of sp (n: countPairSites(sp)). The maps are not made at the
// count of call sites: a session's call ids repeat (the dense bench corpus has a few hundred
// distinct ones per 3,000 calls), and maps made that large were 4.5 of the 38 MB a scan of it
// allocated.
func callsOf(sp *StorePlan, n pairSites) callIndex {
	ci := callIndex{live: map[string]*naming.Decision{}}
	if n.snapCalls > 0 {
		ci.snaps = map[pairID]*naming.Decision{}
	}
	for i := range sp.Decisions {
		if d := &sp.Decisions[i]; d.Site.CallID != "" && isCallSite(d.Site) {
			if snapshotScope(d.Site) {
				ci.snaps[pairKey(d.Site)] = d
			} else {
				ci.live[d.Site.CallID] = d
			}
		}
	}
	return ci
}

// warnPair adds to sp the warning for response r when it ends as another name than its call c.
func warnPair(sp *StorePlan, c, r *naming.Decision) {
	if cf, rf := finalName(c), finalName(r); cf != rf {
		sp.Warnings = append(sp.Warnings, store.Problem{Loc: r.Site.Loc, Severity: store.SevWarning,
			Reason: fmt.Sprintf("response %q of call id %s ends as %q but its call (line %d) ends as %q",
				r.Site.Name, r.Site.CallID, rf, c.Site.Loc.Line, cf)})
	}
}

// finalName is the name a decision leaves: the new one of a rewrite, else the stored one.
func finalName(d *naming.Decision) string {
	if d.Action == naming.ActRewrite {
		return d.New
	}
	return d.Site.Name
}

func isCallSite(s *store.Site) bool {
	return s.Kind == store.SiteCall || s.Field == "call"
}

func isResponseSite(s *store.Site) bool {
	return s.Kind == store.SiteResponse || s.Field == "response"
}

// pairID is a call id in its scope: the live history pairs on its own (snapshot 0), each
// snapshot (compressed, bootstrap) separately, by its kind and line.
type pairID struct {
	snapshot store.SiteKind
	line     int64
	callID   string
}

// pairKey scopes call ids: the live history and each snapshot (compressed, bootstrap) pair
// separately.
func pairKey(s *store.Site) pairID {
	if snapshotScope(s) {
		return pairID{snapshot: s.Kind, line: s.Loc.Line, callID: s.CallID}
	}
	return pairID{callID: s.CallID}
}

// snapshotScope reports whether s pairs within a snapshot (compressed, bootstrap), not in the
// live history.
func snapshotScope(s *store.Site) bool {
	return s.Kind == store.SiteCompressed || s.Kind == store.SiteBootstrap
}

// checkKeyClashes cancels rewrites of object keys that would duplicate another key of the same
// object (JSON.parse keeps only the last duplicate, so counts would be lost).
func checkKeyClashes(sp *StorePlan) {
	byScope := map[string][]int{}
	var scopes []string // in the order first seen: the warnings come in position order, run after run
	for i := range sp.Decisions {
		if s := sp.Decisions[i].Site; s.Key && s.Scope != "" {
			if _, ok := byScope[s.Scope]; !ok {
				scopes = append(scopes, s.Scope)
			}
			byScope[s.Scope] = append(byScope[s.Scope], i)
		}
	}
	for _, scope := range scopes {
		idx := byScope[scope]
		seen := map[string]int{}
		for _, i := range idx {
			d := &sp.Decisions[i]
			name := d.Site.Name
			if d.Action == naming.ActRewrite {
				name = d.New
			}
			seen[name]++
		}
		for _, i := range idx {
			d := &sp.Decisions[i]
			if d.Action == naming.ActRewrite && seen[d.New] > 1 {
				sp.Warnings = append(sp.Warnings, store.Problem{Loc: d.Site.Loc, Severity: store.SevWarning,
					Reason: fmt.Sprintf("key %q not renamed to %q: another key of the same object (%s) is or would become %q, and JSON keeps only one of duplicate keys", d.Site.Name, d.New, d.Site.Scope, d.New)})
				d.Action, d.Note = naming.ActKeep, fmt.Sprintf("would duplicate key %q", d.New)
				d.New, d.Held = "", "its new name would duplicate a key of the same JSON object (see the warnings)"
			}
		}
	}
}
