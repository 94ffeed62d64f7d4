package pipeline

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/scan"
	"github.com/sessionfix/sessionfix/store"
)

// TestSummaryCountsAlike: Summary.Add counts the sites of equal decisions together (its small
// table of decisions seen, 64 slots) and must count exactly what adding every site on its own
// counts: totals, classes, rename and kept rows, dotted labels, held reasons and hash-suffixed
// clean names. 5,000 sites of 150 names (more names than slots: entries are evicted and added
// early), in runs of a few names as in a session, where equal names differ by action, note,
// held reason, read-only flag and units.
func TestSummaryCountsAlike(t *testing.T) {
	names := make([]string, 150)
	for i := range names {
		switch i % 5 {
		case 0:
			names[i] = fmt.Sprintf("mcp__lit__literature.search_%d", i)
		case 1:
			names[i] = fmt.Sprintf("mcp__srv%d__tool", i)
		case 2:
			names[i] = mcpname.Normalize(fmt.Sprintf("mcp__lit__a.%d", i)) // clean; a hash suffix when long
		case 3:
			names[i] = fmt.Sprintf("mcp__caf\u00e9%d__x", i)
		default:
			names[i] = fmt.Sprintf("mcp__com.example.enterprise-search-%d__documents_by_semantic_similarity_x", i)
		}
	}
	sites := make([]store.Site, 5000)
	for i := range sites {
		n := names[(i/40*3+i%6)%len(names)] // runs of 40 sites over 6 names, all names in turn
		sites[i] = store.Site{Name: n, Raw: []byte(`"` + n + `"`), Loc: store.Loc{Line: int64(i + 1), Offset: int64(i * 100)}, Kind: store.SiteCall}
		if i%97 == 0 {
			sites[i].ReadOnly = true
		}
		if i%389 == 0 {
			sites[i].Units = []uint16{'m', 'c', 'p', '_', '_', 'x', 0xd800}
		}
	}
	snap := &store.Snapshot{Ref: store.Ref{Path: "/x/s.jsonl", Kind: qwen.KindSession}, Sites: sites}
	plan := &rewrite.StorePlan{Store: jsonl.Open("/x/s.jsonl", qwen.Session), Snap: snap, Decisions: naming.NormalizeMcp{}.Decide(snap, naming.Policy{})}
	// Equal names decided differently, by the how-manieth site of the name each is: held for
	// one reason or another (the same action, other notes or held reasons), marked rejected,
	// read-only (KeepsRejected differs).
	seen := map[string]int{}
	for i := range plan.Decisions {
		d := &plan.Decisions[i]
		k := seen[d.Site.Name]
		seen[d.Site.Name]++
		if d.Action == naming.ActRewrite && k%8 < 4 {
			d.Action, d.New = naming.ActKeep, ""
			switch k % 4 {
			case 0:
				d.Note, d.Held = "kept: a key clash", "it would duplicate a key"
			case 1:
				d.Note, d.Held = "kept: a key clash", "its file is not rewritten"
			case 2:
				d.Note, d.Held = "not rewritten: busy", "its file is not rewritten"
			}
		}
		if d.Action == naming.ActKeep && k%10 >= 8 {
			d.Rejected = true
		}
		if d.Action == naming.ActKeep && k%10 == 6 {
			d.Site.ReadOnly = true
		}
	}
	alike := NewSummary(&scan.Found{})
	alike.Add(&rewrite.StoreResult{Store: plan.Store, Plan: plan})
	one := NewSummary(&scan.Found{})
	also := GroupedRewrites(plan)
	for i := range plan.Decisions {
		one.addName(&plan.Decisions[i], 1, also)
	}
	require.Equal(t, len(sites), alike.Report.Totals.Sites)
	for _, f := range []struct {
		what      string
		got, want any
	}{
		{"sites", alike.Report.Totals.Sites, one.Report.Totals.Sites},
		{"classes", alike.Report.Totals.ByClass, one.Report.Totals.ByClass},
		{"kept", alike.Report.Totals.Kept, one.Report.Totals.Kept},
		{"kept truncated", alike.Report.Totals.KeptTruncated, one.Report.Totals.KeptTruncated},
		{"kept rejected", alike.Report.Totals.KeptRejected, one.Report.Totals.KeptRejected},
		{"renames", alike.renames, one.renames},
		{"kept rows", alike.kept, one.kept},
		{"dotted labels", alike.DottedLabels, one.DottedLabels},
		{"held", alike.keptRejected, one.keptRejected},
		{"hash clean", alike.hashClean, one.hashClean},
		{"dotted", alike.dotted, one.dotted},
	} {
		assert.Equal(t, f.want, f.got, f.what)
	}
	assert.NotEmpty(t, one.kept)
	assert.NotEmpty(t, one.renames)
	assert.NotEmpty(t, one.keptRejected)
	assert.Positive(t, one.Report.Totals.KeptRejected)
}

// TestSummaryAlternatingNamesCountedTogether: two names taking turns in a session, as
// "mcp__lit__literature_search_pubmed" and "mcp__lit__literature.search_pubmed" (same length,
// same last and middle byte) do in the dense bench corpus, are each counted into the run's maps
// once per store, not once per turn: they never evict each other from Summary.Add's table.
func TestSummaryAlternatingNamesCountedTogether(t *testing.T) {
	names := []string{"mcp__lit__literature_search_pubmed", "mcp__lit__literature.search_pubmed"}
	sites := make([]store.Site, 4000)
	for i := range sites {
		n := names[i%2]
		sites[i] = store.Site{Name: n, Raw: []byte(`"` + n + `"`), Loc: store.Loc{Line: int64(i + 1), Offset: int64(i * 100)}, Kind: store.SiteCall}
	}
	snap := &store.Snapshot{Ref: store.Ref{Path: "/x/s.jsonl", Kind: qwen.KindSession}, Sites: sites}
	plan := &rewrite.StorePlan{Store: jsonl.Open("/x/s.jsonl", qwen.Session), Snap: snap, Decisions: naming.NormalizeMcp{}.Decide(snap, naming.Policy{})}
	a := NewSummary(&scan.Found{})
	a.Add(&rewrite.StoreResult{Store: plan.Store, Plan: plan})
	assert.Equal(t, 2, a.added, "one count per name")
	assert.Equal(t, 4000, a.Report.Totals.Sites)
	assert.Equal(t, 2000, a.Report.Totals.ByClass[mcpname.ClassClean])
	assert.Equal(t, 2000, a.Report.Totals.ByClass[mcpname.ClassLegacyDotted])
}
