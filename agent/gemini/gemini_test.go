package gemini_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/agent/gemini"
	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

const (
	fx       = "../../fixtures/gemini-real/"
	after    = fx + "dot-gemini-after-resume/"
	labJSON  = after + "tmp/lab/chats/session-2026-12-05T23-22-522ccb7f.json"
	labJSONL = after + "tmp/lab/chats/session-2026-12-05T23-22-522ccb7f.jsonl"
	hashJSON = after + "tmp/a0c9df951b23fcfce00a2bbcbf05d4e68ac9d54e65ba6fe49f604d57ff0eb3da/chats/session-2026-12-05T23-22-522ccb7f.json"
	opsJSONL = after + "tmp/ops/chats/session-2026-12-05T23-23-940a1183.jsonl"
)

func env(vars map[string]string, home string) agent.Env {
	return agent.Env{Getenv: func(k string) string { return vars[k] }, Home: home}
}

func TestHomeAndRoots(t *testing.T) {
	e := env(nil, "/home/me")
	assert.Equal(t, "/home/me/.gemini", gemini.Home(e.Getenv, e.Home))
	assert.Equal(t, []string{"/home/me/.gemini/tmp"}, gemini.Roots(e))
	e = env(map[string]string{"GEMINI_CLI_HOME": "/srv/alt"}, "/home/me")
	assert.Equal(t, "/srv/alt/.gemini", gemini.Home(e.Getenv, e.Home))
	e = env(map[string]string{"GEMINI_CLI_HOME": "~/alt"}, "/home/me")
	assert.Equal(t, "/home/me/alt/.gemini", gemini.Home(e.Getenv, e.Home))
	what, tried, hint := gemini.Agent.Core().RootsTried(env(nil, "/home/me"))
	assert.Equal(t, "Gemini CLI sessions", what)
	assert.Equal(t, "$GEMINI_CLI_HOME (not set), so ~/.gemini/tmp", tried)
	assert.Equal(t, "set GEMINI_CLI_HOME", hint)

	// A sandboxed home's tmp/ is a root when it exists.
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".cache", ".gemini", "tmp"), 0o755))
	assert.Equal(t, []string{filepath.Join(home, ".gemini", "tmp"), filepath.Join(home, ".cache", ".gemini", "tmp")}, gemini.Roots(env(nil, home)))

	assert.Equal(t, "/h/.gemini", gemini.HomeOf("/h/.gemini/tmp/lab/chats/session-x.jsonl"))
	assert.Equal(t, "/h/.gemini", gemini.HomeOf("/h/.gemini/tmp/lab/chats/0123abcd/agent.jsonl"))
	assert.Equal(t, "", gemini.HomeOf("/h/.gemini/projects.json"))
	assert.Equal(t, "", gemini.HomeOf("/h/projects/x/chats/a.jsonl"))
}

func TestDetect(t *testing.T) {
	meta := []byte(`{"sessionId":"522ccb7f-746c-4569-ba63-00d2941a55d4","projectHash":"a0c9","startTime":"x"}`)
	cases := []struct {
		path  string
		first []byte
		want  *jsonl.Profile
	}{
		{"/h/.gemini/tmp/lab/chats/session-2026-12-05T23-22-522ccb7f.json", []byte("{"), gemini.SessionJSON},
		{"/h/.gemini/tmp/lab/chats/session-2026-12-05T23-22-522ccb7f.jsonl", meta, gemini.Session},
		{"/h/copy/tmp/a0c9/chats/session-2026-12-05T23-22-522ccb7f.json", []byte("{"), gemini.SessionJSON},
		{"/h/.gemini/tmp/lab/chats/522ccb7f/3b1e2c44-0000-4000-8000-000000000000.jsonl", meta, gemini.Session},
		// Not Gemini CLI's: a fork's hidden home, another layout, another first line.
		{"/h/.qwen/tmp/lab/chats/session-2026-12-05T23-22-522ccb7f.json", []byte("{"), nil},
		{"/h/.gemini/projects/lab/chats/3b1e2c44-0000-4000-8000-000000000000.jsonl", meta, nil},
		{"/h/.gemini/tmp/lab/chats/522ccb7f/3b1e2c44-0000-4000-8000-000000000000.jsonl", []byte(`{"uuid":"u","sessionId":"s","projectHash":"p"}`), nil},
		{"/h/.gemini/tmp/lab/logs.json", []byte("["), nil},
	}
	for _, c := range cases {
		p, sure := gemini.Detect(c.path, c.first)
		assert.Equal(t, c.want, p, c.path)
		assert.Equal(t, c.want != nil, sure, c.path)
	}
	// Through the list: Gemini CLI's sure verdict comes before Qwen Code's chats/ rule, and Qwen
	// Code's own sessions stay its own.
	d := all.DetectWith(context.Background(), "/h/.gemini/tmp/lab/chats/session-2026-12-05T23-22-522ccb7f.jsonl", meta, all.Options{})
	require.NotNil(t, d.Store)
	assert.Equal(t, gemini.KindSession, d.Store.Ref().Kind)
	d = all.DetectWith(context.Background(), "/h/.qwen/projects/-h-lab/chats/3b1e2c44-0000-4000-8000-000000000000.jsonl", []byte(`{"uuid":"u","sessionId":"s","type":"user"}`), all.Options{})
	require.NotNil(t, d.Store)
	assert.Equal(t, qwen.KindSession, d.Store.Ref().Kind)
}

func TestForce(t *testing.T) {
	p, w := gemini.Force("/x/s1-session-after-resume.jsonl", []byte(`{"sessionId":"s","projectHash":"p"}`), nil)
	assert.Equal(t, gemini.Session, p)
	assert.Empty(t, w)
	p, w = gemini.Force("/x/s1-session-before-resume.json", []byte("{"), nil)
	assert.Equal(t, gemini.SessionJSON, p)
	assert.Empty(t, w)
	p, w = gemini.Force("/x/notes.jsonl", []byte(`{"a":1}`), nil)
	assert.Equal(t, gemini.Session, p)
	assert.Contains(t, w, "no Gemini CLI metadata line")
	p, w = gemini.Force("/x/.qwen/usage_record.jsonl", nil, qwen.Usage)
	assert.Equal(t, gemini.Session, p)
	assert.Contains(t, w, "looks like a Qwen Code usage record")
	p, _ = gemini.Force("/x/settings.json", []byte("{"), nil)
	assert.Nil(t, p)
}

func scan(t *testing.T, path string) *store.Snapshot {
	t.Helper()
	head, err := all.ReadHead(path)
	require.NoError(t, err)
	d := all.DetectWith(context.Background(), path, head, all.Options{})
	require.NotNil(t, d.Store, path)
	snap, err := d.Store.Scan(context.Background(), store.ScanOptions{})
	require.NoError(t, err)
	require.Empty(t, snap.Problems)
	return snap
}

// TestEveryRecordedSessionIsDetected: each session file of both recorded homes is a Gemini CLI
// store (the .json twins, the converted .jsonl, the second small .jsonl of a resume).
func TestEveryRecordedSessionIsDetected(t *testing.T) {
	files, err := filepath.Glob(fx + "dot-gemini-*/tmp/*/chats/*")
	require.NoError(t, err)
	require.Len(t, files, 14)
	for _, f := range files {
		head, err := all.ReadHead(f)
		require.NoError(t, err)
		d := all.DetectWith(context.Background(), f, head, all.Options{})
		require.NotNil(t, d.Store, f)
		want := gemini.KindSession
		if strings.HasSuffix(f, ".json") {
			want = gemini.KindSessionJSON
		}
		assert.Equal(t, want, d.Store.Ref().Kind, f)
	}
}

// TestJSONSessionSites: the 0.10.0 session (hash directory): one call and one response site per
// stored call, each with the call's id, and the displayName of each call as its identity.
func TestJSONSessionSites(t *testing.T) {
	snap := scan(t, hashJSON)
	assert.Equal(t, gemini.KindSessionJSON, snap.Ref.Kind)
	require.Len(t, snap.Sites, 32)
	require.Len(t, snap.Identities, 16)
	calls, resps := 0, 0
	for _, s := range snap.Sites {
		switch s.Kind {
		case store.SiteCall:
			calls++
			assert.Regexp(t, `^messages\[\d+\]\.toolCalls\[\d+\]\.name$`, s.Path)
		case store.SiteResponse:
			resps++
			assert.Regexp(t, `^messages\[\d+\]\.toolCalls\[\d+\]\.result\[0\]\.functionResponse\.name$`, s.Path)
		}
		assert.True(t, strings.HasPrefix(s.CallID, s.Name+"-"), "the 0.10.0 id %q starts with the name %q", s.CallID, s.Name)
	}
	assert.Equal(t, 16, calls)
	assert.Equal(t, 16, resps)
	id := snap.Identities[2]
	assert.Equal(t, store.Identity{Server: "lit", Tool: "get+data", CallID: "get_data-1796512965952-8fe08e11c521f", Loc: id.Loc}, id)
	b, err := os.ReadFile(hashJSON)
	require.NoError(t, err)
	for _, s := range snap.Sites {
		assert.Equal(t, string(s.Raw), string(b[s.Loc.Offset:s.Loc.Offset+int64(len(s.Raw))]), "the site's token is at its offset")
	}
}

// TestJSONLSessionSites: the .jsonl 0.61.0 converted the 0.10.0 session into holds the names in
// message lines and in the $set record of line 6, where every call's result repeats the 16
// responses of the turn: each response site is resolved by its own id.
func TestJSONLSessionSites(t *testing.T) {
	snap := scan(t, labJSONL)
	perLine := map[int64]int{}
	for _, s := range snap.Sites {
		perLine[s.Loc.Line]++
	}
	assert.Equal(t, map[int64]int{3: 32, 6: 16 + 16 + 16 + 16*16, 11: 30, 12: 15}, perLine)
	ids := map[string]bool{}
	for _, id := range snap.Identities {
		if id.Loc.Line == 6 {
			ids[id.CallID] = true
		}
	}
	require.Len(t, ids, 16)
	for _, s := range snap.Sites {
		if s.Loc.Line == 6 {
			assert.True(t, ids[s.CallID], "line 6 %s %s: its id %q is one of the turn's calls", s.Path, s.Name, s.CallID)
		}
	}
	var paths []string
	for _, s := range snap.Sites {
		if s.Loc.Line == 6 && !slices.Contains(paths, pathShape(s.Path)) {
			paths = append(paths, pathShape(s.Path))
		}
	}
	assert.ElementsMatch(t, []string{
		"$set.messages[N].content[N].functionCall.name",
		"$set.messages[N].toolCalls[N].name",
		"$set.messages[N].toolCalls[N].result[N].functionResponse.name",
		"$set.messages[N].content[N].functionResponse.name",
	}, paths)
}

func pathShape(p string) string {
	var b strings.Builder
	in := false
	for _, r := range p {
		switch {
		case r == '[':
			in = true
			b.WriteString("[N")
		case r == ']':
			in = false
			b.WriteRune(r)
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func decide(snap *store.Snapshot, pol *gemini.Policy) []naming.Decision {
	var np naming.Policy
	if pol != nil {
		naming.SetAgent(&np, gemini.ID, &naming.PathPolicy[gemini.Policy]{Default: *pol})
	}
	return gemini.Agent.Core().Namer.Decide(snap, np)
}

// TestRepairOfRecordedSessions: every stored call of the 0.10.0 and 0.32.1 sessions (each of
// their files) gets the name 0.61.0 declared for its raw tool; the foo_bar and "foo bar" tools'
// shared name is written and reported as shared; nothing is kept; the 0.33.2 session is clean.
func TestRepairOfRecordedSessions(t *testing.T) {
	files, err := filepath.Glob(after + "tmp/*/chats/*")
	require.NoError(t, err)
	for _, f := range files {
		snap := scan(t, f)
		byCall := map[string]store.Identity{}
		for _, id := range snap.Identities {
			byCall[id.CallID] = id
		}
		for _, d := range decide(snap, nil) {
			id, ok := byCall[d.Site.CallID]
			require.True(t, ok, "%s: %s has its call's displayName", f, d.Site.Name)
			want := mcpname.GeminiName(id.Server, id.Tool)
			assert.NotEqual(t, naming.ActKeep, d.Action, "%s: %s", f, d.Site.Name)
			if d.Site.Name == want {
				assert.Equal(t, naming.ActNone, d.Action)
				continue
			}
			assert.Equal(t, naming.ActRewrite, d.Action, d.Site.Name)
			assert.Equal(t, want, d.New)
			if id.Tool == "get_data" && (id.Server == "foo_bar" || id.Server == "foo bar") {
				assert.Equal(t, gemini.ClassShared, d.Class, d.Site.Name)
				assert.Contains(t, d.Note, "mcp_foo_bar_get_data is the name of 2 raw tools (foo bar/get_data, foo_bar/get_data)")
			} else {
				assert.Equal(t, gemini.ClassRenamed, d.Class, d.Site.Name)
			}
			assert.Equal(t, "displayName", d.Source)
		}
	}
	for _, d := range decide(scan(t, opsJSONL), nil) {
		assert.Equal(t, naming.ActNone, d.Action, d.Site.Name)
	}
}

// TestNamesWithoutDisplayName: a call no displayName attributes is named from the inventory or
// the settings' server keys; a bare name several tools had is kept as ambiguous; a name the
// rule rejects and nothing attributes is kept and counts as rejected; a built-in call is left.
func TestNamesWithoutDisplayName(t *testing.T) {
	site := func(name, id string) store.Site {
		return store.Site{Kind: store.SiteCall, Name: name, CallID: id, Raw: []byte(`"` + name + `"`)}
	}
	snap := &store.Snapshot{Agent: gemini.ID, Sites: []store.Site{
		site("3d_render", "a"), site("get_data", "b"), site("foo bar__get_data", "c"), site("read_file", "d"), site("search", "e"),
	}}
	ds := decide(snap, nil)
	assert.Equal(t, naming.ActKeep, ds[0].Action)
	assert.Equal(t, gemini.ClassUnattributed, ds[0].Class)
	assert.True(t, ds[0].KeepsRejected())
	assert.Equal(t, naming.ActKeep, ds[2].Action)
	assert.True(t, ds[2].KeepsRejected())
	assert.Equal(t, naming.ActNone, ds[1].Action)
	assert.Equal(t, mcpname.ClassBuiltin, ds[3].Class)

	pol := &gemini.Policy{
		Tools:       []mcpname.GeminiTool{{Server: "lit", Tool: "3d_render"}, {Server: "lit", Tool: "get+data"}, {Server: "foo.bar", Tool: "get_data"}, {Server: "lit", Tool: "search"}},
		ToolsSource: "inv.json",
		Keys:        []gemini.Key{{Key: "foo bar", Source: "settings.json"}},
	}
	ds = decide(snap, pol)
	assert.Equal(t, naming.ActRewrite, ds[0].Action)
	assert.Equal(t, "mcp_lit_3d_render", ds[0].New)
	assert.Equal(t, "inv.json", ds[0].Source)
	assert.Equal(t, naming.ActKeep, ds[1].Action)
	assert.Contains(t, ds[1].Note, "mcp_lit_get_data (lit/get+data) or mcp_foo.bar_get_data (foo.bar/get_data)")
	assert.Equal(t, naming.ActRewrite, ds[2].Action)
	assert.Equal(t, "mcp_foo_bar_get_data", ds[2].New)
	assert.Equal(t, "server key foo bar of settings.json", ds[2].Source)
	assert.Equal(t, naming.ActNone, ds[3].Action)
	assert.Equal(t, "mcp_lit_search", ds[4].New)

	// A call whose displayName is a built-in's is never renamed, whatever the inventory says.
	b := []byte(`{"sessionId":"s","projectHash":"p"}
{"id":"m","type":"gemini","content":"","toolCalls":[{"id":"search-1","name":"search","displayName":"GoogleSearch"}]}
`)
	p := filepath.Join(t.TempDir(), "tmp", "p", "chats", "session-x.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, b, 0o644))
	ds = decide(scan(t, p), pol)
	require.Len(t, ds, 1)
	assert.Equal(t, naming.ActNone, ds[0].Action)
	assert.Equal(t, mcpname.ClassBuiltin, ds[0].Class)
}

func TestKnownFileAndProjectRoots(t *testing.T) {
	assert.Contains(t, gemini.KnownFile(after+"settings.json"), "Gemini CLI settings")
	assert.Contains(t, gemini.KnownFile(after+"projects.json"), "Gemini CLI projects registry")
	home := filepath.Join(t.TempDir(), ".gemini")
	require.NoError(t, os.MkdirAll(filepath.Join(home, "policies"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "policies", "d1.toml"), nil, 0o644))
	assert.Contains(t, gemini.KnownFile(filepath.Join(home, "policies", "d1.toml")), "Gemini CLI policy file")
	assert.Equal(t, "", gemini.KnownFile(fx+"rules/deny/policies/d1-g1-qualified.toml"), "not in a Gemini CLI home")
	assert.Equal(t, "", gemini.KnownFile(fx+"README.md"))
	assert.True(t, gemini.IsHome(after))
	assert.False(t, gemini.IsHome(fx+"sessions"))
	assert.True(t, all.OwnsSettings(after), "the Qwen Code settings pass leaves a Gemini CLI home's settings.json alone")

	roots := gemini.ProjectRoots(filepath.Clean(after), []string{hashJSON, labJSONL, opsJSONL})
	assert.Equal(t, []string{"/home/demo/src/lab", "/home/demo/src/ops"}, roots, "a hash directory's root from projects.json, a slug's from .project_root")
}

// TestPrepareReadsTheHomeSettings: the sessions of a copied home are planned with its own
// settings.json's server keys; --discover with no server is a usage error.
func TestPrepareReadsTheHomeSettings(t *testing.T) {
	st := all.DetectWith(context.Background(), labJSONL, nil, all.Options{}).Store
	require.NotNil(t, st)
	in := agent.PrepareInput{Env: env(nil, t.TempDir()), Stores: []store.Store{st}, Lexical: func(s string) string { return s }}
	p, err := gemini.Agent.Core().Prepare(context.Background(), in)
	require.NoError(t, err)
	require.Len(t, p.Info, 1)
	info := p.Info[0].(*gemini.Info)
	assert.Equal(t, filepath.Clean(after), info.Home)
	assert.Equal(t, 5, info.Keys)
	assert.Equal(t, []string{filepath.Join(filepath.Clean(after), "settings.json") + " (5)"}, info.Settings)
	assert.Equal(t, "0.61.0", info.Version)
	assert.True(t, info.FromPathOnly())
	assert.Contains(t, info.Text(false), "Gemini CLI naming: names of 0.61.0 for ")
	var np naming.Policy
	p.SetPolicy(&np)
	pp := naming.AgentOf[naming.PathPolicy[gemini.Policy]](np, gemini.ID)
	require.NotNil(t, pp)
	var keys []string
	for _, k := range pp.Default.Keys {
		keys = append(keys, k.Key)
	}
	assert.Equal(t, []string{"lit", "foo.bar", "foo_bar", "foo bar", "com.example.enterprise-search-platform"}, keys)
}

// sessionFile writes a one-turn .jsonl session holding the toolCalls given (JSON array text) and
// returns its path, in a tmp/<project>/chats/ layout.
func sessionFile(t *testing.T, toolCalls string) string {
	t.Helper()
	b := []byte(`{"sessionId":"s","projectHash":"p"}
{"id":"m","type":"gemini","content":"","toolCalls":` + toolCalls + `}
`)
	p := filepath.Join(t.TempDir(), "tmp", "p", "chats", "session-x.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// TestDisplayNameOfAToolNotFound: Gemini CLI stores the call's own name as its displayName when
// the tool was not in its registry at the call (0.10.0 to 0.61.0 recordToolCalls:
// "displayName: toolInstance?.displayName || toolCall.name"). Such a call is no built-in's: its
// name is attributed like a name without displayName, and a name Gemini's rule rejects that
// nothing attributes is kept and counted as rejected (it was taken for a built-in tool's, left
// unreported, before).
func TestDisplayNameOfAToolNotFound(t *testing.T) {
	p := sessionFile(t, `[{"id":"foo bar__get_data-1","name":"foo bar__get_data","displayName":"foo bar__get_data"},`+
		`{"id":"deploy.prod-2","name":"deploy.prod","displayName":"deploy.prod"},`+
		`{"id":"read_file-3","name":"read_file","displayName":"ReadFile"}]`)
	snap := scan(t, p)
	ds := decide(snap, nil)
	require.Len(t, ds, 3)
	assert.Equal(t, naming.ActKeep, ds[0].Action)
	assert.Equal(t, gemini.ClassUnattributed, ds[0].Class)
	assert.True(t, ds[0].KeepsRejected(), "Gemini's rule rejects %q", ds[0].Site.Name)
	assert.Equal(t, naming.ActNone, ds[1].Action, "nothing names deploy.prod's raw tool")
	assert.Equal(t, mcpname.ClassBuiltin, ds[2].Class, "a built-in tool's displayName")

	pol := &gemini.Policy{Tools: []mcpname.GeminiTool{{Server: "foo.bar", Tool: "deploy.prod"}}, ToolsSource: "inv.json",
		Keys: []gemini.Key{{Key: "foo bar", Source: "settings.json"}}}
	ds = decide(snap, pol)
	assert.Equal(t, naming.ActRewrite, ds[0].Action)
	assert.Equal(t, "mcp_foo_bar_get_data", ds[0].New)
	assert.Equal(t, naming.ActRewrite, ds[1].Action)
	assert.Equal(t, "mcp_foo.bar_deploy.prod", ds[1].New)
	assert.Equal(t, naming.ActNone, ds[2].Action)
}

// TestAmbiguousDisplayName: "get (my (test) MCP Server)" is tool "get" of server "my (test)" or
// tool "get (my" of server "test)". With no configured server key deciding it the call is kept
// and the note names both (the last split was taken silently, and the name rewritten, before);
// the configured key decides it.
func TestAmbiguousDisplayName(t *testing.T) {
	p := sessionFile(t, `[{"id":"get-1","name":"get","displayName":"get (my (test) MCP Server)","result":[{"functionResponse":{"id":"get-1","name":"get"}}]}]`)
	snap := scan(t, p)
	ds := decide(snap, nil)
	require.Len(t, ds, 2)
	for _, d := range ds {
		assert.Equal(t, naming.ActKeep, d.Action)
		assert.Equal(t, gemini.ClassUnattributed, d.Class)
		assert.Contains(t, d.Note, `"get (my (test) MCP Server)"`)
		assert.Contains(t, d.Note, "mcp_my__test__get (my (test)/get)")
		assert.Contains(t, d.Note, "mcp_test__get__my (test)/get (my)")
	}
	ds = decide(snap, &gemini.Policy{Keys: []gemini.Key{{Key: "my (test)", Source: "settings.json"}}})
	for _, d := range ds {
		assert.Equal(t, naming.ActRewrite, d.Action)
		assert.Equal(t, "mcp_my__test__get", d.New)
	}
}
