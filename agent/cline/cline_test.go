package cline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	permcline "github.com/sessionfix/sessionfix/permission/cline"
	"github.com/sessionfix/sessionfix/store"
)

const (
	fx      = "../../fixtures/cline-real/"
	data2   = fx + "dot-cline-data-after-2.18.0"
	data3   = fx + "dot-cline-data-after-3.0.65"
	native  = "/tasks/1796512398525/api_conversation_history.json"
	noY     = "/tasks/1796512842392/api_conversation_history.json"
	xmlEra  = "/tasks/1796512343411/api_conversation_history.json"
	session = "/sessions/1796512611515_x7e5r/1796512611515_x7e5r.messages.json"
	long56  = "get_data_for_a_specific_location_and_date_range_extended"
	long74  = "query_documents_by_semantic_similarity_with_metadata_filters_and_reranking"
)

// recorded are the eleven raw tools of the recording (fixtures/cline-real/README.md).
var recorded = []agent.Tool{
	{Server: "lit", Tool: "literature.search_pubmed"}, {Server: "lit", Tool: "literature_search_pubmed"}, {Server: "lit", Tool: "get+data"},
	{Server: "lit", Tool: long56}, {Server: "lit", Tool: long74}, {Server: "lit", Tool: "搜索文献"}, {Server: "lit", Tool: "search"},
	{Server: "foo.bar", Tool: "get_data"}, {Server: "foo.bar", Tool: "deploy.prod"}, {Server: "foo_bar", Tool: "get_data"}, {Server: "foo_bar", Tool: "deploy.prod"},
}

func scan(t *testing.T, path string, p *jsonl.Profile) *store.Snapshot {
	t.Helper()
	snap, err := jsonl.Open(path, p).Scan(context.Background(), store.ScanOptions{})
	require.NoError(t, err)
	return snap
}

func TestDetectAndHomeOf(t *testing.T) {
	for _, c := range []struct {
		path string
		want *jsonl.Profile
		home string
	}{
		{"/h/.cline/data/tasks/1/api_conversation_history.json", Task, "/h/.cline/data"},
		{"/h/.cline/data/sessions/1_x/1_x.messages.json", Session, "/h/.cline/data"},
		{"/h/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1/api_conversation_history.json", Task, "/h/.config/Code/User/globalStorage/saoudrizwan.claude-dev"},
		{"/h/.cline/data/tasks/1/ui_messages.json", nil, ""},
		{"/h/.cline/data/sessions/1_x/1_x.json", nil, ""},
		{"/h/.cline/data/sessions/1_x/2_y.messages.json", nil, ""},
	} {
		got, sure := Detect(c.path, nil)
		assert.Equal(t, c.want, got, c.path)
		assert.Equal(t, c.want != nil, sure, c.path)
		assert.Equal(t, c.home, HomeOf(c.path), c.path)
	}
	p, _ := Force("/tmp/copy/api_conversation_history.json", nil, nil)
	assert.Equal(t, Task, p)
	p, _ = Force("/tmp/copy/x.messages.json", nil, nil)
	assert.Equal(t, Session, p)
}

func TestRoots(t *testing.T) {
	home := t.TempDir()
	env := func(vars map[string]string) agent.Env {
		return agent.Env{Home: home, Getenv: func(k string) string { return vars[k] }}
	}
	// Nothing exists: the CLI's data directory, so the error names it.
	assert.Equal(t, []string{filepath.Join(home, ".cline", "data")}, Roots(env(nil)))
	assert.Equal(t, []string{"/elsewhere"}, Roots(env(map[string]string{EnvDataDir: "/elsewhere"})))

	cli := filepath.Join(home, ".cline", "data")
	cursor := filepath.Join(home, ".config", "Cursor", "User", "globalStorage", ExtensionID)
	mac := filepath.Join(home, "Library", "Application Support", "Code - Insiders", "User", "globalStorage", ExtensionID)
	for _, d := range []string{cli, cursor, mac} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	assert.Equal(t, []string{cli, cursor, mac}, Roots(env(nil)))
	xdg := filepath.Join(home, "xdg")
	vscodium := filepath.Join(xdg, "VSCodium", "User", "globalStorage", ExtensionID)
	require.NoError(t, os.MkdirAll(vscodium, 0o755))
	assert.Equal(t, []string{cli, vscodium, mac}, Roots(env(map[string]string{"XDG_CONFIG_HOME": xdg})))
	assert.Len(t, ExtensionDirs(env(nil).Getenv, home), 10, "5 editors, Linux and macOS")
}

// TestTaskServers: every native-era call of the two 2.18.0 tasks gets the server its result
// text names, the same as the raw serverName ui_messages.json shows for the call (task
// 1796512842392: c8Ut3z is foo.bar and cKwSyy foo_bar; the README lists those two uids
// in another order).
func TestTaskServers(t *testing.T) {
	uids := map[string]string{"cOeQcj": "lit", "cGCQxv": "foo.bar", "chKP03": "foo_bar", "caYhWc": "lit", "c8Ut3z": "foo.bar", "cKwSyy": "foo_bar"}
	for _, path := range []string{data3 + native, data3 + noY, data2 + native, fx + "task-1796512398525-before-resume/api_conversation_history.json"} {
		snap := scan(t, path, Task)
		mcp := 0
		for _, s := range snap.Sites {
			assert.Equal(t, store.SiteCall, s.Kind)
			assert.NotEmpty(t, s.CallID, s.Name)
			uid, _, ok := mcpname.Cline2Split(s.Name)
			if !ok {
				assert.Equal(t, "attempt_completion", s.Name)
				continue
			}
			mcp++
			assert.Equal(t, uids[uid], s.Server, "%s: %s", path, s.Name)
		}
		assert.Equal(t, 9, mcp, path)
	}
	// The XML era: names only inside assistant text, no site.
	assert.Empty(t, scan(t, data3+xmlEra, Task).Sites)
}

// TestSessionSites: 3.0.65's session holds every recorded tool's 3.x name in calls and
// results, each result tied to its call; the names are Cline3Name's.
func TestSessionSites(t *testing.T) {
	snap := scan(t, data3+session, Session)
	calls := map[string]string{}
	var names []string
	for _, s := range snap.Sites {
		if s.Kind == store.SiteCall {
			calls[s.CallID] = s.Name
			names = append(names, s.Name)
		}
	}
	assert.Len(t, calls, 22)
	responses := 0
	for _, s := range snap.Sites {
		if s.Kind == store.SiteResponse {
			responses++
			assert.Equal(t, calls[s.CallID], s.Name)
		}
	}
	assert.Equal(t, 22, responses)
	var want []string
	for _, t := range recorded {
		want = append(want, mcpname.Cline3Name(t.Server, t.Tool))
	}
	slices.Sort(want)
	assert.Equal(t, want, slices.Compact(slices.Sorted(slices.Values(names))))
}

func decideAll(t *testing.T, path string, p *jsonl.Profile, pol *Policy) []naming.Decision {
	t.Helper()
	snap := scan(t, path, p)
	var np naming.Policy
	if pol != nil {
		naming.SetAgent(&np, ID, &naming.PathPolicy[Policy]{Default: *pol})
	}
	return namer{}.Decide(snap, np)
}

func TestRepair2(t *testing.T) {
	// Without an inventory every rejected name is kept.
	for _, d := range decideAll(t, data3+native, Task, nil) {
		if !mcpname.IsClineSafe(d.Site.Name) {
			assert.Equal(t, ClassCline2Rejected, d.Class, d.Site.Name)
			assert.Equal(t, naming.ActKeep, d.Action)
			assert.Contains(t, d.Note, "rename the tool at its server or disable it")
		} else if d.Site.Name != "attempt_completion" {
			assert.Equal(t, ClassCline2OldUID, d.Class, d.Site.Name)
		}
	}
	// Confirmed tools: same uid, sanitized tool; literature.search_pubmed would become the
	// name of lit's other tool literature_search_pubmed, so it gets 3.x's hash suffix.
	inv := slices.DeleteFunc(slices.Clone(recorded), func(t agent.Tool) bool { return t == agent.Tool{Server: "foo_bar", Tool: "deploy.prod"} })
	got := map[string]string{}
	for _, d := range decideAll(t, data3+native, Task, &Policy{Tools: inv, Source: "inventory inv.json"}) {
		if d.Action == naming.ActRewrite {
			assert.Equal(t, ClassCline2Renamed, d.Class)
			got[d.Site.Name] = d.New
		} else if !mcpname.IsClineSafe(d.Site.Name) {
			assert.Equal(t, "chKP030mcp0deploy.prod", d.Site.Name)
			assert.Contains(t, d.Note, "foo_bar/deploy.prod is not in inventory inv.json")
		}
	}
	assert.Equal(t, map[string]string{
		"cOeQcj0mcp0literature.search_pubmed": "cOeQcj0mcp0literature_search_pubmed_9547b99f",
		"cOeQcj0mcp0get+data":                 "cOeQcj0mcp0get_data",
		"cOeQcj0mcp0搜索文献":                     "cOeQcj0mcp0_",
		"cGCQxv0mcp0deploy.prod":              "cGCQxv0mcp0deploy_prod",
	}, got)
	assert.Equal(t, "literature_search_pubmed", Cline2Repair("literature.search_pubmed", []string{"search"}))
}

func TestRepair3(t *testing.T) {
	// Every name 3.0.65 wrote is provider-safe: nothing to do.
	for _, d := range decideAll(t, data3+session, Session, nil) {
		assert.Equal(t, naming.ActNone, d.Action, d.Site.Name)
	}
	// A stored name another rule wrote gets the 3.x rule.
	d := decide3(&store.Site{Name: "lit__literature.search_pubmed"}, Policy{})
	assert.Equal(t, ClassCline3Renamed, d.Class)
	assert.Equal(t, "lit__literature_search_pubmed_afec155c", d.New)
	// With an inventory, a 3.x name no tool has is reported.
	d = decide3(&store.Site{Name: "lit__gone_tool"}, Policy{Tools: recorded})
	assert.Equal(t, ClassCline3NoTool, d.Class)
	d = decide3(&store.Site{Name: "lit__search"}, Policy{Tools: recorded})
	assert.Equal(t, mcpname.ClassClean, d.Class)
}

func TestOrphans(t *testing.T) {
	o, err := FindOrphans(data3)
	require.NoError(t, err)
	require.NotNil(t, o)
	assert.Equal(t, []string{"1796512343411", "1796512398525", "1796512842392"}, o.Tasks)
	assert.Equal(t, time.UnixMilli(1796512842392).UTC(), o.Newest.UTC())
	assert.Equal(t, "2026-12-05", o.Newest.UTC().Format("2006-01-02"))
	// A 2.x data directory has no orphans.
	o, err = FindOrphans(data2)
	require.NoError(t, err)
	assert.Nil(t, o)
	assert.Equal(t, 3, Generation(data3))
	assert.Equal(t, 2, Generation(data2))
}

func readSettings(t *testing.T, dir string) permcline.Settings {
	t.Helper()
	set, _, ok, err := ReadSettings(SettingsPath(dir), nil)
	require.NoError(t, err)
	require.True(t, ok)
	return set
}

// TestAuditRows: under the 3.0.65 install the three dropped lists and the five tools that now
// run unasked (three unlisted, two 2.x did not offer) are the gained rows, first; under 2.x
// nothing is gained.
func TestAuditRows(t *testing.T) {
	rows := auditRows(data3, readSettings(t, data3), recorded, nil, 3)
	var gained []string
	for i, r := range rows {
		if r.Finding == "gained" {
			assert.Equal(t, len(gained), i, "gained rows come first")
			gained = append(gained, r.Server+"/"+r.Tool)
			assert.Equal(t, "approved", r.After)
		}
	}
	assert.Equal(t, []string{"lit/*", "foo.bar/*", "foo_bar/*", "lit/literature_search_pubmed", "lit/" + long56, "lit/" + long74, "foo.bar/get_data", "foo_bar/deploy.prod"}, gained)
	assert.Len(t, rows, 3+11)

	for _, r := range auditRows(data2, readSettings(t, data2), recorded, nil, 2) {
		assert.NotEqual(t, "gained", r.Finding, r.Tool)
	}
	// Without an inventory the tools come from the 2.x tasks' calls.
	var hist []string
	for _, h := range HistoryTools(context.Background(), data3, func(p string, err error) { t.Errorf("%s: %v", p, err) }) {
		hist = append(hist, h.Tool.Server+"/"+h.Tool.Tool)
	}
	assert.Equal(t, []string{"lit/literature.search_pubmed", "lit/literature_search_pubmed", "lit/get+data", "lit/搜索文献", "lit/search",
		"foo.bar/get_data", "foo.bar/deploy.prod", "foo_bar/get_data", "foo_bar/deploy.prod"}, hist)
}

// TestDeclared: what each generation offers for the tools the settings name: 2.x drops the
// 56- and 74-unit tools (a warning each), 3.x names every one.
func TestDeclared(t *testing.T) {
	decl, probs := declared(data3, SettingsPath(data3), readSettings(t, data3), recorded)
	var n2, n3 []string
	for _, d := range decl {
		if d.Release == "Cline 2.x" {
			n2 = append(n2, d.Name)
		} else {
			n3 = append(n3, d.Name)
		}
		assert.Contains(t, d.Fix, "rename the tool at its server or disable it")
	}
	assert.Len(t, n2, 9)
	assert.Contains(t, n2, "cXXXXX0mcp0literature.search_pubmed")
	assert.Len(t, n3, 11)
	assert.Contains(t, n3, "lit__query_documents_by_semantic_similarity_with_metada_1f0667a5")
	require.Len(t, probs, 2)
	assert.Contains(t, probs[0].Reason, "Cline 2.x does not offer lit/"+long56)
}
