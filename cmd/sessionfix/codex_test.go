package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/rewrite"
)

const codexFixtures = "../../fixtures/codex-real/"

// codexRolloutRel is where the 0.50.0 session lives in a Codex home (its real file name).
const codexRolloutRel = "sessions/2026/11/30/rollout-2026-11-30T18-55-07-01a22dcf-9134-7922-bfac-658542a5f64b.jsonl"

// codexEnv is an Env over buffers, with a fake environment and home.
type codexEnv struct {
	*Env
	out, err *bytes.Buffer
}

func newCodexEnv(t testing.TB, vars map[string]string) *codexEnv {
	t.Helper()
	out, errb := &bytes.Buffer{}, &bytes.Buffer{}
	home := t.TempDir()
	return &codexEnv{Env: &Env{
		In: strings.NewReader(""), Out: out, Err: errb,
		Getenv: func(k string) string { return vars[k] },
		Home:   home,
		Now:    func() time.Time { return time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC) },
	}, out: out, err: errb}
}

func (e *codexEnv) run(t testing.TB, args ...string) int {
	t.Helper()
	e.out.Reset()
	e.err.Reset()
	return run(context.Background(), append([]string{"sessionfix"}, args...), e.Env)
}

// codexHome makes a Codex home holding the fixture config.toml (when withConfig) and the
// given rollout content at codexRolloutRel; it returns the home and the rollout path.
func codexHome(t testing.TB, rollout []byte, withConfig bool) (string, string) {
	t.Helper()
	home := t.TempDir()
	path := filepath.Join(home, codexRolloutRel)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, rollout, 0o640))
	mtime := time.Date(2026, 11, 30, 18, 55, 8, 0, time.UTC)
	require.NoError(t, os.Chtimes(path, mtime, mtime))
	if withConfig {
		cfg, err := os.ReadFile(codexFixtures + "config.toml")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"), cfg, 0o600))
	}
	return home, path
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(codexFixtures + name)
	require.NoError(t, err)
	return b
}

// lines splits a JSONL file into lines, each with its "\n".
func lines(b []byte) []string { return strings.SplitAfter(string(b), "\n") }

// providerName is the name rule of the acceptance test (^[a-zA-Z0-9_-]{1,64}$).
var providerName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// rolloutLine is what the acceptance checks read from a rollout line.
type rolloutLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type      string  `json:"type"`
		Name      string  `json:"name"`
		Namespace *string `json:"namespace"`
		CallID    string  `json:"call_id"`
	} `json:"payload"`
}

func parseLine(t testing.TB, line string) rolloutLine {
	t.Helper()
	var l rolloutLine
	require.NoError(t, json.Unmarshal([]byte(line), &l), line)
	return l
}

// maskOld and maskNew cut the rewritten tokens out of a function_call line: the old "name"
// member, and the new "name" member with the "namespace" member inserted after it.
var (
	maskOld = regexp.MustCompile(`"name":"(?:[^"\\]|\\.)*"`)
	maskNew = regexp.MustCompile(`"name":"[A-Za-z0-9_-]*","namespace":"[A-Za-z0-9_-]*"`)
)

func TestCodexFixAcceptance(t *testing.T) {
	orig := readFixture(t, "rollout-codex-0.50.0.jsonl")
	home, path := codexHome(t, orig, true)
	before, err := os.Stat(path)
	require.NoError(t, err)
	state := t.TempDir()
	e := newCodexEnv(t, map[string]string{"CODEX_HOME": home})

	// Dry run: the plan names every rewrite and its source, and writes nothing.
	require.Equal(t, exitcode.OK, e.run(t, "fix", "--agent", "codex"), e.err.String())
	plan := e.out.String()
	for _, want := range []string{
		"would rewrite 4 names in 1 file",
		"mcp__lit__literature.search_pubmed: raw identity lit/literature.search_pubmed from config.toml server key (E2 spelling); current Codex name mcp__lit + literature_search_pubmed_977c8bf14fb3",
		"mcp__foo-bar__deploy.prod: raw identity foo-bar/deploy.prod from config.toml server key",
	} {
		assert.Contains(t, plan, want)
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, orig, got, "a dry run writes nothing")

	// Apply.
	require.Equal(t, exitcode.OK, e.run(t, "fix", "--agent", "codex", "--apply", "--yes", "--state-dir", state), e.err.String())
	assert.Contains(t, e.out.String(), "rewrote 4 names in 1 file")
	fixed, err := os.ReadFile(path)
	require.NoError(t, err)
	after, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, before.Mode(), after.Mode())
	assert.True(t, before.ModTime().Equal(after.ModTime()), "mtime kept")

	// No name breaks the provider rule; every call keeps its call_id; everything but the
	// rewritten tokens is byte-identical.
	ol, nl := lines(orig), lines(fixed)
	require.Equal(t, len(ol), len(nl))
	wantNew := map[string][2]string{
		"mcp__foo-bar__deploy.prod":          {"mcp__foo_bar", "deploy_prod"},
		"mcp__lit__get+data":                 {"mcp__lit", "get_data"},
		"mcp__lit__literature.search_pubmed": {"mcp__lit", "literature_search_pubmed_977c8bf14fb3"},
		"mcp__lit__搜索文献":                     {"mcp__lit", "____"},
	}
	changed := 0
	for i := range ol {
		if ol[i] == "" {
			continue
		}
		o, n := parseLine(t, ol[i]), parseLine(t, nl[i])
		if n.Type == "response_item" && n.Payload.Type == "function_call" {
			assert.Regexp(t, providerName, n.Payload.Name, "line %d", i+1)
			if n.Payload.Namespace != nil {
				assert.Regexp(t, providerName, *n.Payload.Namespace, "line %d", i+1)
			}
			assert.Equal(t, o.Payload.CallID, n.Payload.CallID, "line %d keeps its call_id", i+1)
		}
		if ol[i] == nl[i] {
			continue
		}
		changed++
		w, ok := wantNew[o.Payload.Name]
		require.True(t, ok, "line %d: only rejected names change (%s)", i+1, o.Payload.Name)
		require.NotNil(t, n.Payload.Namespace)
		assert.Equal(t, w, [2]string{*n.Payload.Namespace, n.Payload.Name}, "line %d", i+1)
		require.Len(t, maskOld.FindAllString(ol[i], -1), 1)
		require.Len(t, maskNew.FindAllString(nl[i], -1), 1)
		assert.Equal(t, maskOld.ReplaceAllString(ol[i], "<NAME>"), maskNew.ReplaceAllString(nl[i], "<NAME>"), "line %d: every other byte is kept", i+1)
	}
	assert.Equal(t, 4, changed)

	// A second scan finds nothing left to change.
	require.Equal(t, exitcode.OK, e.run(t, "scan", "--agent", "codex"), e.err.String())
	assert.Contains(t, e.out.String(), "nothing to change")

	// Undo restores the file exactly.
	require.Equal(t, exitcode.OK, e.run(t, "undo", "--last", "--state-dir", state), e.err.String())
	restored, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, orig, restored)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, before.ModTime().Equal(st.ModTime()))
	assert.Equal(t, before.Mode(), st.Mode())
}

// withInvocationRecords inserts, after each function_call_output of the 0.50.0 rollout, an
// mcp_tool_call_end record with the call's raw identity (as later Codex builds persist them).
func withInvocationRecords(t testing.TB, orig []byte) ([]byte, []string) {
	t.Helper()
	raw := map[string][2]string{
		"call_1e6afa14f2": {"foo-bar", "deploy.prod"}, "call_284644ac43": {"foo-bar", "get_data"},
		"call_9addb93fcc": {"lit", "get+data"}, "call_44f16a192e": {"lit", "get_data_for_a_specific_location_and_date_range_extended"},
		"call_eeae2320a8": {"lit", "literature.search_pubmed"}, "call_d8b127e59b": {"lit", "literature_search_pubmed"},
		"call_aade64aec1": {"lit", "ok_tool"}, "call_13dc220cf2": {"lit", "搜索文献"},
	}
	var out strings.Builder
	var records []string
	for _, l := range lines(orig) {
		out.WriteString(l)
		if l == "" {
			continue
		}
		p := parseLine(t, l)
		if p.Payload.Type != "function_call_output" {
			continue
		}
		id, ok := raw[p.Payload.CallID]
		require.True(t, ok)
		rec := `{"timestamp":"2026-11-30T18:55:07.880Z","type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"` + p.Payload.CallID +
			`","invocation":{"server":"` + id[0] + `","tool":"` + strings.ReplaceAll(id[1], "+", `\u002b`) + `","arguments":{"query":"kinase inhibitors"}},"duration":{"secs":0,"nanos":1000},"result":{"Ok":{"content":[]}}}}` + "\n"
		out.WriteString(rec)
		records = append(records, rec)
	}
	return []byte(out.String()), records
}

func TestCodexFixInvocationRecordsKept(t *testing.T) {
	orig, records := withInvocationRecords(t, readFixture(t, "rollout-codex-0.50.0.jsonl"))
	require.Len(t, records, 8)
	home, path := codexHome(t, orig, false) // no config.toml: the records alone attribute
	state := t.TempDir()
	e := newCodexEnv(t, map[string]string{"CODEX_HOME": home})
	require.Equal(t, exitcode.OK, e.run(t, "fix", "--agent", "codex", "--format", "json"), e.err.String())
	var rep struct {
		Totals rewrite.Totals `json:"totals"`
		Stores []fixStore     `json:"stores"`
	}
	require.NoError(t, json.Unmarshal(e.out.Bytes(), &rep))
	assert.Equal(t, 4, rep.Totals.Rewrite)
	for _, s := range rep.Stores {
		for _, d := range s.Decisions {
			assert.Equal(t, "invocation record", d.Source, d.Old)
		}
	}

	require.Equal(t, exitcode.OK, e.run(t, "fix", "--agent", "codex", "--apply", "--yes", "--state-dir", state), e.err.String())
	fixed, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, rec := range records {
		assert.Equal(t, 1, strings.Count(string(fixed), rec), "raw invocation record kept byte for byte")
	}
	assert.Contains(t, string(fixed), `"name":"literature_search_pubmed_977c8bf14fb3","namespace":"mcp__lit"`)
	for _, l := range lines(fixed) {
		if l != "" {
			if p := parseLine(t, l); p.Payload.Type == "function_call" {
				assert.Regexp(t, providerName, p.Payload.Name)
			}
		}
	}
	require.Equal(t, exitcode.OK, e.run(t, "undo", "--last", "--state-dir", state), e.err.String())
	restored, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, orig, restored)
}

func TestCodexFix0169Untouched(t *testing.T) {
	orig := readFixture(t, "rollout-codex-0.169.0.jsonl")
	home, path := codexHome(t, orig, true)
	e := newCodexEnv(t, map[string]string{"CODEX_HOME": home})
	require.Equal(t, exitcode.OK, e.run(t, "fix", "--agent", "codex", "--apply", "--yes", "--state-dir", t.TempDir()), e.err.String())
	assert.Contains(t, e.out.String(), "nothing to change")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, orig, got)
}

func TestCodexDiscovery(t *testing.T) {
	orig := readFixture(t, "rollout-codex-0.50.0.jsonl")
	home, _ := codexHome(t, orig, true)
	archived := filepath.Join(home, "archived_sessions", "rollout-2026-11-29T10-00-00-01a22dcf-0000-7000-8000-000000000001.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(archived), 0o755))
	require.NoError(t, os.WriteFile(archived, orig, 0o600))
	zst := filepath.Join(home, "sessions", "2026", "11", "29", "rollout-2026-11-29T09-00-00-x.jsonl.zst")
	require.NoError(t, os.MkdirAll(filepath.Dir(zst), 0o755))
	require.NoError(t, os.WriteFile(zst, []byte{0x28, 0xb5, 0x2f, 0xfd, 0}, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(home, "history.jsonl"), []byte(`{"session_id":"s","ts":1,"text":"x"}`+"\n"), 0o600))

	tests := []struct {
		name   string
		args   []string
		code   int
		stores int
	}{
		{"--agent codex walks sessions/ and archived_sessions/", []string{"scan", "--agent", "codex", "--format", "json"}, exitcode.OK, 2},
		{"no PATH: every agent's default place, $CODEX_HOME's too (issue 23 item 4)", []string{"scan", "--format", "json"}, exitcode.OK, 2},
		{"--agent qwen does not look there", []string{"scan", "--agent", "qwen", "--format", "json"}, exitcode.Error, 0},
		{"a Codex home given as a path, by content", []string{"scan", "--format", "json", home}, exitcode.OK, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newCodexEnv(t, map[string]string{"CODEX_HOME": home})
			require.Equal(t, tt.code, e.run(t, tt.args...), e.err.String())
			if tt.code == exitcode.Error {
				// --agent qwen, no ~/.qwen: an error naming what was tried, no report (--format
				// json: only the closed document with the error, jsonError).
				assert.Contains(t, e.err.String(), "no Qwen Code runtime directory found: tried $QWEN_RUNTIME_DIR (not set), $QWEN_HOME (not set), ~/.qwen")
				var doc map[string]any
				require.NoError(t, json.Unmarshal(e.out.Bytes(), &doc), e.out.String())
				assert.Len(t, doc, 1, "no report, only the error")
				assert.Contains(t, doc["error"], "no Qwen Code runtime directory found")
				return
			}
			var rep scanReport
			require.NoError(t, json.Unmarshal(e.out.Bytes(), &rep))
			assert.Len(t, rep.Stores, tt.stores)
			for _, s := range rep.Stores {
				assert.Equal(t, "codex-rollout", s.Kind)
			}
			if tt.stores > 0 {
				var zstReported bool
				for _, p := range rep.Problems {
					if p.Path == zst {
						zstReported = true
						assert.Equal(t, "warning", p.Severity)
						assert.Contains(t, p.Reason, "zstd-compressed Codex rollout")
					}
				}
				assert.True(t, zstReported)
			}
		})
	}

	e := newCodexEnv(t, nil)
	assert.Equal(t, exitcode.Usage, e.run(t, "scan", "--agent", "frob"))
	assert.Contains(t, e.err.String(), "--agent must be one of "+selectable())
}

func TestCodexConfigFlag(t *testing.T) {
	orig := readFixture(t, "rollout-codex-0.50.0.jsonl")
	home, path := codexHome(t, orig, false)
	e := newCodexEnv(t, map[string]string{"CODEX_HOME": home})

	// Without config or inventory nothing can be attributed: the names are kept, reported.
	require.Equal(t, exitcode.OK, e.run(t, "fix", path), e.err.String())
	assert.Contains(t, e.out.String(), "nothing to change")
	assert.Contains(t, e.out.String(), "codex-unattributed")

	require.Equal(t, exitcode.OK, e.run(t, "fix", "--codex-config", codexFixtures+"config.toml", path), e.err.String())
	assert.Contains(t, e.out.String(), "would rewrite 4 names")

	inv := filepath.Join(t.TempDir(), "inventory.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers":{"lit":{"tools":["literature.search_pubmed","literature_search_pubmed","get+data",
		"get_data_for_a_specific_location_and_date_range_extended","搜索文献","ok_tool"]},"foo-bar":{"tools":["get_data","deploy.prod"]}}}`), 0o600))
	require.Equal(t, exitcode.OK, e.run(t, "fix", "--inventory", inv, path), e.err.String())
	assert.Contains(t, e.out.String(), "from inventory (E2 name); current Codex name mcp__lit + literature_search_pubmed_977c8bf14fb3 (E6, over the 8 registered tools of "+inv+")")

	assert.Equal(t, exitcode.Error, e.run(t, "fix", "--codex-config", filepath.Join(home, "missing.toml"), path))
	assert.Contains(t, e.err.String(), "missing.toml")

	bad := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(bad, []byte("[mcp_servers.lit]\nenv = { KEY = \"sk-secret\" \n"), 0o600))
	assert.Equal(t, exitcode.Error, e.run(t, "fix", "--codex-config", bad, path))
	assert.Contains(t, e.err.String(), "invalid Codex config.toml")
	assert.NotContains(t, e.err.String(), "sk-secret")
}

// fakeServerTOML is a [mcp_servers.<key>] table that starts this test binary as a server
// listing tools.
func fakeServerTOML(t testing.TB, key string, tools ...string) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	list, err := json.Marshal(tools)
	require.NoError(t, err)
	return fmt.Sprintf("[mcp_servers.%s]\ncommand = %q\nenv = { %s = \"serve\", %s = %q }\n", key, exe, fakeMCPEnv, fakeToolsEnv, list)
}

func TestCodexDiscover(t *testing.T) {
	orig := readFixture(t, "rollout-codex-0.50.0.jsonl")
	home, path := codexHome(t, orig, false)
	// lit lists one more tool than the session used, colliding with get+data: with the full
	// inventory get+data gets a suffix, as Codex gives it; "broken" cannot start.
	cfg := fakeServerTOML(t, "lit", "literature.search_pubmed", "literature_search_pubmed", "get+data", "get_data",
		"get_data_for_a_specific_location_and_date_range_extended", "搜索文献", "ok_tool") +
		fakeServerTOML(t, "foo-bar", "get_data", "deploy.prod") +
		"[mcp_servers.broken]\ncommand = \"/nonexistent/server\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600))
	e := newCodexEnv(t, map[string]string{"CODEX_HOME": home})
	e.Environ = os.Environ

	require.Equal(t, exitcode.Partial, e.run(t, "fix", "--discover", "--format", "json", path), "a server failed: partial, as in audit: "+e.err.String())
	var rep struct {
		Stores   []fixStore   `json:"stores"`
		Problems []problemRow `json:"problems"`
	}
	require.NoError(t, json.Unmarshal(e.out.Bytes(), &rep))
	require.Len(t, rep.Stores, 1)
	got := map[string]string{}
	for _, d := range rep.Stores[0].Decisions {
		if d.Site == "call/name" {
			got[d.Old.String()] = d.New
			assert.Equal(t, "inventory (E2 name)", d.Source, d.Old)
			assert.Contains(t, d.Note, "over the 9 registered tools of the servers of "+filepath.Join(home, "config.toml"))
		}
	}
	getData := mcpname.CodexAllocate([]mcpname.CodexTool{{Server: "lit", Tool: "get+data"}, {Server: "lit", Tool: "get_data"}}, mcpname.CodexE6Params())
	assert.Equal(t, map[string]string{
		"mcp__foo-bar__deploy.prod":          "deploy_prod",
		"mcp__lit__get+data":                 getData[mcpname.CodexTool{Server: "lit", Tool: "get+data"}].Name,
		"mcp__lit__literature.search_pubmed": "literature_search_pubmed_977c8bf14fb3",
		"mcp__lit__搜索文献":                     "____",
	}, got)
	assert.Regexp(t, `^get_data_[0-9a-f]{12}$`, got["mcp__lit__get+data"])
	require.Len(t, rep.Problems, 1)
	assert.Contains(t, rep.Problems[0].Reason, `discover MCP server "broken"`)
	assert.Equal(t, "error", rep.Problems[0].Severity)

	// Without a config there is nothing to discover.
	require.NoError(t, os.Remove(filepath.Join(home, "config.toml")))
	assert.Equal(t, exitcode.Usage, e.run(t, "fix", "--discover", path))
	assert.Contains(t, e.err.String(), "--discover needs a Codex config.toml")
}

// TestCodexStateDatabasesAreReadForConsistency: with --agent codex the Codex home's
// state_5.sqlite is scanned too; its threads are checked against the rollout files and
// reported, never rewritten.
func TestCodexStateDatabasesAreReadForConsistency(t *testing.T) {
	home, _ := codexHome(t, readFixture(t, "rollout-codex-0.169.0.jsonl"), true)
	sqlText, err := os.Open(codexFixtures + "state_5.sql")
	require.NoError(t, err)
	defer sqlText.Close()
	db := filepath.Join(home, "state_5.sqlite")
	require.NoError(t, sqlitetest.BuildFromSQL(context.Background(), db, true, sqlText))
	before, err := sqlitetest.DumpSHA256(context.Background(), db)
	require.NoError(t, err)

	e := newCodexEnv(t, map[string]string{"CODEX_HOME": home})
	code := e.run(t, "scan", "--agent", "codex", "--format", "json")
	require.Equal(t, exitcode.OK, code, e.err.String())
	var rep scanReport
	require.NoError(t, json.Unmarshal(e.out.Bytes(), &rep))
	var dbRow *storeRow
	for i := range rep.Stores {
		if rep.Stores[i].Path == db {
			dbRow = &rep.Stores[i]
		}
	}
	require.NotNil(t, dbRow, "the state database is scanned: %+v", rep.Stores)
	var threadNotes int
	for _, p := range rep.Problems {
		if p.Path == db && strings.Contains(p.Reason, "rollout") {
			threadNotes++
		}
	}
	assert.Positive(t, threadNotes, "the thread's rollout path (recorded under /home/demo) is reported: %+v", rep.Problems)

	require.Equal(t, exitcode.OK, e.run(t, "fix", "--agent", "codex", "--apply", "--yes", "--state-dir", t.TempDir()), e.err.String())
	after, err := sqlitetest.DumpSHA256(context.Background(), db)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the state database is never changed")
}
