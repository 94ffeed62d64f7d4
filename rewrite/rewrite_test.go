package rewrite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/store"
)

func writeSession(t testing.TB, dir, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return p
}

func call(id, name string) string {
	return `{"message":{"parts":[{"functionCall":{"id":"` + id + `","name":"` + name + `"}}]}}`
}

func resp(id, name string) string {
	return `{"message":{"parts":[{"functionResponse":{"id":"` + id + `","name":"` + name + `"}}]}}`
}

func scanned(t testing.TB, paths ...string) []Scanned {
	t.Helper()
	var out []Scanned
	for _, p := range paths {
		prof, _ := qwen.Detect(p, nil)
		if prof == nil {
			prof = qwen.Session
		}
		st := jsonl.Open(p, prof)
		snap, err := st.Scan(context.Background(), store.ScanOptions{Hash: true})
		require.NoError(t, err)
		out = append(out, Scanned{st, snap})
	}
	return out
}

func decisions(sp *StorePlan) []string {
	var out []string
	for _, d := range sp.Decisions {
		out = append(out, string(d.Class)+":"+string(d.Action)+":"+d.Site.Name+"→"+d.New)
	}
	return out
}

func TestPlanClassesAndPolicy(t *testing.T) {
	dir := t.TempDir()
	p := writeSession(t, dir, "0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl",
		call("a", "mcp__lit__literature.search_pubmed"),
		call("b", "mcp__lit__get_data_for_a_spe___location_and_date_range_extended"),
		call("c", "mcp__com.example.enterprise-___documents_by_semantic_similarity"),
		call("d", "mcp__lit__get_data"),
		call("e", "mcp__lit__literature_search_pubmed_1nv53db"),
		call("f", "read_file"))
	sc := scanned(t, p)

	plan := Build(sc, naming.Policy{})
	require.Len(t, plan.Stores, 1)
	assert.Equal(t, []string{
		"legacy-dotted:rewrite:mcp__lit__literature.search_pubmed→mcp__lit__literature_search_pubmed_1nv53db",
		"legacy-truncated:keep:mcp__lit__get_data_for_a_spe___location_and_date_range_extended→",
		"legacy-truncated-dotted:rewrite:mcp__com.example.enterprise-___documents_by_semantic_similarity→mcp__com_example_enterprise-___documents_by_semantic_si_0bznu1u",
		"clean:none:mcp__lit__get_data→",
		"normalized:none:mcp__lit__literature_search_pubmed_1nv53db→", // its dotted form is in the same store
		"builtin:none:read_file→",
	}, decisions(plan.Stores[0]))
	assert.Equal(t, "normalizeMcp", plan.Stores[0].Decisions[0].Source)
	assert.Contains(t, plan.Stores[0].Decisions[2].Note, "no current tool answers")

	ix := mcpname.NewIndex(mcpname.Raw("lit", "get+data"), mcpname.Raw("com.example.enterprise-search", "query_documents_by_semantic_similarity"))
	plan = Build(sc, naming.Policy{KeepTruncated: true, RewriteLossy: true, Index: ix})
	got := decisions(plan.Stores[0])
	assert.Equal(t, "legacy-truncated-dotted:keep:mcp__com.example.enterprise-___documents_by_semantic_similarity→", got[2])
	assert.Equal(t, "lossy-legacy:rewrite:mcp__lit__get_data→mcp__lit__get_data_0kcpus5", got[3])
	assert.Equal(t, "inventory: mcp__lit__get+data", plan.Stores[0].Decisions[3].Source)
	assert.Contains(t, plan.Stores[0].Decisions[2].Note, "mcp__com.example.enterprise-search__query_documents_by_semantic_similarity")

	sp := Build(sc, naming.Policy{}).Stores[0]
	assert.Equal(t, 2, sp.Count(naming.ActRewrite))
	var keptTruncated, normalized int
	for _, d := range sp.Names() {
		if d.Action == naming.ActKeep && (d.Class == mcpname.ClassLegacyTruncated || d.Class == mcpname.ClassLegacyTruncatedDotted) {
			keptTruncated++
		}
		if d.Class == mcpname.ClassNormalized {
			normalized++
		}
	}
	assert.Equal(t, 1, keptTruncated)
	assert.Equal(t, 1, normalized)
}

func TestPairsAndKeyClashes(t *testing.T) {
	dir := t.TempDir()
	p := writeSession(t, dir, "s.jsonl",
		call("x1", "mcp__a.b__c"), resp("x1", "mcp__a.b__c"),
		call("x2", "mcp__a.b__c"), resp("x2", "mcp__other.srv__d"))
	plan := Build(scanned(t, p), naming.Policy{})
	require.Len(t, plan.Stores[0].Warnings, 1)
	assert.Contains(t, plan.Stores[0].Warnings[0].Reason, "call id x2")

	u := filepath.Join(dir, "usage_record.jsonl")
	require.NoError(t, os.WriteFile(u, []byte(`{"tools":{"byName":{"mcp__a.b__c":{"count":1},"mcp__a_b__c_`+mcpname.Hash("mcp__a.b__c")+`":{"count":2},"mcp__x.y__z":{"count":3}}}}`+"\n"), 0o600))
	plan = Build(scanned(t, u), naming.Policy{})
	sp := plan.Stores[0]
	assert.Equal(t, 1, sp.Count(naming.ActRewrite), "only the key that does not clash is renamed")
	require.Len(t, sp.Warnings, 1)
	assert.Contains(t, sp.Warnings[0].Reason, "JSON keeps only one of duplicate keys")
}

// TestKeyClashWarningsInLineOrder: a store whose objects of several lines each hold a key that
// would duplicate another (usage_record.jsonl, a tools.byName object a line) gets its warnings,
// and keeps its keys, in line order on every run: the objects were visited in a map's order, so
// two runs over the same files listed their warnings in different orders.
func TestKeyClashWarningsInLineOrder(t *testing.T) {
	dir := t.TempDir()
	u := filepath.Join(dir, "usage_record.jsonl")
	var b strings.Builder
	for i := 1; i <= 8; i++ {
		name := fmt.Sprintf("mcp__a.b__c%d", i)
		fmt.Fprintf(&b, `{"tools":{"byName":{%q:{"count":1},"mcp__a_b__c%d_%s":{"count":2}}}}`+"\n", name, i, mcpname.Hash(name))
	}
	require.NoError(t, os.WriteFile(u, []byte(b.String()), 0o600))
	sc := scanned(t, u)
	for run := 0; run < 20; run++ {
		sp := Build(sc, naming.Policy{}).Stores[0]
		var lines []int64
		for _, w := range sp.Warnings {
			require.Contains(t, w.Reason, "JSON keeps only one of duplicate keys")
			lines = append(lines, w.Loc.Line)
		}
		require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8}, lines, "run %d: the warnings in line order", run)
		assert.Equal(t, 0, sp.Count(naming.ActRewrite), "no key renamed onto another")
	}
}

func TestApplyJournalManifestAndUndo(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("1", "mcp__a.b__c"), resp("1", "mcp__a.b__c"))
	b := writeSession(t, dir, "b.jsonl", call("1", "mcp__ok__c"))
	c := writeSession(t, dir, "c.jsonl", call("1", "mcp__x.y__z"))
	origA, _ := os.ReadFile(a)
	origC, _ := os.ReadFile(c)
	state := filepath.Join(t.TempDir(), "state")
	now := func() time.Time { return time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC) }
	res, err := Apply(context.Background(), Build(scanned(t, a, b, c), naming.Policy{}), ApplyOptions{StateDir: state, Now: now, Command: "test"})
	require.NoError(t, err)
	require.NotEmpty(t, res.RunID)
	assert.True(t, strings.HasPrefix(res.RunID, "20261130T100000Z-"))
	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	assert.Equal(t, runlog.StateApplied, m.State)
	require.Len(t, m.Files, 2)
	assert.Equal(t, a, m.Files[0].Ref.Path)
	assert.Equal(t, []runlog.Rename{{Old: "mcp__a.b__c", New: "mcp__a_b__c_" + mcpname.Hash("mcp__a.b__c"), Count: 2}}, m.Files[0].Renames)
	assert.NotEmpty(t, m.Files[0].Before.Fingerprint)
	assert.NotEqual(t, m.Files[0].Before.Fingerprint, m.Files[0].After.Fingerprint)

	// The manifest is what undo reads; an interrupted run is recovered from the journal.
	raw, _ := os.ReadFile(filepath.Join(res.Dir, manifestName))
	var mm map[string]any
	require.NoError(t, json.Unmarshal(raw, &mm))
	interrupted := *m
	interrupted.State, interrupted.Files = runlog.StateApplying, nil
	writeManifest(t, res.Dir, &interrupted)
	rec, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	assert.Len(t, rec.Files, 2, "files recovered from the journal")

	// c changed since the run: refused, a still restored; then --force restores c.
	require.NoError(t, os.WriteFile(c, []byte("changed\n"), 0o600))
	outs, m2, err := undo(context.Background(), res.Dir, all.Open, false, now)
	require.NoError(t, err)
	require.Len(t, outs, 2)
	assert.Equal(t, runlog.StatePartiallyUndone, m2.State)
	var refused int
	for _, o := range outs {
		if o.Err != nil {
			refused++
			assert.ErrorIs(t, o.Err, store.ErrChangedSinceRun)
			assert.Equal(t, c, o.Ref.Path)
		}
	}
	assert.Equal(t, 1, refused)
	got, _ := os.ReadFile(a)
	assert.Equal(t, origA, got)

	dirFound, err := runlog.FindRun(state, "", true)
	require.NoError(t, err)
	assert.Equal(t, res.Dir, dirFound, "a partially undone run is still the last one to undo")
	outs, m3, err := undo(context.Background(), res.Dir, all.Open, true, now)
	require.NoError(t, err)
	assert.Equal(t, runlog.StateUndone, m3.State)
	assert.True(t, outs[len(outs)-1].Already || outs[0].Already)
	got, _ = os.ReadFile(c)
	assert.Equal(t, origC, got)
	_, err = runlog.FindRun(state, "", true)
	assert.ErrorIs(t, err, runlog.ErrNothingToUndo)

	runs, err := runlog.ListRuns(state)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, runlog.StateUndone, runs[0].State)
	assert.Equal(t, 3, runs[0].Names)
	_, err = runlog.FindRun(state, res.RunID[:10], false)
	require.NoError(t, err, "a unique prefix finds the run")
}

func TestApplyNothingCreatesNoRun(t *testing.T) {
	dir := t.TempDir()
	b := writeSession(t, dir, "b.jsonl", call("1", "mcp__ok__c"))
	state := filepath.Join(t.TempDir(), "state")
	res, err := Apply(context.Background(), Build(scanned(t, b), naming.Policy{}), ApplyOptions{StateDir: state})
	require.NoError(t, err)
	assert.Empty(t, res.RunID)
	_, err = os.Stat(state)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestProcessStreamsInOrderAndApplies(t *testing.T) {
	dir := t.TempDir()
	var stores []store.Store
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		p := writeSession(t, dir, n+".jsonl", call("1", "mcp__"+n+".x__t"))
		stores = append(stores, jsonl.Open(p, qwen.Session))
	}
	missing := jsonl.Open(filepath.Join(dir, "zz.jsonl"), qwen.Session)
	stores = append(stores, missing)
	var order []string
	res, err := Process(context.Background(), stores, naming.Policy{}, ProcessOptions{Apply: true, ApplyOptions: ApplyOptions{StateDir: filepath.Join(t.TempDir(), "s"), Workers: 3}},
		func(r *StoreResult) error {
			order = append(order, filepath.Base(r.Store.Ref().Path))
			if r.ScanErr == nil {
				require.NotNil(t, r.Outcome)
				assert.NoError(t, r.Outcome.Err)
			}
			return nil
		})
	require.NoError(t, err)
	assert.Equal(t, []string{"a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl", "e.jsonl", "zz.jsonl"}, order)
	require.NotNil(t, res.Manifest)
	assert.Equal(t, 5, res.Files)
	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	assert.Len(t, m.Files, 5)
	got, _ := os.ReadFile(filepath.Join(dir, "c.jsonl"))
	assert.Contains(t, string(got), mcpname.Normalize("mcp__c.x__t"))
}

func TestReadOnlySitesAreNeverRewritten(t *testing.T) {
	for _, agent := range []store.AgentID{"qwen", "codex", "opencode"} {
		t.Run(string(agent), func(t *testing.T) {
			snap := &store.Snapshot{Ref: store.Ref{Path: "x"}, Agent: agent, Sites: []store.Site{
				{Name: "mcp__lit__literature.search_pubmed", ReadOnly: true, Raw: []byte(`"mcp__lit__literature.search_pubmed"`)},
				{Name: "lit_search.pubmed", ReadOnly: true, Raw: []byte(`"lit_search.pubmed"`)},
			}}
			sp := PlanStore(nil, snap, naming.Policy{})
			assert.Equal(t, 0, sp.Count(naming.ActRewrite))
			assert.Empty(t, sp.Edits())
			for _, d := range sp.Decisions {
				assert.Empty(t, d.New)
			}
		})
	}
}

func TestProcessStopsWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	var stores []store.Store
	for i := 0; i < 50; i++ {
		p := writeSession(t, dir, fmt.Sprintf("%02d.jsonl", i), call("1", "mcp__a.b__c"))
		stores = append(stores, jsonl.Open(p, qwen.Session))
	}
	ctx, cancel := context.WithCancel(context.Background())
	seen := 0
	done := make(chan error, 1)
	go func() {
		_, err := Process(ctx, stores, naming.Policy{}, ProcessOptions{ApplyOptions: ApplyOptions{Workers: 2}}, func(*StoreResult) error {
			seen++
			if seen == 3 {
				cancel()
			}
			return nil
		})
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
		assert.Less(t, seen, 50)
	case <-time.After(10 * time.Second):
		t.Fatal("Process did not return after cancellation")
	}
}

// TestStoreWithNonUTF8PathIsNotRewritten: a run's manifest and a plan file are JSON, which
// cannot hold a path that is not valid UTF-8 (encoding/json writes U+FFFD instead), so undo
// would look for another file (and undo --force would create it). Such a store is planned as
// kept, with an error problem saying why (exit 3); nothing else of it changes.
func TestStoreWithNonUTF8PathIsNotRewritten(t *testing.T) {
	dir := t.TempDir()
	p := writeSession(t, dir, "bad\xffname.jsonl", call("1", "mcp__a.b__c"))
	snap, err := jsonl.Open(p, qwen.Session).Scan(context.Background(), store.ScanOptions{})
	require.NoError(t, err)
	sp := PlanStore(nil, snap, naming.Policy{})
	assert.Equal(t, 0, sp.Count(naming.ActRewrite))
	assert.Empty(t, sp.Edits())
	assert.Contains(t, snap.NotWritable, "not valid UTF-8")
	require.Len(t, snap.Problems, 1)
	assert.Equal(t, store.SevError, snap.Problems[0].Severity)
	assert.Contains(t, snap.Problems[0].Reason, "path is not valid UTF-8")
	assert.True(t, snap.Failed(), "the run is partial (exit 3)")
	for _, d := range sp.Decisions {
		if d.Action == naming.ActKeep && d.Note != "" {
			assert.Contains(t, d.Note, "not rewritten: ")
		}
	}
}

// TestCheckPairsScopes: a call and its response pair within their scope only (the live
// history, or one snapshot by kind and line), the call's kind or Field "call" makes a call;
// a plan without responses gets no warning whatever its calls.
func TestCheckPairsScopes(t *testing.T) {
	site := func(kind store.SiteKind, field string, line int64, id, name string) store.Site {
		return store.Site{Kind: kind, Field: field, Loc: store.Loc{Line: line}, CallID: id, Name: name}
	}
	plan := func(sites ...store.Site) *StorePlan {
		sp := &StorePlan{}
		for i := range sites {
			sp.Decisions = append(sp.Decisions, naming.Decision{Site: &sites[i], Action: naming.ActNone})
		}
		checkPairs(sp)
		return sp
	}
	reasons := func(sp *StorePlan) []string {
		var out []string
		for _, w := range sp.Warnings {
			out = append(out, w.Reason)
		}
		return out
	}
	// Same scope, different names: one warning.
	assert.Equal(t, []string{`response "b" of call id x ends as "b" but its call (line 1) ends as "a"`},
		reasons(plan(site(store.SiteCall, "", 1, "x", "a"), site(store.SiteResponse, "", 2, "x", "b"))))
	// A snapshot's call does not pair with the history's response, nor with another snapshot's.
	assert.Empty(t, reasons(plan(site(store.SiteCompressed, "call", 1, "x", "a"), site(store.SiteResponse, "", 2, "x", "b"))))
	assert.Empty(t, reasons(plan(site(store.SiteCompressed, "call", 1, "x", "a"), site(store.SiteCompressed, "response", 2, "x", "b"))))
	// The same snapshot (kind and line) pairs.
	assert.Len(t, reasons(plan(site(store.SiteBootstrap, "call", 3, "x", "a"), site(store.SiteBootstrap, "response", 3, "x", "b"))), 1)
	// Bootstrap and compressed snapshots on the same line are different scopes.
	assert.Empty(t, reasons(plan(site(store.SiteBootstrap, "call", 3, "x", "a"), site(store.SiteCompressed, "response", 3, "x", "b"))))
	// Calls only: nothing to compare.
	assert.Empty(t, reasons(plan(site(store.SiteCall, "", 1, "x", "a"), site(store.SiteCall, "", 2, "x", "b"))))
}

// TestCheckPairsAcross: a response is compared with a call of the batch before its own when its
// own batch has no call of that id; a call in its own batch wins; no previous batch, or no
// response, warns of nothing.
func TestCheckPairsAcross(t *testing.T) {
	plan := func(sites ...store.Site) *StorePlan {
		sp := &StorePlan{}
		for i := range sites {
			sp.Decisions = append(sp.Decisions, naming.Decision{Site: &sites[i], Action: naming.ActNone})
		}
		return sp
	}
	call := func(id, name string) store.Site { return store.Site{Kind: store.SiteCall, CallID: id, Name: name} }
	resp := func(id, name string) store.Site { return store.Site{Kind: store.SiteResponse, CallID: id, Name: name} }

	prev := plan(call("x", "a"), call("y", "a"))
	cur := plan(resp("x", "b"), resp("y", "a"), resp("z", "q"))
	checkPairsAcross(prev, cur)
	require.Len(t, cur.Warnings, 1)
	assert.Equal(t, `response "b" of call id x ends as "b" but its call (line 0) ends as "a"`, cur.Warnings[0].Reason)

	cur = plan(call("x", "b"), resp("x", "b"))
	checkPairsAcross(prev, cur)
	assert.Empty(t, cur.Warnings, "the call in the response's own batch wins")

	cur = plan(resp("x", "b"))
	checkPairsAcross(nil, cur)
	assert.Empty(t, cur.Warnings, "no batch before")
	assert.Empty(t, prev.Warnings, "the previous batch is never changed")
}

// TestCheckPairsLastCallAndAllocations: with a call id used by several calls, a response is
// compared with the last of them in its scope (as before the index was split by scope), and
// checking a batch of 5,000 pairs allocates only its map of calls, not a list of its
// responses: 9 MB of a dense scan's allocations.
func TestCheckPairsLastCallAndAllocations(t *testing.T) {
	site := func(kind store.SiteKind, field string, line int64, id, name string) store.Site {
		return store.Site{Kind: kind, Field: field, Loc: store.Loc{Line: line}, CallID: id, Name: name}
	}
	plan := func(sites []store.Site) *StorePlan {
		sp := &StorePlan{}
		for i := range sites {
			sp.Decisions = append(sp.Decisions, naming.Decision{Site: &sites[i], Action: naming.ActNone})
		}
		return sp
	}
	sp := plan([]store.Site{site(store.SiteCall, "", 1, "x", "a"), site(store.SiteResponse, "", 2, "x", "b"), site(store.SiteCall, "", 3, "x", "b"),
		site(store.SiteBootstrap, "call", 4, "x", "b"), site(store.SiteBootstrap, "call", 4, "x", "c"), site(store.SiteBootstrap, "response", 4, "x", "b")})
	checkPairs(sp)
	require.Len(t, sp.Warnings, 1)
	assert.Equal(t, `response "b" of call id x ends as "b" but its call (line 4) ends as "c"`, sp.Warnings[0].Reason,
		"the live response pairs with the last live call (line 3, same name), the snapshot's with its last call")

	// 5,000 pairs over 50 call ids (a session's ids repeat): only the small map of calls is
	// allocated, nothing per response.
	var sites []store.Site
	for i := range 5000 {
		id := fmt.Sprintf("call_%d", i%50)
		name := "mcp__s__t"
		if i == 4990 {
			name = "mcp__s__other"
		}
		sites = append(sites, site(store.SiteCall, "", int64(2*i+1), id, "mcp__s__t"), site(store.SiteResponse, "", int64(2*i+2), id, name))
	}
	big := plan(sites)
	checkPairs(big)
	require.Len(t, big.Warnings, 1)
	for i := range big.Decisions {
		big.Decisions[i].Site.Name = "mcp__s__t" // every pair agrees: no warning allocates
	}
	big.Warnings = nil
	allocs := testing.AllocsPerRun(5, func() { checkPairs(big) })
	require.Empty(t, big.Warnings)
	t.Logf("checkPairs of 5,000 pairs over 50 call ids: %.0f allocations", allocs)
	assert.LessOrEqual(t, allocs, 12.0, "the map of 50 calls (9 allocations with Go 1.26) and nothing per response")
}

// TestPlanStoreSortsSitesOutOfOrder: a namer's decisions come in site order, and planStore
// sorts them by position (row label, then offset) when that is not position order, found in
// the one pass that also looks for groups, keys and call ids (surveyPlan); in order, they are
// left as they are.
func TestPlanStoreSortsSitesOutOfOrder(t *testing.T) {
	mk := func(locs ...store.Loc) *store.Snapshot {
		snap := &store.Snapshot{Ref: store.Ref{Path: "/x/s.jsonl", Kind: qwen.KindSession}, Agent: qwen.ID}
		for i, l := range locs {
			n := fmt.Sprintf("mcp__s.%d__t", i)
			snap.Sites = append(snap.Sites, store.Site{Loc: l, Kind: store.SiteCall, Name: n, Raw: []byte(`"` + n + `"`)})
		}
		return snap
	}
	order := func(sp *StorePlan) []string {
		var out []string
		for _, d := range sp.Decisions {
			out = append(out, fmt.Sprintf("%s@%d", d.Site.Loc.Row, d.Site.Loc.Offset))
		}
		return out
	}
	for _, c := range []struct {
		locs []store.Loc
		want []string
	}{
		{[]store.Loc{{Offset: 10}, {Offset: 20}, {Offset: 30}}, []string{"@10", "@20", "@30"}},
		{[]store.Loc{{Offset: 10}, {Offset: 30}, {Offset: 20}}, []string{"@10", "@20", "@30"}},
		{[]store.Loc{{Offset: 30}, {Offset: 10}}, []string{"@10", "@30"}},
		{[]store.Loc{{Row: "b", Offset: 1}, {Row: "a", Offset: 9}, {Row: "a", Offset: 2}}, []string{"a@2", "a@9", "b@1"}},
		{[]store.Loc{{Row: "a", Offset: 9}, {Row: "b", Offset: 1}}, []string{"a@9", "b@1"}},
		{[]store.Loc{{Row: "b", Offset: 1}, {Row: "a", Offset: 9}}, []string{"a@9", "b@1"}},
	} {
		for _, pooled := range []bool{false, true} {
			sp := planStore(nil, mk(c.locs...), naming.Policy{}, pooled)
			assert.Equal(t, c.want, order(sp), "sites at %v (pooled %v)", c.locs, pooled)
			sp.release()
		}
	}
}
