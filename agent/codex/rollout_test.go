package codex

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/store"
)

const codexFixtures = "../../fixtures/codex-real/"

// scanCodex scans a Codex rollout file and checks that every site's Raw token is at its offset.
func scanCodex(t testing.TB, path string) *store.Snapshot {
	t.Helper()
	snap, err := jsonl.Open(path, Rollout).Scan(context.Background(), store.ScanOptions{Hash: true})
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, s := range snap.Sites {
		require.LessOrEqual(t, s.Loc.Offset+int64(len(s.Raw)), int64(len(data)))
		assert.Equal(t, string(s.Raw), string(data[s.Loc.Offset:s.Loc.Offset+int64(len(s.Raw))]), "site at %d", s.Loc.Offset)
	}
	return snap
}

// writeRollout writes lines (joined with "\n", plus a final newline) to a temp rollout file.
func writeRollout(t testing.TB, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rollout-2026-11-30T18-55-07-01a22dcf-9134-7922-bfac-658542a5f64b.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return path
}

// stored returns the sites that hold a stored name, and checks that every absent site is the
// namespace placeholder (NamespaceSite) of the name site right before it.
func stored(t testing.TB, snap *store.Snapshot) []store.Site {
	t.Helper()
	var out []store.Site
	for i, s := range snap.Sites {
		if !s.Absent() {
			out = append(out, s)
			continue
		}
		require.Positive(t, i, "an absent site follows its name site")
		assert.Equal(t, NamespaceSite(snap.Sites[i-1]), s)
	}
	return out
}

// sitesBy returns the sites of one field that hold a stored name (absent namespace sites are
// left out: see absentSites).
func sitesBy(snap *store.Snapshot, field string) []store.Site {
	var out []store.Site
	for _, s := range snap.Sites {
		if s.Field == field && !s.Absent() {
			out = append(out, s)
		}
	}
	return out
}

func TestRolloutFixture050(t *testing.T) {
	snap := scanCodex(t, codexFixtures+"rollout-codex-0.50.0.jsonl")
	assert.Equal(t, ID, snap.Agent)
	assert.Equal(t, KindRollout, snap.Ref.Kind)
	assert.Empty(t, snap.Problems)
	assert.Empty(t, snap.Identities, "Codex 0.50.0 wrote no invocation records")
	assert.Equal(t, &Meta{ThreadID: "01a22dcf-9134-7922-bfac-658542a5f64b", CLIVersion: "0.50.0", Line: 1}, MetaOf(snap))
	assert.Empty(t, sitesBy(snap, FieldNamespace), "era E2 calls have no namespace")

	want := []struct {
		line   int64
		name   string
		callID string
	}{
		{8, "mcp__foo-bar__deploy.prod", "call_1e6afa14f2"},
		{10, "mcp__foo-bar__get_data", "call_284644ac43"},
		{12, "mcp__lit__get+data", "call_9addb93fcc"},
		{14, "mcp__lit__get_data_for_ac352d8d5b3162dc1c56186bee052bd46cca7a385", "call_44f16a192e"},
		{16, "mcp__lit__literature.search_pubmed", "call_eeae2320a8"},
		{18, "mcp__lit__literature_search_pubmed", "call_d8b127e59b"},
		{20, "mcp__lit__ok_tool", "call_aade64aec1"},
		{22, "mcp__lit__搜索文献", "call_13dc220cf2"},
	}
	names := sitesBy(snap, FieldName)
	require.Len(t, names, len(want))
	for i, w := range want {
		t.Run(w.name, func(t *testing.T) {
			s := names[i]
			assert.Equal(t, w.line, s.Loc.Line)
			assert.Equal(t, w.name, s.Name)
			assert.Equal(t, w.callID, s.CallID)
			assert.Equal(t, store.SiteCall, s.Kind)
			assert.Equal(t, "payload.name", s.Path)
			assert.NotEmpty(t, s.Group)
			assert.False(t, s.ReadOnly)
		})
	}
}

func TestRolloutFixture0169(t *testing.T) {
	snap := scanCodex(t, codexFixtures+"rollout-codex-0.169.0.jsonl")
	assert.Empty(t, snap.Problems)
	assert.Equal(t, "0.169.0", MetaOf(snap).CLIVersion)
	assert.Equal(t, "01a22dcf-f4ff-7ad3-8cd2-1ea80c2bfa34", MetaOf(snap).ThreadID)

	names, nss := sitesBy(snap, FieldName), sitesBy(snap, FieldNamespace)
	require.Len(t, names, 8)
	require.Len(t, nss, 8)
	for i := range names {
		assert.Equal(t, names[i].Group, nss[i].Group, "name and namespace of one call share a group")
		assert.Equal(t, names[i].CallID, nss[i].CallID)
		assert.Equal(t, names[i].Loc.Line, nss[i].Loc.Line)
		assert.Contains(t, []string{"mcp__lit", "mcp__foo_bar"}, nss[i].Name)
	}
	assert.Equal(t, "literature_search_pubmed_977c8bf14fb3", names[5].Name)
	assert.Equal(t, "payload.namespace", nss[0].Path)

	// Raw identities: one item_completed McpToolCall per call, joined by call id.
	require.Len(t, snap.Identities, 8)
	byCall := map[string]store.Identity{}
	for _, id := range snap.Identities {
		byCall[id.CallID] = id
	}
	for _, n := range names {
		_, ok := byCall[n.CallID]
		assert.True(t, ok, "call %s has its raw identity", n.CallID)
	}
	assert.Equal(t, "foo-bar", byCall["call_1a462deceb"].Server)
	assert.Equal(t, "deploy.prod", byCall["call_1a462deceb"].Tool)
	assert.Equal(t, "搜索文献", byCall["call_de241cda30"].Tool)
}

func TestRolloutRecords(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		sites      []store.Site // Loc, Raw, Units, Group compared separately
		identities []store.Identity
	}{
		{
			name:  "function_call without namespace",
			line:  `{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"mcp__lit__get+data","arguments":"{}","call_id":"c1"}}`,
			sites: []store.Site{{Kind: store.SiteCall, Path: "payload.name", Name: "mcp__lit__get+data", CallID: "c1", Field: "name"}},
		},
		{
			name: "function_call with namespace before name, spaced",
			line: `{ "type" : "response_item", "payload" : { "type":"function_call", "namespace" : "mcp__lit__", "name" : "get_data", "call_id":"c2" } }`,
			sites: []store.Site{
				{Kind: store.SiteCall, Path: "payload.namespace", Name: "mcp__lit__", CallID: "c2", Field: "namespace"},
				{Kind: store.SiteCall, Path: "payload.name", Name: "get_data", CallID: "c2", Field: "name"},
			},
		},
		{
			name:  "escaped name",
			line:  `{"type":"response_item","payload":{"type":"function_call","name":"mcp__lit__\u641c\u7d22","call_id":"c3"}}`,
			sites: []store.Site{{Kind: store.SiteCall, Path: "payload.name", Name: "mcp__lit__搜索", CallID: "c3", Field: "name"}},
		},
		{
			name: "compacted replacement history",
			line: `{"type":"compacted","payload":{"message":"m","replacement_history":[{"type":"message","role":"user","content":[]},` +
				`{"type":"function_call","name":"mcp__lit__a.b","call_id":"c4"},{"type":"function_call_output","call_id":"c4","output":"x"},` +
				`{"type":"function_call","name":"b","namespace":"mcp__x","call_id":"c5"}]}}`,
			sites: []store.Site{
				{Kind: store.SiteCompressed, Path: "payload.replacement_history[1].name", Name: "mcp__lit__a.b", CallID: "c4", Field: "name"},
				{Kind: store.SiteCompressed, Path: "payload.replacement_history[3].name", Name: "b", CallID: "c5", Field: "name"},
				{Kind: store.SiteCompressed, Path: "payload.replacement_history[3].namespace", Name: "mcp__x", CallID: "c5", Field: "namespace"},
			},
		},
		{
			name:  "bare item (before the envelope)",
			line:  `{"type":"function_call","name":"lit__get.data","arguments":"{}","call_id":"c6"}`,
			sites: []store.Site{{Kind: store.SiteCall, Path: "name", Name: "lit__get.data", CallID: "c6", Field: "name"}},
		},
		{
			name:       "mcp_tool_call_end is a raw identity, not a site",
			line:       `{"type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"c1","invocation":{"server":"lit","tool":"get+data","arguments":{}},"result":{"Ok":{"content":[]}}}}`,
			identities: []store.Identity{{Server: "lit", Tool: "get+data", CallID: "c1"}},
		},
		{
			name:       "mcp_tool_call_begin",
			line:       `{"type":"event_msg","payload":{"type":"mcp_tool_call_begin","call_id":"c9","invocation":{"server":"s","tool":"t.u"}}}`,
			identities: []store.Identity{{Server: "s", Tool: "t.u", CallID: "c9"}},
		},
		{
			name:       "item_completed McpToolCall",
			line:       `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"c7","server":"foo-bar","tool":"deploy.prod"}}}`,
			identities: []store.Identity{{Server: "foo-bar", Tool: "deploy.prod", CallID: "c7"}},
		},
		{
			name: "other items are not sites",
			line: `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","id":"m","server":"x","tool":"y"}}}`,
		},
		{
			name: "function_call_output has no name",
			line: `{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"ok","name":"not-a-call"}}`,
		},
		{
			name: "custom_tool_call is not an MCP call",
			line: `{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","call_id":"c8","input":"x"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := scanCodex(t, writeRollout(t, tt.line))
			assert.Empty(t, snap.Problems)
			var got []store.Site
			for _, s := range stored(t, snap) {
				assert.NotEmpty(t, s.Raw)
				assert.NotEmpty(t, s.Group)
				s.Loc, s.Raw, s.Units, s.Group = store.Loc{}, nil, nil, ""
				got = append(got, s)
			}
			assert.ElementsMatch(t, tt.sites, got)
			var ids []store.Identity
			for _, id := range snap.Identities {
				assert.Equal(t, int64(1), id.Loc.Line)
				id.Loc = store.Loc{}
				ids = append(ids, id)
			}
			assert.Equal(t, tt.identities, ids)
		})
	}
}

func TestRolloutInvalidLineKept(t *testing.T) {
	path := writeRollout(t,
		`{"type":"session_meta","payload":{"id":"x","cli_version":"0.50.0"}}`,
		`{"type":"response_item","payload":{"type":"function_call","name":"mcp__a__b.c"`,
		`{"type":"response_item","payload":{"type":"function_call","name":"mcp__a__d.e","call_id":"c"}}`)
	snap := scanCodex(t, path)
	require.Len(t, snap.Problems, 1)
	assert.Equal(t, int64(2), snap.Problems[0].Loc.Line)
	sites := stored(t, snap)
	require.Len(t, sites, 1)
	assert.Equal(t, "mcp__a__d.e", sites[0].Name)
	require.Len(t, snap.Sites, 2, "plus the absent namespace of the call")
	assert.Equal(t, "0.50.0", MetaOf(snap).CLIVersion)
}

func TestCodexNamespaceInsertion(t *testing.T) {
	lines := []string{
		`{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"mcp__lit__literature.search_pubmed","arguments":"{}","call_id":"c1"}}`,
		`{"type":"compacted","payload":{"replacement_history":[{"type":"function_call","name":"mcp__lit__get+data","call_id":"c2"}]}}`,
	}
	path := writeRollout(t, lines...)
	snap := scanCodex(t, path)
	require.Len(t, snap.Sites, 4, "each call's name and the absent namespace emitted at scan time")
	require.Len(t, stored(t, snap), 2)
	var edits []store.Edit
	news := []struct{ name, ns string }{{"literature_search_pubmed_977c8bf14fb3", "mcp__lit"}, {"get_data", "mcp__lit"}}
	for i, s := range stored(t, snap) {
		ns := snap.Sites[2*i+1]
		assert.True(t, ns.Absent())
		assert.Equal(t, FieldNamespace, ns.Field)
		assert.Equal(t, s.Group, ns.Group)
		assert.Equal(t, s.CallID, ns.CallID)
		assert.Empty(t, ns.Raw)
		assert.Equal(t, s.Loc.Offset+int64(len(s.Raw)), ns.Loc.Offset)
		edits = append(edits, store.Edit{Site: s, New: news[i].name}, store.Edit{Site: ns, New: news[i].ns})
	}
	assert.Equal(t, "payload.namespace", snap.Sites[1].Path)
	assert.Equal(t, "payload.replacement_history[0].namespace", snap.Sites[3].Path)

	ch, err := jsonl.Open(path, Rollout).Apply(context.Background(), snap, edits, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.NoError(t, err)
	assert.Equal(t, 4, ch.Edits)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	want := `{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"literature_search_pubmed_977c8bf14fb3","namespace":"mcp__lit","arguments":"{}","call_id":"c1"}}` + "\n" +
		`{"type":"compacted","payload":{"replacement_history":[{"type":"function_call","name":"get_data","namespace":"mcp__lit","call_id":"c2"}]}}` + "\n"
	assert.Equal(t, want, string(got))

	after := scanCodex(t, path)
	require.Len(t, after.Sites, 4, "the inserted namespaces are read back as sites")
	assert.Equal(t, "mcp__lit", sitesBy(after, FieldNamespace)[0].Name)
}
