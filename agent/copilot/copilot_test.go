package copilot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

const (
	fx      = "../../fixtures/copilot-real/"
	s1      = fx + "dot-copilot/session-state/d076bffe-cea9-44a9-98ef-afc988ab2ced/events.jsonl"
	s3      = fx + "dot-copilot/session-state/129c2a75-ecfa-4c74-ba85-025f0d2b251e/events.jsonl"
	r1      = fx + "conformance/copilot-events/.copilot/session-state/d076bffe-cea9-44a9-98ef-afc988ab2ced/events.jsonl"
	flat    = fx + "conformance/copilot-flat/.copilot/session-state/3e7f8944-05ee-4f37-a2e4-d07f495f55dd.jsonl"
	history = "../../fixtures/copilot-derived/dot-copilot/history-session-state/5b8e1c2a-6f0d-4c1e-9a57-3d2f4b6c8e10.json"
	long    = "get_data_for_a_specific_location_and_date_range_extended_with_more_filters"
)

func scan(t *testing.T, path string, p *jsonl.Profile) *store.Snapshot {
	t.Helper()
	snap, err := jsonl.Open(path, p).Scan(context.Background(), store.ScanOptions{})
	require.NoError(t, err)
	return snap
}

func firstLine(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	if i := strings.IndexByte(string(b), '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		path string
		line []byte
		want *jsonl.Profile
	}{
		{"/h/.copilot/session-state/x/events.jsonl", nil, Events},
		{"/h/.copilot/session-state/3e7f8944-05ee-4f37-a2e4-d07f495f55dd.jsonl", nil, Flat},
		{"/h/.copilot/session-state/notes.jsonl", firstLine(t, s1), Flat},
		{"/h/.copilot/history-session-state/a.json", nil, History},
		{"/tmp/copied.jsonl", firstLine(t, s3), Events},
		{"/h/.copilot/session-state/notes.jsonl", []byte(`{"a":1}`), nil},
		{"/tmp/other.jsonl", []byte(`{"type":"session_meta"}`), nil},
		{"/h/.copilot/session-state/x/events.json", nil, nil},
	} {
		got, sure := Detect(c.path, c.line)
		assert.Equal(t, c.want, got, c.path)
		assert.Equal(t, c.want != nil, sure, c.path)
	}
	p, warn := Force("/tmp/x.jsonl", []byte(`{"a":1}`), nil)
	assert.Equal(t, Events, p)
	assert.Contains(t, warn, "does not look like them")
}

func TestHomeAndRoots(t *testing.T) {
	assert.Equal(t, "/h/.copilot", HomeOf("/h/.copilot/session-state/x/events.jsonl"))
	assert.Equal(t, "/h/.copilot", HomeOf("/h/.copilot/session-state/x.jsonl"))
	assert.Equal(t, "/h/.copilot", HomeOf("/h/.copilot/history-session-state/x.json"))
	assert.Equal(t, "", HomeOf("/h/.copilot/other/x.jsonl"))

	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	env := func(vars map[string]string) agent.Env {
		return agent.Env{Home: home, Getenv: func(k string) string { return vars[k] }}
	}
	// Nothing exists: the home's session-state/ (the error names it).
	assert.Equal(t, []string{filepath.Join(home, ".copilot", "session-state")}, Roots(env(nil)))
	ch := filepath.Join(dir, "ch")
	require.NoError(t, os.MkdirAll(filepath.Join(ch, "session-state"), 0o700))
	assert.Equal(t, []string{filepath.Join(ch, "session-state")}, Roots(env(map[string]string{EnvHome: ch})))
	// An older release's $XDG_STATE_HOME/.copilot is walked too, unless the migration left a
	// link to the same directory.
	xdg := filepath.Join(dir, "state")
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, ".copilot", "history-session-state"), 0o700))
	require.NoError(t, os.Symlink(filepath.Join(ch, "session-state"), filepath.Join(xdg, ".copilot", "session-state")))
	assert.Equal(t, []string{filepath.Join(ch, "session-state"), filepath.Join(xdg, ".copilot", "history-session-state")},
		Roots(env(map[string]string{EnvHome: ch, "XDG_STATE_HOME": xdg})))
	_, tried, hint := RootsTried(env(map[string]string{"XDG_STATE_HOME": xdg}))
	assert.Equal(t, "$COPILOT_HOME (not set), so ~/.copilot, and "+filepath.Join(xdg, ".copilot"), tried)
	assert.Equal(t, "set COPILOT_HOME", hint)
	assert.True(t, IsHome(filepath.Join(fx, "dot-copilot")))
	assert.Equal(t, "a Copilot CLI home's session-state/", FollowLink(filepath.Join(fx, "dot-copilot", "session-state")))
}

// TestSessionSites: S1 as 1.0.39 wrote it and 1.0.102 resumed it twice: every call's name
// (toolRequests) and execution_start's, with the raw identities recorded beside them.
func TestSessionSites(t *testing.T) {
	snap := scan(t, s1, Events)
	require.Empty(t, snap.Problems)
	assert.Equal(t, ID, snap.Agent)
	calls, starts := 0, 0
	for _, s := range snap.Sites {
		switch s.Kind {
		case store.SiteCall:
			calls++
		case SiteToolStart:
			starts++
		}
		assert.NotEmpty(t, s.CallID)
	}
	assert.Equal(t, 33, calls) // 11 calls in each of three turns
	assert.Equal(t, 33, starts)
	assert.Equal(t, &Meta{Version: "1.0.39", Cwd: "/home/demo/src/lab"}, MetaOf(snap))
	// Every offset holds the token.
	b, err := os.ReadFile(s1)
	require.NoError(t, err)
	for _, s := range snap.Sites {
		assert.Equal(t, string(s.Raw), string(b[s.Loc.Offset:s.Loc.Offset+int64(len(s.Raw))]))
	}
	// 1.0.39's failed calls record no identity; its successful ones and all of 1.0.102's do.
	ids := map[string]bool{}
	for _, id := range snap.Identities {
		ids[id.Server+"/"+id.Tool] = true
	}
	assert.Len(t, ids, 11)
	assert.True(t, ids["lit/"+long])
	assert.True(t, ids["lit/搜索文献"])
}

func policy(keys ...string) naming.Policy {
	var pol naming.Policy
	p := Policy{}
	for _, k := range keys {
		p.Keys = append(p.Keys, Key{Key: k, Source: "mcp-config.json"})
	}
	naming.SetAgent(&pol, ID, &naming.PathPolicy[Policy]{Default: p})
	return pol
}

type decided struct {
	action naming.Action
	class  mcpname.Class
	new    string
}

func decisions(snap *store.Snapshot, pol naming.Policy) map[string]decided {
	out := map[string]decided{}
	for _, d := range (copilotNamer{}).Decide(snap, pol) {
		k := string(d.Site.Kind) + " " + d.Site.Name
		if prev, ok := out[k]; ok && prev != (decided{d.Action, d.Class, d.New}) {
			out[k+" (differs)"] = decided{d.Action, d.Class, d.New}
		}
		out[k] = decided{d.Action, d.Class, d.New}
	}
	return out
}

// TestRepairProbeR1: S1 with the names probe r1 put back (the 78-unit name of 0.0.340–0.0.417,
// "foo-bar-deploy.prod", "lit-搜索文献"), which 1.0.102 resends and a strict endpoint refuses:
// each gets the name 1.0.102 registers for its raw tool (from the identity of its call, the
// mcpServerName beside it, or the configured keys); the safe names no tool answers are kept.
func TestRepairProbeR1(t *testing.T) {
	snap := scan(t, r1, Events)
	got := decisions(snap, policy("lit", "foo.bar", "foo_bar"))
	cut := "lit-get_data_for_a_specific_location_and_date_range_extended_wit"
	want := map[string]decided{
		"call lit-" + long:                  {naming.ActRewrite, ClassCopilotRenamed, cut},
		"tool-start lit-" + long:            {naming.ActRewrite, ClassCopilotRenamed, cut},
		"call foo-bar-deploy.prod":          {naming.ActRewrite, ClassCopilotRenamed, "foo-bar-deploy-prod"},
		"tool-start foo-bar-deploy.prod":    {naming.ActRewrite, ClassCopilotRenamed, "foo-bar-deploy-prod"},
		"call lit-搜索文献":                     {naming.ActRewrite, ClassCopilotRenamed, "lit-xn--u2un5au31afvj"},
		"tool-start lit-搜索文献":               {naming.ActRewrite, ClassCopilotRenamed, "lit-xn--u2un5au31afvj"},
		"call lit-get_data":                 {naming.ActKeep, ClassCopilotNoTool, ""},
		"call foo_bar-deploy_prod":          {naming.ActKeep, ClassCopilotNoTool, ""},
		"call lit-ok_tool":                  {naming.ActNone, mcpname.ClassClean, ""},
		"call foo-bar-get_data":             {naming.ActNone, mcpname.ClassClean, ""},
		"call lit-literature_search_pubmed": {naming.ActNone, mcpname.ClassClean, ""},
	}
	for k, w := range want {
		assert.Equal(t, w, got[k], k)
	}
	for k := range got {
		assert.NotContains(t, k, "(differs)")
	}
	// Without configured keys the session's own mcpServerName records name the servers.
	got = decisions(snap, naming.Policy{})
	assert.Equal(t, decided{naming.ActRewrite, ClassCopilotRenamed, "foo-bar-deploy-prod"}, got["call foo-bar-deploy.prod"])
	assert.Equal(t, decided{naming.ActRewrite, ClassCopilotRenamed, cut}, got["call lit-"+long])
	// A lone dotted name with nothing naming its server is kept, reported as rejected.
	lone := &store.Snapshot{Sites: []store.Site{{Kind: store.SiteCall, Name: "foo-bar-deploy.prod", Raw: []byte(`"foo-bar-deploy.prod"`)}}}
	ds := (copilotNamer{}).Decide(lone, naming.Policy{})
	assert.Equal(t, ClassCopilotUnattributed, ds[0].Class)
	assert.Equal(t, naming.ActKeep, ds[0].Action)
	assert.True(t, ds[0].KeepsRejected())
}

// TestRepairRecordedKeepsGenuine: the genuine sessions hold only provider-safe names: nothing is
// rewritten; 1.0.39's four mangled calls are reported with the tool they were meant for.
func TestRepairRecordedKeepsGenuine(t *testing.T) {
	snap := scan(t, s1, Events)
	ds := (copilotNamer{}).Decide(snap, policy("lit", "foo.bar", "foo_bar"))
	kept := map[string]string{}
	for _, d := range ds {
		assert.NotEqual(t, naming.ActRewrite, d.Action, d.Site.Name)
		if d.Action == naming.ActKeep {
			assert.Equal(t, ClassCopilotNoTool, d.Class)
			kept[d.Site.Name] = d.Note
		}
	}
	assert.Len(t, kept, 4)
	assert.Contains(t, kept["lit-_"], "1.0.39's rewrite of a call to lit-搜索文献, meant lit/搜索文献, which 1.0.102 names lit-xn--u2un5au31afvj")
	assert.Contains(t, kept["lit-get_data"], "meant lit/get+data, which 1.0.102 names lit-get-data")
	for _, d := range (copilotNamer{}).Decide(scan(t, s3, Events), policy("lit")) {
		assert.Equal(t, naming.ActNone, d.Action, d.Site.Name)
	}
}

// TestHistoryDocument: a history-session-state document's names (raw era: uncapped, dotted)
// are attributed by the configured keys.
func TestHistoryDocument(t *testing.T) {
	snap := scan(t, history, History)
	require.Empty(t, snap.Problems)
	got := decisions(snap, policy("lit", "foo.bar"))
	assert.Equal(t, decided{naming.ActRewrite, ClassCopilotRenamed, "lit-literature-search_pubmed"}, got["call lit-literature.search_pubmed"])
	assert.Equal(t, decided{naming.ActRewrite, ClassCopilotRenamed, "foo-bar-deploy-prod"}, got["call foo.bar-deploy.prod"])
	assert.Equal(t, decided{naming.ActRewrite, ClassCopilotRenamed, "lit-get_data_for_a_specific_location_and_date_range_extended_wit"}, got["call lit-"+long])
	assert.Equal(t, decided{naming.ActNone, mcpname.ClassBuiltin, ""}, got["call bash"])
}

// TestAmbiguousKept: "foo-bar-x" written by the server-sanitized era may be foo.bar's or
// foo-bar's tool "x"... but only one is a rejected name's reading: a dotted tool under two keys
// that sanitize alike is ambiguous when 1.0.102 names them differently.
func TestAmbiguousKept(t *testing.T) {
	snap := &store.Snapshot{Sites: []store.Site{{Kind: store.SiteCall, Name: "foo-bar-deploy.prod", Raw: []byte(`"foo-bar-deploy.prod"`)}}}
	got := decisions(snap, policy("foo.bar", "foo-bar"))
	// both keys give "foo-bar-deploy-prod": one current name, rewritten
	assert.Equal(t, decided{naming.ActRewrite, ClassCopilotRenamed, "foo-bar-deploy-prod"}, got["call foo-bar-deploy.prod"])
	snap = &store.Snapshot{Sites: []store.Site{{Kind: store.SiteCall, Name: "a-b-c.d", Raw: []byte(`"a-b-c.d"`)}}}
	got = decisions(snap, policy("a", "a-b"))
	// "a"/"b-c.d" → a-b-c-d, "a-b"/"c.d" → a-b-c-d as well: one name; "a.b" would be another.
	assert.Equal(t, naming.ActRewrite, got["call a-b-c.d"].action)
	got = decisions(snap, policy("a", "a-b", "a@b"))
	assert.Equal(t, naming.ActRewrite, got["call a-b-c.d"].action, "a@b sanitizes to a-b as well")
}

func TestFlatAndRelocate(t *testing.T) {
	snap := scan(t, flat, Flat)
	require.Len(t, snap.Problems, 1)
	assert.Equal(t, store.SevWarning, snap.Problems[0].Severity)
	assert.Equal(t, FlatWarning, snap.Problems[0].Reason)
	to, why := Relocate(store.Ref{Path: "/h/.copilot/session-state/3e7f.jsonl", Kind: KindFlat})
	assert.Equal(t, "/h/.copilot/session-state/3e7f/events.jsonl", to)
	assert.Contains(t, why, "1.0.102")
	to, _ = Relocate(store.Ref{Path: "/h/.copilot/session-state/x/events.jsonl", Kind: KindEvents})
	assert.Empty(t, to)
}
