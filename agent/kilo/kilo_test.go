package kilo_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/agent/kilo"
	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

const (
	fx       = "../../fixtures/kilo-real/"
	dump777  = fx + "kilo-7.7.7-after-import-and-resume.sql"
	dump7033 = fx + "kilo-7.0.33.sql"
	opencode = "../../fixtures/opencode-real/opencode.sql"
	longName = "lit_query_documents_by_semantic_similarity_with_metadata_filters_and_reranking"
)

// build makes a WAL database dir/name from SQL files (or "sql:…" text).
func build(t *testing.T, dir, name string, scripts ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	var rs []io.Reader
	for _, s := range scripts {
		if text, ok := strings.CutPrefix(s, "sql:"); ok {
			rs = append(rs, strings.NewReader(text))
			continue
		}
		b, err := os.ReadFile(s)
		require.NoError(t, err)
		rs = append(rs, bytes.NewReader(b))
	}
	require.NoError(t, sqlitetest.BuildFromSQL(context.Background(), p, true, rs...))
	return p
}

// detect opens path as discovery does.
func detect(t *testing.T, path string) store.Store {
	t.Helper()
	head, err := all.ReadHead(path)
	require.NoError(t, err)
	d := all.DetectWith(context.Background(), path, head, all.Options{})
	require.NotNil(t, d.Store, "%+v", d)
	return d.Store
}

func scan(t *testing.T, st store.Store) *store.Snapshot {
	t.Helper()
	snap, err := st.Scan(context.Background(), store.ScanOptions{Hash: true})
	require.NoError(t, err)
	return snap
}

// TestDetection: Kilo's own table makes a database Kilo's whatever its name; without it (7.0's
// schema is opencode's) only the name kilo.db / kilo-*.db does; opencode's database stays
// opencode's.
func TestDetection(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, dump, want string }{
		{"renamed.db", dump777, "kilo"},
		{"kilo.db", dump777, "kilo"},
		{"kilo.db", dump7033, "kilo-file"},
		{"kilo-dev.db", dump7033, "kilo-file"},
		{"other.db", dump7033, "opencode"},
		{"opencode.db", opencode, "opencode"},
	} {
		p := build(t, filepath.Join(dir, c.name+c.want), c.name, c.dump)
		st := detect(t, p)
		assert.Equal(t, c.want, st.(store.Profiled).ProfileName(), "%s from %s", c.name, c.dump)
	}
	// --agent kilo leaves opencode's database out, saying whose it is.
	p := filepath.Join(dir, "opencode.dbopencode", "opencode.db")
	head, err := all.ReadHead(p)
	require.NoError(t, err)
	d := all.DetectWith(context.Background(), p, head, all.Options{Agent: kilo.ID})
	assert.Nil(t, d.Store)
	assert.Contains(t, d.Warning, "SQLite store of opencode (profile opencode), not of kilo")
}

// TestOldSchemaIsRefused: the 7.0.33 database (and the same after 7.7.7 touched it: an empty
// migration table) is read, not rewritable, with the reason; 7.7.7's database is writable.
func TestOldSchemaIsRefused(t *testing.T) {
	dir := t.TempDir()
	snap := scan(t, detect(t, build(t, filepath.Join(dir, "new"), "kilo.db", dump777)))
	assert.Empty(t, snap.NotWritable)
	for _, extra := range []string{"sql:SELECT 1;", `sql:CREATE TABLE IF NOT EXISTS "migration" (id TEXT PRIMARY KEY, time_completed INTEGER NOT NULL);`} {
		p := build(t, filepath.Join(dir, "old"+string(rune('a'+len(extra)%20))), "kilo.db", dump7033, extra)
		st := detect(t, p)
		snap := scan(t, st)
		require.NotEmpty(t, snap.NotWritable)
		assert.Contains(t, snap.NotWritable, "a Kilo database of the 7.0 schema written by Kilo 7.0.33 (drizzle's __drizzle_migrations and no applied migration table; no event table): Kilo 7.7 cannot open it in place")
		assert.Contains(t, snap.NotWritable, "kilo export")
		// A plan keeps what it would have rewritten, saying why; Apply refuses, nothing written.
		pol := policy(kilo.Policy{Tools: []agent.Tool{{Server: "lit", Tool: "search"}}, Source: "inventory x"})
		sp := rewrite.PlanStore(st, snap, pol)
		var kept []naming.Decision
		for _, d := range sp.Decisions {
			if d.Site.Name == longName {
				kept = append(kept, d)
			}
		}
		require.Len(t, kept, 1)
		assert.Equal(t, naming.ActKeep, kept[0].Action)
		assert.Contains(t, kept[0].Note, "not rewritten: a Kilo database of the 7.0 schema")
		before, err := sqlitetest.DumpSHA256(context.Background(), p)
		require.NoError(t, err)
		_, err = st.(store.Writer).Apply(context.Background(), snap, []store.Edit{{Site: *kept[0].Site, New: "x"}}, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "b")})
		require.ErrorIs(t, err, store.ErrNotWritable)
		after, err := sqlitetest.DumpSHA256(context.Background(), p)
		require.NoError(t, err)
		assert.Equal(t, before, after)
	}
}

func policy(kp kilo.Policy) naming.Policy {
	var pol naming.Policy
	naming.SetAgent(&pol, kilo.ID, &naming.PathPolicy[kilo.Policy]{Default: kp})
	return pol
}

// fixtureTools are the raw tools of kilo.json, in config order.
var fixtureTools = []agent.Tool{
	{Server: "lit", Tool: "literature.search_pubmed"}, {Server: "lit", Tool: "literature_search_pubmed"}, {Server: "lit", Tool: "get+data"},
	{Server: "lit", Tool: "get_data_for_a_specific_location_and_date_range_extended"},
	{Server: "lit", Tool: "query_documents_by_semantic_similarity_with_metadata_filters_and_reranking"},
	{Server: "lit", Tool: "搜索文献"}, {Server: "lit", Tool: "search"},
	{Server: "foo.bar", Tool: "get_data"}, {Server: "foo.bar", Tool: "deploy.prod"},
	{Server: "foo_bar", Tool: "get_data"}, {Server: "foo_bar", Tool: "deploy.prod"},
}

// TestNamerOnTheRecording: the 7.7.7 database holds the names Kilo registers: nothing is
// rewritten; the 78-unit name is kept while the tool is configured (or unknown), and rewritten
// to a provider-safe name once an inventory shows the tool gone. A dotted name of an older
// spelling is rewritten to Kilo's sanitize, unless two raw tools now share that name.
func TestNamerOnTheRecording(t *testing.T) {
	p := build(t, t.TempDir(), "kilo.db", dump777, `sql:INSERT INTO part VALUES('prt_zz1','msg_x','ses_db7734128ffegU6E4YstmpVbVL',1,1,'{"type":"tool","callID":"c1","tool":"lit_get+data","state":{"status":"completed"}}');
INSERT INTO part VALUES('prt_zz2','msg_x','ses_db7734128ffegU6E4YstmpVbVL',1,1,'{"type":"tool","callID":"c2","tool":"lit_literature.search_pubmed","state":{"status":"completed"}}');`)
	st := detect(t, p)
	snap := scan(t, st)
	decide := func(kp *kilo.Policy) map[string]naming.Decision {
		var pol naming.Policy
		if kp != nil {
			pol = policy(*kp)
		}
		out := map[string]naming.Decision{}
		for _, d := range rewrite.PlanStore(st, snap, pol).Decisions {
			out[d.Site.Name] = d
		}
		return out
	}
	ds := decide(nil)
	assert.Equal(t, kilo.ClassKiloOverLong, ds[longName].Class)
	assert.Equal(t, naming.ActKeep, ds[longName].Action)
	assert.Equal(t, naming.ActNone, ds["lit_____"].Action)
	assert.Equal(t, naming.ActNone, ds["foo_bar_get_data"].Action)
	assert.Equal(t, "lit_get_data", ds["lit_get+data"].New)
	assert.Equal(t, kilo.ClassKiloRenamed, ds["lit_get+data"].Class)
	assert.Equal(t, "lit_literature_search_pubmed", ds["lit_literature.search_pubmed"].New, "no inventory: Kilo's sanitize")

	// Every tool still configured: the long name is kept; the dotted pubmed call now names
	// two raw tools: kept.
	ds = decide(&kilo.Policy{Tools: fixtureTools, Source: "inventory all.json"})
	assert.Equal(t, naming.ActKeep, ds[longName].Action)
	assert.Equal(t, kilo.ClassKiloShared, ds["lit_literature.search_pubmed"].Class)
	assert.Equal(t, "Kilo now registers lit_literature_search_pubmed for lit/literature.search_pubmed and lit/literature_search_pubmed; the last answers", ds["lit_literature.search_pubmed"].Note)
	assert.Equal(t, "lit_get_data", ds["lit_get+data"].New)

	// The 74-character tool removed at its server: its stored name is rewritten.
	var without []agent.Tool
	for _, tl := range fixtureTools {
		if !strings.HasPrefix(tl.Tool, "query_") {
			without = append(without, tl)
		}
	}
	ds = decide(&kilo.Policy{Tools: without, Source: "inventory gone.json"})
	assert.Equal(t, kilo.ClassKiloGone, ds[longName].Class)
	assert.Equal(t, "lit_query_documents_by_semantic_similarity_with_metadat_1xo9j1e", ds[longName].New)
	assert.Equal(t, "normalize: no configured tool has this name (inventory gone.json)", ds[longName].Source)
}

// TestFindingsOfTheRecordedConfig: kilo.json with the recorded tools: the servers that sanitize
// alike, the 78-unit name, the three merged names, the deny reaching both servers.
func TestFindingsOfTheRecordedConfig(t *testing.T) {
	cfg, probs := kilo.ReadConfigs([]string{fx + "kilo.json", fx + "missing.json"})
	require.Empty(t, probs)
	assert.Equal(t, []string{"lit", "foo.bar", "foo_bar"}, cfg.Keys())
	for _, s := range cfg.Servers {
		assert.True(t, s.Enabled)
		assert.Equal(t, "python3", s.Command)
		assert.Equal(t, agent.TransportStdio, s.Transport)
	}
	var reasons []string
	for _, p := range kilo.Findings(cfg, fixtureTools) {
		assert.Equal(t, store.SevWarning, p.Severity)
		assert.Equal(t, fx+"kilo.json", p.Path)
		reasons = append(reasons, p.Reason)
	}
	assert.Equal(t, []string{
		"Kilo MCP servers foo.bar and foo_bar both name their tools foo_bar_<tool>: a tool both list is offered once (the later server's answers) and a rule written for one covers the other",
		"Kilo offers lit/query_documents_by_semantic_similarity_with_metadata_filters_and_reranking as " + longName + " (78 UTF-16 units): providers with a 64 limit reject every request while it is offered, and any stored call of it; fix cannot help the live tool list: shorten the tool's name at its server or disable the tool",
		"Kilo names lit/literature.search_pubmed and lit/literature_search_pubmed both lit_literature_search_pubmed: one tool is offered and lit/literature_search_pubmed (registered later) answers; lit/literature.search_pubmed cannot be called",
		"Kilo names foo.bar/get_data and foo_bar/get_data both foo_bar_get_data: one tool is offered and foo_bar/get_data (registered later) answers; foo.bar/get_data cannot be called",
		"Kilo names foo.bar/deploy.prod and foo_bar/deploy.prod both foo_bar_deploy_prod: one tool is offered and foo_bar/deploy.prod (registered later) answers; foo.bar/deploy.prod cannot be called",
		`Kilo permission rule "foo_bar_deploy_prod": "deny" reaches foo.bar/deploy.prod, foo_bar/deploy.prod (servers foo.bar, foo_bar) through the name foo_bar_deploy_prod`,
	}, reasons)
	// No secret of the config reaches a finding.
	for _, r := range reasons {
		assert.NotContains(t, r, "fake_mcp.py")
	}
}

// TestReadConfigsMergesAndReports: a later file replaces a server in its place and a rule
// key's value; a broken file is a warning naming it, without its text; JSONC comments are fine.
func TestReadConfigsMergesAndReports(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "opencode.json")
	b := filepath.Join(dir, "kilo.jsonc")
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(a, []byte(`{"mcp": {"x": {"type": "local", "command": ["a"]}, "y": {"type": "remote", "url": "https://h/mcp", "headers": {"Authorization": "Bearer SECRET"}}},
 "permission": {"*": "ask", "x_t": "deny"}}`), 0o644))
	require.NoError(t, os.WriteFile(b, []byte(`// comment
{"mcp": {"x": {"type": "local", "command": ["b", "--token", "SECRET"], "enabled": false}},
 "permission": {"x_t": "allow", "y_*": {"*": "deny"}}}`), 0o644))
	require.NoError(t, os.WriteFile(bad, []byte(`{"mcp": {"x": "SECRET",}}`), 0o644))
	cfg, probs := kilo.ReadConfigs([]string{a, b, bad})
	require.Len(t, probs, 1)
	assert.Equal(t, bad, probs[0].Path)
	assert.Contains(t, probs[0].Reason, "trailing comma")
	assert.NotContains(t, probs[0].Reason, "SECRET")
	assert.Equal(t, []string{a, b}, cfg.Files)
	assert.Equal(t, []string{"x", "y"}, cfg.Keys())
	assert.False(t, cfg.Servers[0].Enabled)
	assert.Equal(t, "b", cfg.Servers[0].Command)
	assert.Equal(t, agent.TransportHTTP, cfg.Servers[1].Transport)
	assert.Equal(t, b, cfg.RuleFile["x_t"])
	require.Len(t, cfg.Rules, 3)
	assert.Equal(t, "x_t", cfg.Rules[1].Permission)
	assert.EqualValues(t, "allow", cfg.Rules[1].Action)
}

// TestPrepare: Prepare finds the Kilo database among the stores, reads the global config of
// the environment ($XDG_CONFIG_HOME/kilo) and --kilo-config, takes the inventory's tools, and
// sets the policy; a --kilo-config that does not exist is an error.
func TestPrepare(t *testing.T) {
	home := t.TempDir()
	cfgDir := filepath.Join(home, "cfg", "kilo")
	require.NoError(t, os.MkdirAll(cfgDir, 0o755))
	b, err := os.ReadFile(fx + "kilo.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(cfgDir, "kilo.json"), b, 0o644))
	p := build(t, filepath.Join(home, "data", "kilo"), "kilo.db", dump777)
	st := detect(t, p)
	env := agent.Env{Home: home, Getenv: func(k string) string {
		return map[string]string{"XDG_CONFIG_HOME": filepath.Join(home, "cfg"), "XDG_DATA_HOME": filepath.Join(home, "data")}[k]
	}}
	assert.Equal(t, []string{p}, kilo.Roots(env))
	in := agent.PrepareInput{Env: env, Stores: []store.Store{st}, InventoryFile: "inv.json", InventoryTools: fixtureTools[:2], Options: agent.Values{}}
	res, err := kilo.Prepare(context.Background(), in)
	require.NoError(t, err)
	require.Len(t, res.Info, 1)
	assert.Equal(t, "Kilo naming: config "+filepath.Join(cfgDir, "kilo.json")+"; 3 MCP servers; 2 tools from inventory inv.json", res.Info[0].Text(false))
	var pol naming.Policy
	res.SetPolicy(&pol)
	assert.Equal(t, fixtureTools[:2], naming.AgentOf[naming.PathPolicy[kilo.Policy]](pol, kilo.ID).For(p).Tools)

	in.Options = agent.Values{kilo.ConfigOption: {filepath.Join(home, "nope.json")}}
	_, err = kilo.Prepare(context.Background(), in)
	require.ErrorContains(t, err, "--kilo-config "+filepath.Join(home, "nope.json")+": no such file")

	// No Kilo database: nothing to prepare.
	res, err = kilo.Prepare(context.Background(), agent.PrepareInput{Env: env})
	require.NoError(t, err)
	assert.Empty(t, res.Info)
}
