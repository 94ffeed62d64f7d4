package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/agent/codex"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/storetest"
)

// TestScanRealOpencode: the real opencode 1.18.33 database names its 7 MCP tool calls in part
// and again in 21 message.part.updated events, all provider-safe (opencode 1.18 sanitizes), and
// its sessions' permission rules are reported read-only.
func TestScanRealOpencode(t *testing.T) {
	p := buildDB(t, "opencode.db", opencodeReal)
	st := detect(t, p)
	require.Equal(t, "opencode", st.Profile().Name)
	snap := scanStore(t, st)
	assert.Equal(t, store.AgentID("opencode"), snap.Agent)
	assert.Equal(t, store.KindSQLite, snap.Ref.Kind)
	assert.Empty(t, snap.Problems)
	// 17 parts, 33 part events (the only ones read) and 2 sessions.
	assert.Equal(t, int64(17+33+2), snap.Records)

	perTable := map[string]map[string]int{}
	for _, s := range snap.Sites {
		tbl, _, _ := strings.Cut(s.Loc.Row, " ")
		if perTable[tbl] == nil {
			perTable[tbl] = map[string]int{}
		}
		perTable[tbl][s.Name]++
	}
	tools := []string{"foo_bar_deploy_prod", "foo_bar_get_data", "lit_____", "lit_get_data",
		"lit_get_data_for_a_specific_location_and_date_range_extended", "lit_literature_search_pubmed", "lit_ok_tool"}
	wantParts, wantEvents := map[string]int{}, map[string]int{}
	for _, n := range tools {
		wantParts[n], wantEvents[n] = 1, 3 // pending, running, completed
	}
	assert.Equal(t, wantParts, perTable["part"])
	assert.Equal(t, wantEvents, perTable["event"])
	assert.Equal(t, map[string]int{"question": 2, "plan_enter": 2, "plan_exit": 2}, perTable["session"])
	for _, s := range snap.Sites {
		assert.Equal(t, s.Kind == store.SiteRule, s.ReadOnly, "%s: only rules are read-only", s.Loc.Row)
	}
	assert.Empty(t, storetest.Edits(snap, storetest.ProviderSafe), "opencode 1.18 names are all provider-safe")
}

// TestSitesPointAtTheirTokens: every site's Raw is the exact bytes at Loc.Offset of the row's
// JSON value, and decodes to Name (escaped and pretty-printed values included).
func TestSitesPointAtTheirTokens(t *testing.T) {
	tests := []struct {
		name, db string
		build    func(testing.TB) string
	}{
		{"opencode", "opencode.db", opencodeDB},
		{"crush", "crush.db", func(tb testing.TB) string { return buildDB(tb, "crush.db", crushSQL) }},
		{"goose", "sessions.db", func(tb testing.TB) string { return buildDB(tb, "sessions.db", gooseSQL) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.build(t)
			st := detect(t, p)
			snap := scanStore(t, st)
			require.NotEmpty(t, snap.Sites)
			for _, s := range snap.Sites {
				column, _, _ := strings.Cut(s.Path, ":")
				tbl, key, _ := strings.Cut(s.Loc.Row, " ")
				kc, kv, _ := strings.Cut(key, "=")
				if strings.Contains(kv, " ") {
					kc, kv, _ = strings.Cut(strings.Fields(key)[len(strings.Fields(key))-1], "=")
				}
				val := queryString(t, p, "SELECT CAST("+column+" AS TEXT) FROM "+tbl+" WHERE "+kc+" = ?", kv)
				require.LessOrEqual(t, int(s.Loc.Offset)+len(s.Raw), len(val), s.Loc.Row)
				assert.Equal(t, string(s.Raw), val[s.Loc.Offset:int(s.Loc.Offset)+len(s.Raw)], "%s %s", s.Loc.Row, s.Path)
				v, err := jsonscan.Unquote(s.Raw)
				require.NoError(t, err)
				assert.Equal(t, s.Name, v.Str)
			}
		})
	}
}

// TestScanLegacyOpencode: the legacy rows give exactly the sites their conditions select, the
// non-ASCII name is the same whether written raw or escaped, and compressed or torn payloads are
// reported, not parsed.
func TestScanLegacyOpencode(t *testing.T) {
	snap := scanStore(t, detect(t, opencodeDB(t)))
	var legacy []siteRow
	for _, r := range rowsOf(snap) {
		if strings.Contains(r.Row, "legacy") {
			legacy = append(legacy, r)
		}
	}
	call := store.SiteCall
	want := []siteRow{
		{"part id=prt_legacy00000000000000000001", "data:tool", "lit_literature.search_pubmed", call, false},
		{"part id=prt_legacy00000000000000000002", "data:tool", "foo.bar_deploy.prod", call, false},
		{"part id=prt_legacy00000000000000000003", "data:tool", "lit_get_data_for_a_specific_location_and_date_range_extended_with_history", call, false},
		{"part id=prt_legacy00000000000000000004", "data:tool", "lit_搜索文献", call, false},
		{"part id=prt_legacy00000000000000000005", "data:tool", "lit_literature.search_pubmed", call, false},
		{"part id=prt_legacy00000000000000000006", "data:tool", "lit_ok_tool", call, false},
		{"part id=prt_legacy00000000000000000007", "data:tool", "bash", call, false},
		{"event id=evt_legacy00000000000000000001", "data:part.tool", "lit_literature.search_pubmed", call, false},
		{"event id=evt_legacy00000000000000000002", "data:part.tool", "lit_literature.search_pubmed", call, false},
		{"event id=evt_legacy00000000000000000003", "data:part.tool", "foo.bar_deploy.prod", call, false},
		{"event id=evt_legacy00000000000000000004", "data:part.tool", "lit_get_data_for_a_specific_location_and_date_range_extended_with_history", call, false},
		{"event id=evt_legacy00000000000000000005", "data:part.tool", "lit_搜索文献", call, false},
		{"event id=evt_legacy00000000000000000006", "data:part.tool", "lit_literature.search_pubmed", call, false},
		{"event id=evt_legacy00000000000000000008", "data:part.tool", "lit_ok_tool", call, false},
		{"session id=ses_legacy00000000000000000001", "permission:[0].permission", "lit_literature.search_pubmed", store.SiteRule, true},
		{"session id=ses_legacy00000000000000000001", "permission:[1].permission", "bash", store.SiteRule, true},
	}
	assert.Equal(t, want, legacy)
	for _, s := range snap.Sites {
		assert.NotContains(t, s.Name, "not.a", "a condition keeps %s out", s.Loc.Row)
		if s.Loc.Row == "event id=evt_legacy00000000000000000005" {
			assert.Equal(t, `"lit_\u641c\u7d22\u6587\u732e"`, string(s.Raw), "the escaped spelling is kept as the token")
		}
		if s.Loc.Row == "part id=prt_legacy00000000000000000001" {
			assert.Equal(t, "ses_legacy00000000000000000001/call_legacy01", s.CallID, "call ids are scoped by session")
		}
	}
	assert.Equal(t, []string{
		"warning: part.data is zstd-compressed (39 bytes): reported, not parsed",
		"warning: invalid JSON in part.data (unexpected end of input, offset 88); row left as it is",
	}, reasons(snap))
	assert.Equal(t, "part id=prt_legacy00000000000000000009", snap.Problems[0].Loc.Row)
}

// TestScanCrushAndGoose: the name sites of the crush and goose schemas (stores.md §3.1), with
// call/response kinds and scoped call ids.
func TestScanCrushAndGoose(t *testing.T) {
	tests := []struct {
		name, sql, profile string
		want               []siteRow
		callIDs            map[string]string // row|path → call id
	}{
		{"crush", crushSQL, "crush", []siteRow{
			{"messages id=m-0002", "parts:[1].data.name", "mcp_lit_literature.search_pubmed", store.SiteCall, false},
			{"messages id=m-0002", "parts:[2].data.name", "mcp_lit_get+data", store.SiteCall, false},
			{"messages id=m-0003", "parts:[0].data.name", "mcp_lit_literature.search_pubmed", store.SiteResponse, false},
			{"messages id=m-0003", "parts:[1].data.name", "mcp_lit_get+data", store.SiteResponse, false},
			{"messages id=m-0004", "parts:[0].data.name", "view", store.SiteCall, false},
			{"messages id=m-0004", "parts:[1].data.name", "mcp_lit_ok_tool", store.SiteCall, false},
			{"messages id=m-0005", "parts:[0].data.name", "view", store.SiteResponse, false},
			{"messages id=m-0005", "parts:[1].data.name", "mcp_lit_ok_tool", store.SiteResponse, false},
			{"messages id=m-0006", "parts:[1].data.name", "mcp_foo.bar_deploy.prod", store.SiteCall, false},
			{"messages id=m-0007", "parts:[0].data.name", "mcp_foo.bar_deploy.prod", store.SiteResponse, false},
		}, map[string]string{
			"messages id=m-0006|parts:[1].data.name": "2b1c7d9e-5a3f-4e2d-8c6b-0a9f8e7d6c54/call_01",
			"messages id=m-0007|parts:[0].data.name": "2b1c7d9e-5a3f-4e2d-8c6b-0a9f8e7d6c54/call_01",
			"messages id=m-0003|parts:[0].data.name": "8d7e5a2c-0b1f-4c1e-9e57-4f6c1f0a9b11/call_01",
		}},
		{"goose", gooseSQL, "goose", []siteRow{
			{"messages id=2", "content_json:[1].toolCall.value.name", "lit__literature.search_pubmed", store.SiteCall, false},
			{"messages id=4", "content_json:[0].toolName", "foo.bar__deploy.prod", store.SiteColumn, false},
			{"messages id=5", "content_json:[0].data.toolName", "foo.bar__deploy.prod", store.SiteColumn, false},
			{"messages id=6", "content_json:[0].toolCall.value.name", "developer__shell", store.SiteCall, false},
			{"messages id=6", "content_json:[1].toolCall.value.name", `cd /home/demo/src/lab && grep -rn "kinase" . | head -n 20`, store.SiteCall, false},
			{"thread_messages id=1", "content_json:[0].toolCall.value.name", "lit__literature.search_pubmed", store.SiteCall, false},
			{"thread_messages id=2", "content_json:[0].toolCall.value.name", "ui__show.chart", store.SiteCall, false},
		}, map[string]string{
			"messages id=2|content_json:[1].toolCall.value.name":        "20250901_1/call_01",
			"thread_messages id=1|content_json:[0].toolCall.value.name": "call_01",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := detect(t, buildDB(t, tt.name+".db", tt.sql))
			require.Equal(t, tt.profile, st.Profile().Name)
			snap := scanStore(t, st)
			assert.Equal(t, store.AgentID(tt.profile), snap.Agent)
			assert.Equal(t, tt.want, rowsOf(snap))
			for _, s := range snap.Sites {
				if id, ok := tt.callIDs[s.Loc.Row+"|"+s.Path]; ok {
					assert.Equal(t, id, s.CallID, "%s %s", s.Loc.Row, s.Path)
				}
			}
			assert.Empty(t, snap.Problems)
		})
	}
}

// TestCodexHistoryIdentities: the Codex thread history's mcpToolCall items are raw identities,
// reported (a ready inventory, each located at its tool token) and never planned.
func TestCodexHistoryIdentities(t *testing.T) {
	p := buildDB(t, "thread_history_1.sqlite", codexHistory)
	st := detect(t, p)
	require.Equal(t, "codex", st.Profile().Name)
	snap := scanStore(t, st)
	assert.Equal(t, store.AgentID("codex"), snap.Agent)
	var got []string
	for _, id := range snap.Identities {
		got = append(got, id.Server+"/"+id.Tool)
	}
	sort.Strings(got)
	assert.Equal(t, []string{"foo-bar/deploy.prod", "foo-bar/get_data", "lit/get+data",
		"lit/get_data_for_a_specific_location_and_date_range_extended", "lit/literature.search_pubmed",
		"lit/literature_search_pubmed", "lit/ok_tool", "lit/搜索文献"}, got)
	assert.Empty(t, snap.Sites, "raw identities are no name sites: nothing is ever planned for them")
	for _, id := range snap.Identities {
		assert.Contains(t, id.Loc.Row, "thread_items thread_id=01a22dcf-f4ff-7ad3-8cd2-1ea80c2bfa34 turn_id=")
		item := id.Loc.Row[strings.LastIndex(id.Loc.Row, "item_id=")+len("item_id="):]
		assert.Equal(t, "01a22dcf-f4ff-7ad3-8cd2-1ea80c2bfa34/"+item, id.CallID)
		val := queryString(t, p, "SELECT item_json FROM thread_items WHERE item_id = ?", item)
		assert.True(t, strings.HasPrefix(val[id.Loc.Offset:], `"`+id.Tool+`"`), "%s: the offset points at the tool token", id.Loc.Row)
	}
}

// TestCodexStateThreads: each thread's rollout path is checked (exists, here or under the
// directory of the database; named for the thread).
func TestCodexStateThreads(t *testing.T) {
	const id = "01a22dcf-f4ff-7ad3-8cd2-1ea80c2bfa34"
	const rel = "sessions/2026/11/30/rollout-2026-11-30T18-55-33-" + id + ".jsonl"
	t.Run("rollout missing", func(t *testing.T) {
		p := buildDB(t, "state_5.sqlite", codexState)
		st := detect(t, p)
		require.Equal(t, "codex-state", st.Profile().Name)
		snap := scanStore(t, st)
		assert.Equal(t, []string{"info: rollout file /home/demo/.codex/" + rel + " not found (its model-facing names cannot be checked)"}, reasons(snap))
		assert.Equal(t, "threads id="+id, snap.Problems[0].Loc.Row)
		threads, err := codex.Threads(context.Background(), p, sqlite.Options{})
		require.NoError(t, err)
		assert.Equal(t, []codex.Thread{{ID: id, RolloutPath: "/home/demo/.codex/" + rel, NameMatches: true}}, threads)
	})
	t.Run("rollout beside a moved database", func(t *testing.T) {
		p := buildDB(t, "state_5.sqlite", codexState)
		moved := filepath.Join(filepath.Dir(p), filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(moved), 0o755))
		require.NoError(t, os.WriteFile(moved, []byte("{}\n"), 0o644))
		snap := scanStore(t, detect(t, p))
		assert.Equal(t, []string{"info: rollout file recorded as /home/demo/.codex/" + rel + " is at " + moved}, reasons(snap))
		threads, err := codex.Threads(context.Background(), p, sqlite.Options{})
		require.NoError(t, err)
		assert.Equal(t, moved, threads[0].Found)
	})
	t.Run("rollout named for another thread", func(t *testing.T) {
		p := buildDB(t, "state_5.sqlite", codexState)
		rollout := filepath.Join(t.TempDir(), "rollout-2026-11-30T18-55-33-ffffffff-0000-0000-0000-000000000000.jsonl")
		require.NoError(t, os.WriteFile(rollout, []byte("{}\n"), 0o644))
		execSQL(t, p, "UPDATE threads SET rollout_path = ?", rollout)
		snap := scanStore(t, detect(t, p))
		assert.Equal(t, []string{"warning: rollout file name " + filepath.Base(rollout) + " does not carry the thread id " + id}, reasons(snap))
	})
}

// TestDetectProfiles: the profile is read from the schema, a user profile comes first, and a
// database nothing describes is named with its tables.
func TestDetectProfiles(t *testing.T) {
	custom, err := sqlite.ParseProfile([]byte(`{"name":"archive","agent":"archive","tables":[
		{"table":"messages","column":"parts","sites":[{"path":"$[*].data.name"}]}]}`))
	require.NoError(t, err)
	tests := []struct {
		name    string
		scripts []string
		opt     sqlite.Options
		want    string
		noProf  string
	}{
		{"opencode", []string{opencodeReal}, sqlite.Options{}, "opencode", ""},
		{"crush", []string{crushSQL}, sqlite.Options{}, "crush", ""},
		{"goose", []string{gooseSQL}, sqlite.Options{}, "goose", ""},
		{"codex history", []string{codexHistory}, sqlite.Options{}, "codex", ""},
		{"codex state", []string{codexState}, sqlite.Options{}, "codex-state", ""},
		{"user profile first", []string{crushSQL}, sqlite.Options{Profile: custom}, "archive", ""},
		{"user profile not matching", []string{gooseSQL}, sqlite.Options{Profile: custom}, "goose", ""},
		{"unknown schema", []string{"sql:CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); CREATE TABLE tags(name TEXT);"}, sqlite.Options{}, "",
			"no known SQLite store profile matches the database (tables: notes, tags); describe it with --profile FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := buildDB(t, "x.db", tt.scripts...)
			st, err := sqlite.Detect(context.Background(), p, all.SQLiteOptions(tt.opt))
			if tt.noProf != "" {
				var np *sqlite.NoProfileError
				require.ErrorAs(t, err, &np)
				assert.ErrorIs(t, err, sqlite.ErrNoProfile)
				assert.Equal(t, tt.noProf, np.Reason())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, st.Profile().Name)
		})
	}
	t.Run("not a database", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "x.db")
		require.NoError(t, os.WriteFile(p, []byte("SQLite format 3\x00 but then garbage"), 0o644))
		_, err := sqlite.Detect(context.Background(), p, all.SQLiteOptions(sqlite.Options{}))
		require.Error(t, err)
		assert.False(t, errors.Is(err, sqlite.ErrNoProfile))
	})
	assert.True(t, sqlite.IsDatabase([]byte("SQLite format 3\x00\x10\x00")))
	assert.False(t, sqlite.IsDatabase([]byte("SQLite format 3")))
}

// TestMissingTablesAndColumnsAreReported: a table or column the profile names but the database
// lacks is a problem, never assumed; the rest is still read.
func TestMissingTablesAndColumnsAreReported(t *testing.T) {
	t.Run("opencode before the event log", func(t *testing.T) {
		p := buildDB(t, "opencode.db", opencodeReal, opencodeLegacy, "sql:DROP TABLE event;")
		snap := scanStore(t, detect(t, p))
		assert.Contains(t, reasons(snap), "info: table event is missing (older versions of the agent do not have it): its name sites (data $.part.tool) are not read")
		assert.Len(t, storetest.Edits(snap, storetest.ProviderSafe), 5, "the parts are still read")
	})
	t.Run("profile naming what is not there", func(t *testing.T) {
		prof, err := sqlite.ParseProfile([]byte(`{"name":"x","agent":"x","detect":["messages.parts"],"tables":[
			{"table":"messages","column":"parts","key":["uuid"],"sites":[{"path":"$[*].data.name"}]},
			{"table":"messages","column":"body","sites":[{"path":"$.name"}]},
			{"table":"archive","column":"doc","sites":[{"path":"$.tool"}]}]}`))
		require.NoError(t, err)
		p := buildDB(t, "crush.db", crushSQL)
		snap := scanStore(t, sqlite.OpenWith(p, prof, sqlite.Options{}))
		assert.Equal(t, []string{
			"warning: table messages has no column uuid (a key column): the table is not read",
			"warning: table messages has no column body (the JSON column): the table is not read",
			"warning: table archive is missing: its name sites (doc $.tool) are not read",
		}, reasons(snap))
		assert.Empty(t, snap.Sites)
	})
}

// TestProfileValidation: malformed profiles are refused with the reason.
func TestProfileValidation(t *testing.T) {
	tests := []struct{ name, json, err string }{
		{"unknown field", `{"name":"x","agent":"x","tables":[{"table":"t","column":"c","sites":[{"path":"$.a"}]}],"tabels":[]}`, "unknown field"},
		{"no agent", `{"name":"x","tables":[{"table":"t","column":"c","sites":[{"path":"$.a"}]}]}`, "no agent"},
		{"no tables", `{"name":"x","agent":"x"}`, "no tables"},
		{"no sites", `{"name":"x","agent":"x","tables":[{"table":"t","column":"c"}]}`, "no sites"},
		{"bad kind", `{"name":"x","agent":"x","tables":[{"table":"t","column":"c","sites":[{"path":"$.a","kind":"tool"}]}]}`, `unknown site kind "tool"`},
		{"empty path", `{"name":"x","agent":"x","tables":[{"table":"t","column":"c","sites":[{"path":"$"}]}]}`, "names no value"},
		{"keys not last", `{"name":"x","agent":"x","tables":[{"table":"t","column":"c","sites":[{"path":"$.a.{}.b"}]}]}`, "{} must be the last step"},
		{"when without values", `{"name":"x","agent":"x","tables":[{"table":"t","column":"c","sites":[{"path":"$.a","when":{"path":"$.t"}}]}]}`, "when needs in"},
		{"bad detect", `{"name":"x","agent":"x","detect":["t"],"tables":[{"table":"t","column":"c","sites":[{"path":"$.a"}]}]}`, "not table.column"},
		{"bad where", `{"name":"x","agent":"x","tables":[{"table":"t","column":"c","where":[{"column":"k"}],"sites":[{"path":"$.a"}]}]}`, "needs a column and in or prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sqlite.ParseProfile([]byte(tt.json))
			require.ErrorIs(t, err, sqlite.ErrBadProfile)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
	names := map[string]bool{}
	for _, p := range all.SQLiteProfiles() {
		assert.False(t, names[p.Name], "profile names are unique: %s", p.Name)
		names[p.Name] = true
	}
}

// TestCustomProfileFile: a store no built-in profile knows, described by a JSON file, with a
// BLOB JSON column, an integer key and a column condition; its storage class survives a rewrite.
func TestCustomProfileFile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "archive.json")
	require.NoError(t, os.WriteFile(prof, []byte(`{
  "name": "team-archive", "agent": "archive",
  "tables": [{"table": "history", "column": "doc", "where": [{"column": "kind", "in": ["call", "result"]}],
    "sites": [{"path": "$.calls[*].fn", "when": {"path": "$.calls[*].t", "in": ["mcp"]}, "kind": "call", "call_id": "$.calls[*].id"}]}]}`), 0o644))
	p, err := loadProfile(prof)
	require.NoError(t, err)
	db := buildDB(t, "archive.db", `sql:CREATE TABLE history (k INTEGER PRIMARY KEY, kind TEXT NOT NULL, doc BLOB);
INSERT INTO history VALUES (1, 'call', CAST('{"calls":[{"t":"mcp","id":"a","fn":"lit.search"},{"t":"local","fn":"x.y"}]}' AS BLOB));
INSERT INTO history VALUES (2, 'result', '{"calls":[{"t":"mcp","id":"a","fn":"lit.search"}]}');
INSERT INTO history VALUES (3, 'note', '{"calls":[{"t":"mcp","fn":"ignored.kind"}]}');
INSERT INTO history VALUES (4, 'call', NULL);`)
	st, err := sqlite.Detect(context.Background(), db, all.SQLiteOptions(sqlite.Options{Profile: p}))
	require.NoError(t, err)
	snap := scanStore(t, st)
	assert.Equal(t, store.AgentID("archive"), snap.Agent)
	assert.Equal(t, []siteRow{
		{"history k=1", "doc:calls[0].fn", "lit.search", store.SiteCall, false},
		{"history k=2", "doc:calls[0].fn", "lit.search", store.SiteCall, false},
	}, rowsOf(snap))
	assert.Equal(t, int64(3), snap.Records, "the where condition is applied by SQLite")
	edits := storetest.Edits(snap, storetest.ProviderSafe)
	_, err = st.Apply(context.Background(), snap, edits, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk")})
	require.NoError(t, err)
	assert.Equal(t, "blob", queryString(t, db, "SELECT typeof(doc) FROM history WHERE k = 1"))
	assert.Equal(t, "text", queryString(t, db, "SELECT typeof(doc) FROM history WHERE k = 2"))
	assert.Equal(t, `{"calls":[{"t":"mcp","id":"a","fn":"lit_search_0ded33o"},{"t":"local","fn":"x.y"}]}`,
		queryString(t, db, "SELECT CAST(doc AS TEXT) FROM history WHERE k = 1"))
}

// TestWithoutRowidAndOddKeys: a WITHOUT ROWID table is read in key order and rewritten by its key;
// a row whose key cannot be bound again (a BLOB) is reported and never rewritten; more than 20
// problems of one kind are summarized.
func TestWithoutRowidAndOddKeys(t *testing.T) {
	ctx := context.Background()
	prof, err := sqlite.ParseProfile([]byte(`{"name":"kv","agent":"kv","tables":[
		{"table":"kv","column":"doc","sites":[{"path":"$.tool"}]}]}`))
	require.NoError(t, err)
	var bad strings.Builder
	for i := 0; i < 25; i++ {
		fmt.Fprintf(&bad, "INSERT INTO kv VALUES ('z%02d', '{\"tool\":');\n", i)
	}
	p := buildDB(t, "kv.db", `sql:CREATE TABLE kv (k PRIMARY KEY, doc TEXT) WITHOUT ROWID;
INSERT INTO kv VALUES ('b key', '{"tool":"lit.b"}');
INSERT INTO kv VALUES ('a', '{"tool":"lit.a"}');
INSERT INTO kv VALUES (X'0102', '{"tool":"lit.blob"}');
INSERT INTO kv VALUES (7, '{"tool":"lit_ok"}');
`+bad.String())
	st := sqlite.OpenWith(p, prof, sqlite.Options{})
	snap := scanStore(t, st)
	assert.Equal(t, []siteRow{
		{"kv k=7", "doc:tool", "lit_ok", store.SiteColumn, false},
		{"kv k=a", "doc:tool", "lit.a", store.SiteColumn, false},
		{`kv k="b key"`, "doc:tool", "lit.b", store.SiteColumn, false},
		{"kv k=X'0102'", "doc:tool", "lit.blob", store.SiteColumn, true},
	}, rowsOf(snap), "rows in key order (integers, text, blobs), odd keys quoted")
	rs := reasons(snap)
	require.Len(t, rs, 1+20+1)
	assert.Equal(t, "warning: invalid JSON in kv.doc (unexpected end of input, offset 8); row left as it is", rs[0])
	assert.Equal(t, "warning: kv row key is not a number or text: its names are reported, not rewritten", rs[20])
	assert.Equal(t, "warning: 25 rows with invalid JSON in all (the first 20 are listed)", rs[21])

	before := dumpText(t, p)
	edits := storetest.Edits(snap, storetest.ProviderSafe)
	require.Len(t, edits, 2)
	ch, err := st.Apply(ctx, snap, edits, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.NoError(t, err)
	assert.Equal(t, `{"tool":"lit_b_`+mcpHash(t, "lit.b")+`"}`, queryString(t, p, "SELECT doc FROM kv WHERE k = 'b key'"))
	assert.Equal(t, `{"tool":"lit.blob"}`, queryString(t, p, "SELECT doc FROM kv WHERE k = X'0102'"))
	require.NoError(t, sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, false))
	assert.Equal(t, before, dumpText(t, p))
}

// mcpHash is the 7-character suffix normalize gives a name (naming.md §2), computed here from the
// rule itself: FNV-1a over the UTF-16 units, base 36, padded to 7.
func mcpHash(t *testing.T, name string) string {
	t.Helper()
	h := uint32(2166136261)
	for _, u := range utf16.Encode([]rune(name)) {
		h = (h ^ uint32(u)) * 16777619
	}
	s := strconv.FormatUint(uint64(h), 36)
	return strings.Repeat("0", 7-len(s)) + s
}

// TestProfileFilesAndRefuse: a profile with Files is picked only for a database of that base
// name (a fork with its upstream's schema); Refuse's reason makes the snapshot not writable and
// a warning, and Apply refuses it without touching the database.
func TestProfileFilesAndRefuse(t *testing.T) {
	named := &sqlite.Profile{Name: "named", Agent: "named", Files: []string{"fork.db", "fork-*.db"},
		Detect: []string{"part.data", "message.data", "session.id"},
		Tables: []sqlite.TableSpec{{Table: "part", Column: "data", Sites: []sqlite.SiteSpec{
			{Path: "$.tool", When: &sqlite.JSONCond{Path: "$.type", In: []string{"tool"}}, Kind: "call"}}}},
		Refuse: func(ctx context.Context, db *sqlite.DB) (string, error) {
			if db.Has("event", "data") {
				return "", nil
			}
			return "no event log (an older schema)", nil
		}}
	opt := sqlite.Options{Profiles: append([]*sqlite.Profile{named}, all.SQLiteProfiles()...)}
	for name, want := range map[string]string{"fork.db": "named", "fork-dev.db": "named", "opencode.db": "opencode", "xfork.db": "opencode"} {
		p := buildDB(t, name, opencodeReal)
		st, err := sqlite.Detect(context.Background(), p, opt)
		require.NoError(t, err)
		assert.Equal(t, want, st.Profile().Name, name)
	}
	p := buildDB(t, "fork.db", opencodeReal)
	st, err := sqlite.Detect(context.Background(), p, opt)
	require.NoError(t, err)
	snap := scanStore(t, st)
	assert.Empty(t, snap.NotWritable, "the event log is there")

	p = buildDB(t, "fork.db", opencodeReal, opencodeLegacy, "sql:DROP TABLE event;")
	st, err = sqlite.Detect(context.Background(), p, opt)
	require.NoError(t, err)
	snap = scanStore(t, st)
	assert.Equal(t, "no event log (an older schema)", snap.NotWritable)
	assert.Contains(t, reasons(snap), "warning: not rewritten: no event log (an older schema)")
	edits := storetest.Edits(snap, storetest.ProviderSafe)
	require.NotEmpty(t, edits)
	before, err := sqlitetest.DumpSHA256(context.Background(), p)
	require.NoError(t, err)
	_, err = st.Apply(context.Background(), snap, edits, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "b")})
	require.ErrorIs(t, err, store.ErrNotWritable)
	after, err := sqlitetest.DumpSHA256(context.Background(), p)
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing written")

	_, err = sqlite.ParseProfile([]byte(`{"name":"x","agent":"x","files":["a/b.db"],"tables":[{"table":"t","column":"c","sites":[{"path":"$.a"}]}]}`))
	require.ErrorIs(t, err, sqlite.ErrBadProfile)
	_, err = sqlite.ParseProfile([]byte(`{"name":"x","agent":"x","files":["[.db"],"tables":[{"table":"t","column":"c","sites":[{"path":"$.a"}]}]}`))
	require.ErrorIs(t, err, sqlite.ErrBadProfile)
}

// TestVirtualTableOfAMissingModule: a database with an FTS5 index (Cline 3.x's
// session-search.db, fixtures/cline-real) is read although this build has no fts5 module: its
// virtual table is listed without columns, and the database is no store (a NoProfileError
// naming its tables), not an unreadable one.
func TestVirtualTableOfAMissingModule(t *testing.T) {
	p := buildDB(t, "session-search.db", "../../fixtures/cline-real/dot-cline-data-after-3.0.65/session-search.sql")
	_, err := sqlite.Detect(context.Background(), p, all.SQLiteOptions(sqlite.Options{}))
	var np *sqlite.NoProfileError
	require.ErrorAs(t, err, &np, "%v", err)
	assert.Contains(t, np.Tables, "session_search")
}

// TestUnfinishedValueReported: a value that only opens a container ("{", "[") ends no record at
// its line break in the table's JSON Lines scanner: the row was neither reported (the scanner
// waited inside the value) nor left behind cleanly (the next row read as the rest of it). Each
// such row is now reported as invalid JSON, and the rows after it keep their own sites.
func TestUnfinishedValueReported(t *testing.T) {
	prof, err := sqlite.ParseProfile([]byte(`{"name":"kv","agent":"kv","tables":[
		{"table":"kv","column":"doc","sites":[{"path":"$.tool"}]}]}`))
	require.NoError(t, err)
	p := buildDB(t, "kv.db", `sql:CREATE TABLE kv (k INTEGER PRIMARY KEY, doc TEXT);
INSERT INTO kv VALUES (1, '{');
INSERT INTO kv VALUES (2, '{"tool":"lit.a"}');
INSERT INTO kv VALUES (3, '[');
INSERT INTO kv VALUES (4, '{"tool":"lit.b"}');
`)
	snap := scanStore(t, sqlite.OpenWith(p, prof, sqlite.Options{}))
	assert.Equal(t, []siteRow{
		{"kv k=2", "doc:tool", "lit.a", store.SiteColumn, false},
		{"kv k=4", "doc:tool", "lit.b", store.SiteColumn, false},
	}, rowsOf(snap))
	assert.Equal(t, []string{
		"warning: invalid JSON in kv.doc (unexpected end of input, offset 1); row left as it is",
		"warning: invalid JSON in kv.doc (unexpected end of input, offset 1); row left as it is",
	}, reasons(snap))
}
