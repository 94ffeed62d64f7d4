package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/check"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/pipeline/report"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/scan"
	"github.com/sessionfix/sessionfix/store"
)

// Summary is the run-wide summary built store by store (memory: one row per store and one
// entry per distinct name, never per site).
type Summary struct {
	Report    report.ScanReport
	renames   map[[3]string]*report.RenameRow
	kept      map[[3]string]*report.RenameRow
	hashClean map[string]int // clean names with a hash suffix → count (maybe normalized)
	ids       map[naming.Tool]*report.IdentityRow
	// keptRejected counts the kept names a provider rejects per class and, when the plan held
	// them back for a reason of their store (naming.Decision.Held), per that reason.
	keptRejected map[keptKey]int
	dotted       map[string]bool
	// Failed is set when a store or a part of one could not be read, or an error-level
	// problem was reported (exit 3); InUse counts stores in use (exit 4); ApplyErrs the
	// stores --apply failed to rewrite.
	Failed    bool
	InUse     int
	ApplyErrs int
	// LeftOut counts the stores that could not be read (their ScanErr) or were left out of the
	// plan (an agent's Prepare left them out: agent.Prepared.Skip, e.g. a home whose config could not be read), LeftOutInUse
	// those in use: not counted in Totals.Stores, so the closing line names them.
	LeftOut, LeftOutInUse int
	// RewriteDBs counts the stores to rewrite that are databases ("in 2 files and 1 database").
	RewriteDBs int
	// DottedLabels counts the legacy-dotted sites by ClassLabel ("legacy-non-ascii", …).
	DottedLabels map[string]int
	// Dispatch is the current tool set re-dispatch detection looks stored calls up in
	// (check.Redispatches; nil: not done). Its findings go to Report.Redispatch.
	Dispatch *check.Lookup
	// KeepTruncated is the run's --keep-truncated: only then does KeptLine name the flag as
	// why legacy-truncated-dotted names were kept (else they were in a file that is not written).
	KeepTruncated bool
	// labels caches ClassLabel of the legacy-dotted names without lone surrogates (Site.Units
	// nil), by name: a store repeats a few names thousands of times (issue 29: 0.1 s of a
	// dense 512 MiB scan went to labelling each site again).
	labels map[string]string
	// added counts addName's calls (tests: equal decisions are counted together).
	added int
}

// dottedLabel is ClassLabel(mcpname.ClassLegacyDotted, s), from the cache when s.Units is nil.
func (a *Summary) dottedLabel(s *store.Site) string {
	if s.Units != nil {
		return report.ClassLabel(mcpname.ClassLegacyDotted, s)
	}
	if l, ok := a.labels[s.Name]; ok {
		return l
	}
	if a.labels == nil {
		a.labels = map[string]string{}
	}
	l := report.ClassLabel(mcpname.ClassLegacyDotted, s)
	a.labels[s.Name] = l
	return l
}

// NewSummary starts the summary of a run over what discovery found: its ignored files and
// its issues (as problems; an error issue makes the run Failed).
func NewSummary(found *scan.Found) *Summary {
	a := &Summary{renames: map[[3]string]*report.RenameRow{}, kept: map[[3]string]*report.RenameRow{},
		hashClean: map[string]int{}, dotted: map[string]bool{}, ids: map[naming.Tool]*report.IdentityRow{}, DottedLabels: map[string]int{},
		keptRejected: map[keptKey]int{}}
	a.Report.Ignored = found.Ignored
	a.Report.IgnoredPaths = found.IgnoredPaths
	if a.Report.IgnoredPaths == nil {
		a.Report.IgnoredPaths = []string{}
	}
	a.Report.Totals.ByClass = map[mcpname.Class]int{}
	for _, is := range found.Issues {
		a.Report.Problems = append(a.Report.Problems, report.NewProblem(is.Path, store.Loc{}, string(is.Severity), is.Reason))
		if is.Severity == store.SevError {
			a.Failed = true
		}
	}
	return a
}

// Add counts one store's result (in the order results are emitted).
func (a *Summary) Add(r *rewrite.StoreResult) {
	ref := r.Store.Ref()
	row := report.StoreRow{Path: ref.Path, Kind: string(ref.Kind), Profile: report.ProfileOf(r.Store)}
	// A store planned batch by batch gives several results (rewrite.Batch): the first makes
	// its row, the others add to it.
	cont := r.Batch != nil && r.Batch.Index > 0 && len(a.Report.Stores) > 0
	appendRow := func(row report.StoreRow) {
		if !cont {
			a.Report.Stores = append(a.Report.Stores, row)
			return
		}
		last := &a.Report.Stores[len(a.Report.Stores)-1]
		last.Bytes += row.Bytes
		last.Records += row.Records
		last.Sites += row.Sites
		last.Rewrite += row.Rewrite
		last.Kept += row.Kept
		last.Problems += row.Problems
		if row.Error != "" {
			last.Error, last.InUse = row.Error, row.InUse
		}
	}
	if r.ScanErr != nil {
		row.Error, row.InUse = r.ScanErr.Error(), errors.Is(r.ScanErr, store.ErrInUse)
		appendRow(row)
		a.Report.Problems = append(a.Report.Problems, report.NewProblem(ref.Path, store.Loc{}, string(store.SevError), r.ScanErr.Error()))
		if row.InUse {
			a.InUse++ // locked past --busy-timeout: exit 4, not "cannot be read"
			a.LeftOutInUse++
		} else {
			a.Failed = true
		}
		a.LeftOut++
		return
	}
	sp := r.Plan
	snap := sp.Snap
	a.Report.Bytes += snap.State.Size
	a.Report.Records += snap.Records
	row.Records, row.Problems, row.Bytes = snap.Records, len(snap.Problems)+len(sp.Warnings), snap.State.Size
	names := sp.Names()
	row.Sites = len(names) // row.Rewrite and row.Kept: counted below, in the pass over the names
	if snap.Failed() {
		a.Failed = true
	}
	for _, pr := range snap.Problems {
		a.Report.Problems = append(a.Report.Problems, report.NewProblem(ref.Path, pr.Loc, string(pr.Severity), pr.Reason))
	}
	for _, w := range sp.Warnings {
		a.Report.Problems = append(a.Report.Problems, report.NewProblem(ref.Path, w.Loc, string(w.Severity), w.Reason))
	}
	if a.Dispatch != nil {
		a.Report.Redispatch = append(a.Report.Redispatch, check.Redispatches(sp, a.Dispatch)...)
	}
	counted := map[naming.Tool]bool{}
	for _, id := range snap.Identities {
		k := naming.Tool{Server: id.Server, Tool: id.Tool}
		r := a.ids[k]
		if r == nil {
			r = &report.IdentityRow{Server: id.Server, Tool: id.Tool}
			a.ids[k] = r
		}
		r.Count++
		if !counted[k] {
			counted[k] = true
			r.Stores++
		}
	}
	also := GroupedRewrites(sp)
	// Sites with equal decisions count alike: a plan repeats a few names many times (a dense
	// session: ~20 names over 6,000 sites), so equal decisions are first counted in a small
	// table (sameCount) and added once each, not looked up in the run's maps site by site.
	//
	// A name's slots are two neighbours picked by the address of its bytes: a store's scan
	// shares one copy of each name among its sites (engine/jsonl interns them), so equal names
	// meet in the same slots without their bytes being read, and two names alternating in a
	// session do not evict each other (with one slot picked from a name's length and two of
	// its bytes, "…literature_search_pubmed" and "…literature.search_pubmed" took turns in one
	// slot of the dense bench corpus, adding to the run's maps site by site).
	var memo [64]struct {
		d naming.Decision
		n int
	}
	//
	// The same pass counts the store's rewrites and kept names (row.Rewrite, row.Kept: what
	// sp.Count gives, without two more passes over its decisions).
	for i := range names {
		d := &names[i]
		switch d.Action {
		case naming.ActRewrite:
			row.Rewrite++
		case naming.ActKeep:
			row.Kept++
		}
		if d.Site.Units != nil || d.Site.Group != "" {
			a.addName(d, 1, also)
			continue
		}
		h := uint64(uintptr(unsafe.Pointer(unsafe.StringData(d.Site.Name)))) * 0x9e3779b97f4a7c15 >> 58 // 0..63
		e := &memo[h]
		if e.n > 0 {
			if sameCount(&e.d, d) {
				e.n++
				continue
			}
			o := &memo[h^1]
			if o.n > 0 && sameCount(&o.d, d) {
				o.n++
				continue
			}
			if o.n == 0 {
				o.d, o.n = *d, 1
				continue
			}
			a.addName(&e.d, e.n, also)
		}
		e.d, e.n = *d, 1
	}
	for i := range memo {
		if e := &memo[i]; e.n > 0 {
			a.addName(&e.d, e.n, also)
		}
	}
	t := &a.Report.Totals
	rewrote := cont && a.Report.Stores[len(a.Report.Stores)-1].Rewrite > 0 // an earlier part counted the store
	if !cont {
		t.Stores++
	}
	t.Rewrite += row.Rewrite
	if row.Rewrite > 0 && !rewrote {
		t.RewriteStores++
		if ref.Kind.Database() {
			a.RewriteDBs++
		}
	}
	if o := r.Outcome; o != nil && o.Err != nil {
		if o.InUse() {
			a.InUse++
		} else {
			a.ApplyErrs++
		}
	}
	appendRow(row)
}

// sameCount reports whether decisions x and y (sites without Units or Group) count alike in a
// Summary (addName): the same stored name, class, action, new name, notes and flags.
func sameCount(x, y *naming.Decision) bool {
	return x.Site.Name == y.Site.Name && x.Site.ReadOnly == y.Site.ReadOnly && x.Class == y.Class && x.Action == y.Action &&
		x.New == y.New && x.Note == y.Note && x.Held == y.Held && x.Rejected == y.Rejected
}

// addName counts n sites decided as d (alike: sameCount) into the run's totals and rows;
// also is the plan's GroupedRewrites.
func (a *Summary) addName(d *naming.Decision, n int, also map[string]string) {
	a.added++
	t := &a.Report.Totals
	t.Sites += n
	t.ByClass[d.Class] += n
	if d.Class == mcpname.ClassLegacyDotted {
		a.DottedLabels[a.dottedLabel(d.Site)] += n
	}
	var m map[[3]string]*report.RenameRow
	switch d.Action {
	case naming.ActRewrite:
		m = a.renames
		if d.Class == mcpname.ClassLegacyDotted {
			a.dotted[d.Site.Name] = true
		}
	case naming.ActKeep:
		m = a.kept
		t.Kept += n
		if d.Class == mcpname.ClassLegacyTruncated || d.Class == mcpname.ClassLegacyTruncatedDotted {
			t.KeptTruncated += n
		}
		if d.KeepsRejected() {
			t.KeptRejected += n
			a.keptRejected[keptKey{d.Class, d.Held}] += n
		}
	default:
		if d.Class == mcpname.ClassClean && mcpname.HasHashSuffix(d.Site.Name) {
			a.hashClean[d.Site.Name] += n
		}
		return
	}
	newName := d.New + also[d.Site.Group]
	old := report.SiteName(d.Site)
	k := [3]string{old.String(), newName, d.Note}
	if m[k] == nil {
		m[k] = &report.RenameRow{Old: old, New: newName, Class: string(d.Class), Reasons: report.RejectReasons(d.Class, d.Site), Note: d.Note}
	}
	m[k].Count += n
}

// Finish completes the Summary: a clean name with a hash suffix that is the normalized form
// of a dotted name seen anywhere in the run counts as "normalized".
func (a *Summary) Finish() {
	norm := map[string]bool{}
	for d := range a.dotted {
		norm[mcpname.Normalize(d)] = true
	}
	for name, n := range a.hashClean {
		if norm[name] {
			a.Report.Totals.ByClass[mcpname.ClassClean] -= n
			a.Report.Totals.ByClass[mcpname.ClassNormalized] += n
		}
	}
	if a.Report.Totals.ByClass[mcpname.ClassClean] == 0 {
		delete(a.Report.Totals.ByClass, mcpname.ClassClean)
	}
	a.Report.Classes = a.Report.Totals.ByClass
	a.Report.Renames, a.Report.Kept = report.SortedRows(a.renames), report.SortedRows(a.kept)
	a.Report.Identities = make([]report.IdentityRow, 0, len(a.ids))
	for _, r := range a.ids {
		a.Report.Identities = append(a.Report.Identities, *r)
	}
	sort.Slice(a.Report.Identities, func(i, j int) bool {
		x, y := a.Report.Identities[i], a.Report.Identities[j]
		if x.Server != y.Server {
			return x.Server < y.Server
		}
		return x.Tool < y.Tool
	})
	if a.Report.Problems == nil {
		a.Report.Problems = []report.ProblemRow{}
	}
	if a.Report.SettingsRules == nil {
		a.Report.SettingsRules = []report.SettingsRuleRow{}
	}
	if a.Report.Stores == nil {
		a.Report.Stores = []report.StoreRow{}
	}
	if a.Report.Redispatch == nil {
		a.Report.Redispatch = []check.Redispatch{}
	}
}

// SummaryLine is the closing sentence of scan and fix ("would rewrite …", "rewrote …"). Every
// legacy name left in place is counted: middle-truncated ones (kept by design) and any other
// kept one (a lossy name without --rewrite-lossy, a key clash, a file that must not be
// written), so "nothing to change" never hides a name a provider still rejects.
func (a *Summary) SummaryLine(applied bool) string {
	t := a.Report.Totals
	kept := fmt.Sprintf("%s kept", reports.Plural(t.KeptTruncated, "legacy truncated name"))
	if other := t.Kept - t.KeptTruncated; other > 0 {
		kept += fmt.Sprintf("; %s kept (see the notes and warnings)", reports.Plural(other, "other legacy name"))
	}
	if t.Rewrite == 0 {
		return fmt.Sprintf("nothing to change: no name needs rewriting in %s; %s", reports.Plural(t.Stores, "store"), kept) + a.LeftOutPhrase()
	}
	verb := "would rewrite"
	if applied {
		verb = "rewrote"
	}
	return fmt.Sprintf("%s %s in %s; %s", verb, reports.Plural(t.Rewrite, "name"), report.StoresPhrase(t.RewriteStores, a.RewriteDBs), kept) + a.LeftOutPhrase()
}

// LeftOutPhrase is the end of a closing line when stores could not be read ("" when none):
// "; 1 store left out (in use; see errors)", "; 3 stores left out (see errors)", so a line
// counting only the stores read is never taken for all clean.
func (a *Summary) LeftOutPhrase() string {
	switch {
	case a.LeftOut == 0:
		return ""
	case a.LeftOutInUse == a.LeftOut:
		return fmt.Sprintf("; %s left out (in use; see errors)", reports.Plural(a.LeftOut, "store"))
	case a.LeftOutInUse > 0:
		return fmt.Sprintf("; %s left out (%d in use; see errors)", reports.Plural(a.LeftOut, "store"), a.LeftOutInUse)
	}
	return fmt.Sprintf("; %s left out (see errors)", reports.Plural(a.LeftOut, "store"))
}

// KeptLine is the sentence after the summary when names a provider rejects were kept ("" when
// none): how many, why (per class) and how to fix them, so "nothing to change" is never read
// as "all clean" (issue 8 item 3). --fail-on kept turns it into exit status exitFinding.
func (a *Summary) KeptLine() string {
	n := a.Report.Totals.KeptRejected
	if n == 0 {
		return ""
	}
	// One entry per reason, naming the classes kept for it ("12 legacy-dotted, 3
	// legacy-truncated-dotted (its file … is not rewritten: invalid UTF-8 at line 5; …)").
	var reasons []string
	byReason := map[string][]string{}
	for _, k := range slices.SortedFunc(maps.Keys(a.keptRejected), func(x, y keptKey) int {
		return cmp.Or(cmp.Compare(x.class, y.class), cmp.Compare(x.held, y.held))
	}) {
		r := k.held
		if r == "" {
			r = keptWhy(k.class, a.Report.Agents, a.KeepTruncated)
		} else {
			r += heldRepair(k.held)
		}
		if byReason[r] == nil {
			reasons = append(reasons, r)
		}
		byReason[r] = append(byReason[r], fmt.Sprintf("%d %s", a.keptRejected[k], k.class))
	}
	var why []string
	for _, r := range reasons {
		why = append(why, fmt.Sprintf("%s (%s)", strings.Join(byReason[r], ", "), r))
	}
	verb := "were"
	if n == 1 {
		verb = "was"
	}
	return fmt.Sprintf("%s a provider rejects %s kept: %s; a session holding them still fails where they are sent back (exit %d with --fail-on kept)",
		reports.Plural(n, "name"), verb, strings.Join(why, "; "), exitcode.Finding)
}

// keptKey is what KeptLine counts kept names by: the class, and the plan's reason for holding
// them back (naming.Decision.Held; "" when the namer kept them).
type keptKey struct {
	class mcpname.Class
	held  string
}

// heldRepair is the advice after a held-back reason: how to get the names rewritten.
func heldRepair(held string) string {
	if strings.Contains(held, "invalid UTF-8") {
		return "; repair the byte as the error above says, then run fix again"
	}
	return ""
}

// keptWhy says why names of a class were kept although a provider rejects them, and how to
// get them rewritten (the room's naming.ClassInfo.Kept). info is what the agents' stores were
// planned with: ClassInfo.KeptInHome is used when every row of the class's agent says it was
// planned with a home of PATH only (giving the whole home as PATH is then no advice).
// keepTruncated is the run's --keep-truncated: without it a legacy-truncated-dotted name was
// kept because its file is not written, and gets that reason.
func keptWhy(c mcpname.Class, info report.AgentInfo, keepTruncated bool) string {
	if c == mcpname.ClassLegacyTruncatedDotted && keepTruncated {
		return "kept by --keep-truncated; fix: run without it"
	}
	if ci, ok := all.ClassOf(c); ok && ci.Kept != "" {
		if ci.KeptInHome != "" && fromPathOnly(info.Of(all.AgentOfClass(c))) {
			return ci.KeptInHome
		}
		return ci.Kept
	}
	return "kept by the plan; see the notes and warnings"
}

// fromPathOnly reports whether there are rows and each says its stores were planned with the
// home of PATH only (agent.FromPath).
func fromPathOnly(rows []agent.Info) bool {
	return len(rows) > 0 && !slices.ContainsFunc(rows, func(i agent.Info) bool {
		fp, ok := i.(agent.FromPath)
		return !ok || !fp.FromPathOnly()
	})
}

// AppliedLine is the closing sentence of fix --apply: what was really rewritten (names in
// stores, dbs of them databases; skipped: the stores --apply skipped or failed to write), or,
// when the plan had nothing to rewrite, SummaryLine(false).
func (a *Summary) AppliedLine(names, stores, dbs int, skipped []report.SkippedRow) string {
	t := a.Report.Totals
	if t.Rewrite == 0 {
		return a.SummaryLine(false)
	}
	s := fmt.Sprintf("rewrote %s in %s; %s kept", reports.Plural(names, "name"), report.StoresPhrase(stores, dbs), reports.Plural(t.KeptTruncated, "legacy truncated name"))
	if other := t.Kept - t.KeptTruncated; other > 0 {
		s += fmt.Sprintf("; %s kept (see the notes and warnings)", reports.Plural(other, "other legacy name"))
	}
	if len(skipped) > 0 {
		s += "; " + report.SkippedPhrase(skipped)
	}
	return s + a.LeftOutPhrase()
}

// GroupedRewrites describes, for each Group of sites rewritten together, the rewrites of its
// other fields (" (namespace mcp__lit)"), so a one-row-per-name report shows the whole new name.
func GroupedRewrites(sp *rewrite.StorePlan) map[string]string {
	if !sp.Grouped() {
		return nil // no site has a Group: nothing to describe (and no site read)
	}
	first := map[string]bool{}
	out := map[string]string{}
	for _, d := range sp.Decisions {
		g := d.Site.Group
		if g == "" || d.Action != naming.ActRewrite {
			continue
		}
		if !first[g] {
			first[g] = true
			continue
		}
		out[g] += fmt.Sprintf(" (%s %s)", d.Site.Field, d.New)
	}
	return out
}
