package storetest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/agent/claude"
	"github.com/sessionfix/sessionfix/agent/cline"
	"github.com/sessionfix/sessionfix/agent/codex"
	"github.com/sessionfix/sessionfix/agent/copilot"
	"github.com/sessionfix/sessionfix/agent/gemini"
	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/storetest"
)

// The real fixtures the suite runs on (fixtures/README.md says how each was recorded;
// fixtures/qwen-derived/ are checkpoints built from a real session's records).
const (
	fx            = "../../fixtures/"
	qwenLab       = fx + "qwen-real/dot-qwen/projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl"
	qwenAPI       = fx + "qwen-real/dot-qwen/projects/-home-demo-src-api/chats/50bcb974-4071-429f-a75f-7496ad5cddee.jsonl"
	qwenUsage     = fx + "qwen-real/dot-qwen/usage_record.jsonl"
	qwenTmp       = fx + "qwen-derived/dot-qwen/tmp/a0c9df951b23fcfce00a2bbcbf05d4e68ac9d54e65ba6fe49f604d57ff0eb3da/"
	qwenChatSave  = qwenTmp + "checkpoint-pubmed%20search.json"
	qwenEditCkpt  = qwenTmp + "checkpoints/2026-11-30T18-55-07_000Z-notes.md-replace.json"
	claudeUser    = fx + "claude-real/dot-claude/settings.json"
	codex050      = fx + "codex-real/rollout-codex-0.50.0.jsonl"
	codex0169     = fx + "codex-real/rollout-codex-0.169.0.jsonl"
	codexHistory  = fx + "codex-real/thread_history_1.sql"
	codexState    = fx + "codex-real/state_5.sql"
	opencodeReal  = fx + "opencode-real/opencode.sql"
	kilo777       = fx + "kilo-real/kilo-7.7.7-after-import-and-resume.sql"
	claude1051    = fx + "claude-real/dot-claude/projects/-home-demo-src-lab/dd19a9ca-e09f-48a6-9120-d559cf0db6fa.jsonl"
	claude21332   = fx + "claude-real/dot-claude/projects/-home-demo-src-api/fee043f7-27fe-47f6-83b1-76d8335c15e3.jsonl"
	geminiHash    = "tmp/a0c9df951b23fcfce00a2bbcbf05d4e68ac9d54e65ba6fe49f604d57ff0eb3da/chats/session-2026-12-05T23-22-522ccb7f.json"
	geminiJSON    = fx + "gemini-real/dot-gemini-after-resume/" + geminiHash
	geminiJSONL   = fx + "gemini-real/dot-gemini-after-resume/tmp/lab/chats/session-2026-12-05T23-22-522ccb7f.jsonl"
	copilotHist   = fx + "copilot-derived/dot-copilot/history-session-state/5b8e1c2a-6f0d-4c1e-9a57-3d2f4b6c8e10.json"
	clineTask     = fx + "cline-real/dot-cline-data-after-3.0.65/tasks/1796512398525/api_conversation_history.json"
	clineSession  = fx + "cline-real/dot-cline-data-after-3.0.65/sessions/1796512611515_x7e5r/1796512611515_x7e5r.messages.json"
	sqliteTestdat = "../../engine/sqlite/testdata/"
)

// profileCase is one profile of one engine and the fixture the suite runs it on.
type profileCase struct {
	name string
	// kind is the store kind the fixture must be detected as; profile the SQLite profile name.
	kind    store.Kind
	profile string
	new     storetest.Factory
	// readOnly: the profile has no rewritable site (RunReadOnly).
	readOnly bool
}

func profileCases() []profileCase {
	return append(namedCases(), fixtureCases(nil, fx)...)
}

// namedCases are the cases written out here: a profile whose fixture needs its own rule, edit
// count, inserted members or opener (the others come from fixtures/*/conformance: fixtureCases).
func namedCases() []profileCase {
	return []profileCase{
		{name: "qwen session 0.12.0 resumed by 0.24.4", kind: qwen.KindSession, new: fileFixture(qwenLab, "3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl", qwenRule, 10, 0)},
		{name: "qwen session 0.12.0", kind: qwen.KindSession, new: fileFixture(qwenAPI, "50bcb974-4071-429f-a75f-7496ad5cddee.jsonl", qwenRule, 4, 0)},
		{name: "qwen usage_record.jsonl", kind: qwen.KindUsage, new: fileFixture(qwenUsage, "usage_record.jsonl", qwenRule, 4, 0)},
		{name: "qwen /chat save checkpoint", kind: qwen.KindCheckpoint, new: fileFixture(qwenChatSave, "tmp/h/checkpoint-pubmed%20search.json", qwenRule, 4, 0)},
		{name: "qwen edit checkpoint", kind: qwen.KindEditCheckpoint, new: fileFixture(qwenEditCkpt, "tmp/h/checkpoints/2026-11-30T18-55-07_000Z-notes.md-replace.json", qwenRule, 4, 0)},
		{name: "codex rollout 0.50.0 (flat names: namespace inserted)", kind: codex.KindRollout, new: fileFixture(codex050, "rollout-2026-11-30T18-55-07-01a22dcf-9134-7922-bfac-658542a5f64b.jsonl", nil, 8, 4)},
		{name: "claude code rule file (user settings.json)", kind: claude.KindRules, new: fileFixtureOpen(claudeUser, ".claude/settings.json", openAs(claude.KindRules), mcpRule, 2, 0)},
		{name: "claude code session 1.0.51", kind: claude.KindSession, new: fileFixture(claude1051, ".claude/projects/-home-demo-src-lab/dd19a9ca-e09f-48a6-9120-d559cf0db6fa.jsonl", claudeRule, 4, 0)},
		{name: "claude code session 2.1.332 (tool_use, select:, tool_reference, deferred names)", kind: claude.KindSession, new: fileFixture(claude21332, ".claude/projects/-home-demo-src-api/fee043f7-27fe-47f6-83b1-76d8335c15e3.jsonl", claudeMarkRule, 4, 0)},
		{name: "gemini cli session .json 0.10.0 (hash directory)", kind: gemini.KindSessionJSON, new: fileFixture(geminiJSON, ".gemini/"+geminiHash, geminiRule, 4, 0)},
		{name: "gemini cli session .jsonl converted by 0.61.0 ($set records)", kind: gemini.KindSession, new: fileFixture(geminiJSONL, ".gemini/tmp/lab/chats/session-2026-12-05T23-22-522ccb7f.jsonl", geminiRule, 4, 0)},
		// A history document holds no raw identity: each name is decided alone without the
		// home's server keys, so the case renames every rejected name to its sanitized form.
		{name: "copilot history-session-state document", kind: copilot.KindHistory, new: fileFixture(copilotHist, ".copilot/history-session-state/5b8e1c2a-6f0d-4c1e-9a57-3d2f4b6c8e10.json", copilotSanitizeRule, 3, 0)},
		// Cline 2.18.0's native task, resumed once (every rejected uid+0mcp0+tool name gets its
		// sanitized tool), and 3.0.65's session (its names are all provider-safe: the case
		// renames the 3.x names of the foo_bar server, calls and results alike).
		{name: "cline 2.x task (2.18.0, native tools)", kind: cline.KindTask, new: fileFixture(clineTask, ".cline/data/tasks/1796512398525/api_conversation_history.json", clineRule, 5, 0)},
		{name: "cline 3.x session (3.0.65)", kind: cline.KindSession, new: fileFixture(clineSession, ".cline/data/sessions/1796512611515_x7e5r/1796512611515_x7e5r.messages.json", clineRule, 8, 0)},
		{name: "opencode (real dump plus legacy rows)", kind: store.KindSQLite, profile: "opencode", new: dbFixture("opencode.db", []string{opencodeReal, sqliteTestdat + "opencode-legacy.sql"},
			`UPDATE part SET data = replace(data, '"status":"completed"', '"status":"archived"') WHERE id = 'prt_legacy00000000000000000001'`,
			`UPDATE part SET data = ' ' || data WHERE id = 'prt_legacy00000000000000000002'`, 11)},
		// Kilo 7.7.7's database (its 78-unit name is the provider-safe rule's edit), and the same
		// without Kilo's own tables, named kilo.db (the profile that knows it by name).
		{name: "kilo 7.7.7", kind: store.KindSQLite, profile: "kilo", new: dbFixture("kilo.db", []string{kilo777},
			`UPDATE part SET data = replace(data, '"status":"completed"', '"status":"archived"') WHERE id = 'prt_2488ccbfe001ci7wofvy1ONqjf'`,
			`UPDATE part SET data = ' ' || data WHERE id = 'prt_2488ccbfe001ci7wofvy1ONqjf'`, 1)},
		{name: "kilo by file name", kind: store.KindSQLite, profile: "kilo-file", new: dbFixture("kilo.db", []string{kilo777, "sql:DROP TABLE kilo_board_message; DROP TABLE kilo_board;"},
			`UPDATE part SET data = replace(data, '"status":"completed"', '"status":"archived"') WHERE id = 'prt_2488ccbfe001ci7wofvy1ONqjf'`,
			`UPDATE part SET data = ' ' || data WHERE id = 'prt_2488ccbfe001ci7wofvy1ONqjf'`, 1)},
		// Open WebUI's webui.db (its SQLAlchemy tables and rows): chat.chat and chat_message.output.
		{name: "openwebui webui.db", kind: store.KindSQLite, profile: "openwebui", new: dbFixture("webui.db", []string{fx + "openwebui-schema/dump_sqlite.sql"},
			`UPDATE chat SET chat = replace(chat, '"status": "completed"', '"status": "done"')`,
			`UPDATE chat SET chat = ' ' || chat`, 12)},
		{name: "crush", kind: store.KindSQLite, profile: "crush", new: dbFixture("crush.db", []string{sqliteTestdat + "crush.sql"},
			`UPDATE messages SET parts = replace(parts, '"finished":true', '"finished":false') WHERE id = 'm-0002'`,
			`UPDATE messages SET parts = ' ' || parts WHERE id = 'm-0003'`, 6)},
		{name: "crush in rollback-journal mode", kind: store.KindSQLite, profile: "crush", new: dbFixtureMode("crush.db", false, []string{sqliteTestdat + "crush.sql"},
			`UPDATE messages SET parts = replace(parts, '"finished":true', '"finished":false') WHERE id = 'm-0006'`,
			`UPDATE messages SET parts = ' ' || parts WHERE id = 'm-0002'`, 6)},
		{name: "goose", kind: store.KindSQLite, profile: "goose", new: dbFixture("sessions.db", []string{sqliteTestdat + "goose.sql"},
			`UPDATE messages SET content_json = replace(content_json, '"status":"success"', '"status":"error"') WHERE id = 2`,
			`UPDATE messages SET content_json = ' ' || content_json WHERE id = 2`, 6)},
		{name: "codex thread history", kind: store.KindSQLite, profile: "codex", readOnly: true, new: dbFixture("thread_history_1.sqlite", []string{codexHistory}, "", "", 0)},
		{name: "codex state", kind: store.KindSQLite, profile: "codex-state", readOnly: true, new: dbFixture("state_5.sqlite", []string{codexState}, "", "", 0)},
	}
}

// copilotSanitizeRule renames a name outside ^[a-zA-Z0-9_-]{1,64}$ to mcpname.CopilotSanitize
// of it, cut to 64.
func copilotSanitizeRule(s store.Site) (string, bool) {
	if mcpname.CopilotNameAccepted(s.Name) {
		return "", false
	}
	n := mcpname.CopilotSanitize(s.Name)
	return n[:min(len(n), mcpname.CopilotMaxName)], true
}

// fixtureCases are the cases a room brings with its fixtures alone: every file under
// <fixtures>/<dir>/conformance/<kind>/ (say fixtures/acme/conformance/acme-session/.acme/sessions/s1.jsonl)
// is one case of the JSONL profile of that kind, copied to its path below <kind>/ in a temp dir
// (so detection sees the agent's layout) and renamed by the agent's own Namer (naming.ProviderSafe
// when it has none), at least one edit, no inserted member. A kind no listed agent has, or a dir
// with no file, is an error: tb nil panics (profileCases runs outside a test too).
func fixtureCases(tb testing.TB, fixtures string) []profileCase {
	dirs, err := filepath.Glob(filepath.Join(fixtures, "*", "conformance", "*"))
	if err != nil {
		panic(err)
	}
	fail := func(format string, args ...any) {
		if tb != nil {
			tb.Fatalf(format, args...)
		}
		panic(fmt.Sprintf(format, args...))
	}
	var out []profileCase
	for _, dir := range dirs {
		kind := store.Kind(filepath.Base(dir))
		a := agentOfKind(kind)
		if a == nil {
			fail("%s: no agent of agent/all has a JSONL profile of kind %s", dir, kind)
			return nil
		}
		n := 0
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			n++
			out = append(out, profileCase{name: fmt.Sprintf("%s %s (fixtures)", kind, filepath.ToSlash(rel)), kind: kind,
				new: fileFixture(p, rel, namerRule(a), 1, 0)})
			return nil
		})
		if err != nil {
			fail("%s: %v", dir, err)
		}
		if n == 0 {
			fail("%s: no fixture file", dir)
		}
	}
	return out
}

// agentOfKind is the agent of agent/all with a JSONL profile of that kind, or nil.
func agentOfKind(kind store.Kind) agent.Agent {
	for _, a := range all.Agents {
		for _, p := range a.Core().JSONL {
			if p.Kind == kind {
				return a
			}
		}
	}
	return nil
}

// namerRule renames a site as the agent's Namer decides for it alone (naming.ProviderSafe when
// the agent has none): its new name when the decision is a rewrite.
func namerRule(a agent.Agent) func(store.Site) (string, bool) {
	n := a.Core().Namer
	if n == nil {
		n = naming.ProviderSafe{}
	}
	return func(s store.Site) (string, bool) {
		ds := n.Decide(&store.Snapshot{Agent: a.Core().ID, Sites: []store.Site{s}}, naming.Policy{})
		if len(ds) == 1 && ds[0].Action == naming.ActRewrite && ds[0].New != s.Name {
			return ds[0].New, true
		}
		return "", false
	}
}

// TestConformance runs the conformance suite over every store profile of every engine.
func TestConformance(t *testing.T) {
	for _, tc := range profileCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case builds its own fixtures in its own temp dirs
			f := tc.new(t)
			require.Equal(t, tc.kind, f.Store.Ref().Kind, "the fixture is detected as a %s store", tc.kind)
			assert.Equal(t, tc.profile, sqliteProfile(f.Store))
			if tc.readOnly {
				storetest.RunReadOnly(t, tc.new)
				return
			}
			storetest.Run(t, tc.new)
		})
	}
}

// TestConformanceCoversEveryProfile fails when a profile has no case in TestConformance: a new
// JSONL profile or SQLite profile must bring a fixture.
func TestConformanceCoversEveryProfile(t *testing.T) {
	kinds, profiles := map[store.Kind]bool{}, map[string]bool{}
	for _, tc := range profileCases() {
		kinds[tc.kind], profiles[tc.profile] = true, true
	}
	for _, a := range all.Agents {
		for _, p := range a.Core().JSONL {
			assert.True(t, kinds[p.Kind], "JSONL profile %s has no conformance case", p.Kind)
		}
	}
	assert.True(t, kinds[claude.KindRules], "Claude Code rule files (fix --rules) have no conformance case")
	for _, p := range all.SQLiteProfiles() {
		assert.True(t, profiles[p.Name], "SQLite profile %s has no conformance case", p.Name)
	}
	assert.True(t, kinds[codex.KindRollout] && kinds[qwen.KindCheckpoint], "the guard itself sees the cases")
}

// sqliteProfile is the SQLite profile name of a store, "" for other engines.
func sqliteProfile(st store.Store) string {
	if s, ok := st.(interface{ Profile() *sqlite.Profile }); ok && s.Profile() != nil {
		return s.Profile().Name
	}
	return ""
}

// detect opens path as discovery does (agent/all), so the suite follows the agent list.
func detect(tb testing.TB, path string) store.Store {
	tb.Helper()
	head, err := all.ReadHead(path)
	require.NoError(tb, err)
	d := all.DetectWith(context.Background(), path, head, all.Options{})
	require.NotNil(tb, d.Store, "%s is detected as a store (%+v)", path, d)
	return d.Store
}

// fileFixture copies a real fixture file to name under a fresh temp dir (fresh for each
// subtest), with an old mtime, and detects it.
func fileFixture(src, name string, rule func(store.Site) (string, bool), minEdits, inserts int) storetest.Factory {
	return fileFixtureOpen(src, name, detect, rule, minEdits, inserts)
}

// openAs returns an opener of a store kind that is never detected (a Claude Code rule file is a
// store only for fix --rules): agent/all.Open, as undo reopens it.
func openAs(kind store.Kind) func(testing.TB, string) store.Store {
	return func(tb testing.TB, p string) store.Store {
		st, err := all.Open(store.Ref{Path: p, Kind: kind})
		require.NoError(tb, err)
		return st
	}
}

// fileFixtureOpen is fileFixture with the store opened by open.
func fileFixtureOpen(src, name string, open func(testing.TB, string) store.Store, rule func(store.Site) (string, bool), minEdits, inserts int) storetest.Factory {
	return func(tb testing.TB) storetest.Fixture {
		tb.Helper()
		b, err := os.ReadFile(src)
		require.NoError(tb, err)
		p := filepath.Join(tb.TempDir(), name)
		require.NoError(tb, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(tb, os.WriteFile(p, b, 0o640))
		old := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
		require.NoError(tb, os.Chtimes(p, old, old))
		read := func(tb testing.TB) []byte {
			b, err := os.ReadFile(p)
			require.NoError(tb, err)
			return b
		}
		f := storetest.Fixture{
			Store:  open(tb, p),
			Reopen: all.Open,
			Digest: func(tb testing.TB) string {
				s := sha256.Sum256(read(tb))
				return hex.EncodeToString(s[:])
			},
			Bytes: read,
			// A change inside what the run wrote: a record put before the first line (an
			// append would be undone in place, keeping it).
			Tamper: func(tb testing.TB, _ *store.Change) {
				b := read(tb)
				if filepath.Ext(p) == ".json" {
					b = append([]byte(" "), b...) // a JSON document: a byte more
				} else {
					b = append([]byte(`{"uuid":"early","type":"user","message":{"role":"user","parts":[{"text":"inserted before"}]}}`+"\n"), b...)
				}
				require.NoError(tb, os.WriteFile(p, b, 0o640))
			},
			// An agent writing after the scan: one more record (a JSON document: rewritten).
			Touch: func(tb testing.TB) {
				b := read(tb)
				if filepath.Ext(p) == ".json" {
					b = append(b, '\n')
				} else {
					b = append(b, []byte(`{"uuid":"late","type":"user","message":{"role":"user","parts":[{"text":"appended"}]}}`+"\n")...)
				}
				require.NoError(tb, os.WriteFile(p, b, 0o640))
				later := time.Date(2026, 5, 2, 9, 0, 0, 0, time.UTC)
				require.NoError(tb, os.Chtimes(p, later, later))
			},
			Rename:   rule,
			MinEdits: minEdits,
			Inserts:  inserts,
		}
		if f.Store.Ref().Kind == codex.KindRollout {
			f.Rename, f.Plan = nil, codexPlan
		}
		return f
	}
}

// claudeRule is the spelling of Claude Code 2.1.332 for a name an older release wrote: every
// UTF-16 unit outside [A-Za-z0-9_-] becomes "_" (the real namer attributes raw identities
// first: agent/claude/namer.go; the suite needs the store's side only). Free-text sites are never
// rewritten.
func claudeRule(s store.Site) (string, bool) {
	if n := mcpname.ProviderSubstitute(s.Name); !s.ReadOnly && s.Units == nil && mcpname.HasPrefix(s.Name) && n != s.Name {
		return n, true
	}
	return "", false
}

// claudeMarkRule renames one tool everywhere a 2.1.332 session sends it back (tool_use name,
// the ToolSearch select: list, tool_reference, deferred-tool names): its names are all current,
// so the suite renames on purpose.
func claudeMarkRule(s store.Site) (string, bool) {
	if s.ReadOnly || !deployProd.MatchString(s.Name) {
		return "", false
	}
	return deployProd.ReplaceAllString(s.Name, "${0}_v2"), true
}

var deployProd = regexp.MustCompile(`mcp__foo_bar__deploy_prod\b`)

// geminiRule gives a name of Gemini CLI 0.32.x or older (no mcp_ prefix) a 0.61.0-shaped name
// (the real namer reads each call's raw tool from its displayName: agent/gemini/namer.go; the
// suite needs the store's side only): mcp_x_ + the name, through generateValidName.
func geminiRule(s store.Site) (string, bool) {
	if strings.HasPrefix(s.Name, "mcp_") || s.Units != nil {
		return "", false
	}
	return mcpname.GeminiName("x", s.Name), true
}

// clineRule renames a Cline 2.x name a provider rejects to the same uid + its tool sanitized
// (the repair's shape; the real namer asks --inventory first: agent/cline/namer.go) and a
// Cline 3.x name of server foo_bar to a v2 name once (3.x names are all provider-safe).
func clineRule(s store.Site) (string, bool) {
	if uid, tool, ok := mcpname.Cline2Split(s.Name); ok && s.Units == nil && !mcpname.IsClineSafe(s.Name) {
		return uid + mcpname.Cline2Marker + cline.Cline2Repair(tool, nil), true
	}
	if strings.HasPrefix(s.Name, "foo_bar__") && !strings.HasSuffix(s.Name, "_v2") {
		return s.Name + "_v2", true
	}
	return "", false
}

// qwenRule is Qwen Code's rule: normalizeMcp of each stored name (naming.md §2).
func qwenRule(s store.Site) (string, bool) {
	if n := mcpname.NormalizeMcp(s.Name); s.Units == nil && n != s.Name {
		return n, true
	}
	return "", false
}

// mcpRule rewrites an mcp__ name (or rule) a provider rejects to its provider-safe form, and
// nothing else (a Claude Code rule such as Bash(ls:*) stays).
func mcpRule(s store.Site) (string, bool) {
	if !strings.HasPrefix(s.Name, "mcp__") {
		return "", false
	}
	return storetest.ProviderSafe(s)
}

// codexPlan is a Codex repair in the form today's Codex writes (schemes.md §A): a flat name a
// provider rejects ("mcp__<server>__<tool>") becomes namespace "mcp__<server>" (inserted: the
// old call has none) and name <tool>, both sanitized. (The real namer also attributes raw
// identities and collision suffixes: agent/codex/namer.go; the suite needs the store's side only.)
func codexPlan(snap *store.Snapshot) []store.Edit {
	var out []store.Edit
	hasNS := map[string]bool{}
	for _, s := range snap.Sites {
		if s.Field == codex.FieldNamespace && len(s.Raw) > 0 {
			hasNS[s.Group] = true
		}
	}
	for _, s := range snap.Sites {
		if s.Field != codex.FieldName || hasNS[s.Group] || mcpname.CodexNameAccepted(s.Name, mcpname.ChatCompletionsNameMax) {
			continue
		}
		rest, ok := strings.CutPrefix(s.Name, "mcp__")
		server, tool, ok2 := strings.Cut(rest, "__")
		if !ok || !ok2 {
			continue
		}
		out = append(out, store.Edit{Site: s, New: mcpname.CodexSanitize(tool)},
			store.Edit{Site: namespaceSite(snap, s), New: "mcp__" + mcpname.CodexSanitize(server)})
	}
	return out
}

// namespaceSite is the absent-namespace site of a Codex function_call: the one the scan emits
// in the call's group, else the one codex.NamespaceSite places after the name.
func namespaceSite(snap *store.Snapshot, name store.Site) store.Site {
	for _, s := range snap.Sites {
		if s.Group == name.Group && s.Field == codex.FieldNamespace {
			return s
		}
	}
	return codex.NamespaceSite(name)
}

// dbFixture builds a WAL database named name from SQL files (or inline "sql:…" text) and detects it; tamper is the SQL
// an agent runs afterwards on a row the rewrite changes, touch the one it runs between the scan
// and the rewrite on a planned row, moving its name tokens (a change elsewhere in a row is
// merged, not refused: only the tokens are checked, engine/sqlite Apply).
func dbFixture(name string, scripts []string, tamper, touch string, minEdits int) storetest.Factory {
	return dbFixtureMode(name, true, scripts, tamper, touch, minEdits)
}

// dbFixtureMode is dbFixture in WAL mode or, wal false, rollback-journal mode.
func dbFixtureMode(name string, wal bool, scripts []string, tamper, touch string, minEdits int) storetest.Factory {
	return func(tb testing.TB) storetest.Fixture {
		tb.Helper()
		p := filepath.Join(tb.TempDir(), name)
		var rs []io.Reader
		for _, s := range scripts {
			if text, ok := strings.CutPrefix(s, "sql:"); ok { // inline SQL
				rs = append(rs, strings.NewReader(text))
				continue
			}
			f, err := os.Open(s)
			require.NoError(tb, err)
			tb.Cleanup(func() { f.Close() })
			rs = append(rs, f)
		}
		require.NoError(tb, sqlitetest.BuildFromSQL(context.Background(), p, wal, rs...))
		exec := func(tb testing.TB, query string) {
			db, err := sqlx.Open("sqlite3", "file:"+p+"?_busy_timeout=5000")
			require.NoError(tb, err)
			defer db.Close()
			res, err := db.Exec(query)
			require.NoError(tb, err)
			n, err := res.RowsAffected()
			require.NoError(tb, err)
			require.Equal(tb, int64(1), n, "the agent's statement changes one row: %s", query)
		}
		// value reads the column value of a site's row ("part id=prt_1", path "data:tool").
		value := func(tb testing.TB, s store.Site) (string, []byte) {
			table, key, ok := strings.Cut(s.Loc.Row, " ")
			col, _, ok2 := strings.Cut(s.Path, ":")
			kc, kv, ok3 := strings.Cut(key, "=")
			require.True(tb, ok && ok2 && ok3 && !strings.ContainsAny(kv, " \""), "a plain one-key row label: %q %q", s.Loc.Row, s.Path)
			db, err := sqlx.Open("sqlite3", "file:"+p+"?mode=ro")
			require.NoError(tb, err)
			defer db.Close()
			var v []byte
			require.NoError(tb, db.Get(&v, fmt.Sprintf(`SELECT CAST(%q AS BLOB) FROM %q WHERE %q = ?`, col, table, kc), kv))
			return s.Loc.Row + " " + col, v
		}
		return storetest.Fixture{
			Store:  detect(tb, p),
			Reopen: all.Open,
			Digest: func(tb testing.TB) string {
				s, err := sqlitetest.DumpSHA256(context.Background(), p)
				require.NoError(tb, err)
				return s
			},
			Tamper:   func(tb testing.TB, _ *store.Change) { exec(tb, tamper) },
			Touch:    func(tb testing.TB) { exec(tb, touch) },
			Value:    value,
			MinEdits: minEdits,
			File: func(tb testing.TB) []byte {
				b, err := os.ReadFile(p)
				require.NoError(tb, err)
				return b
			},
		}
	}
}

func TestProviderSafeRule(t *testing.T) {
	tests := []struct {
		name string
		site store.Site
		want string
		ok   bool
	}{
		{"provider-safe kept", store.Site{Name: "lit_ok_tool"}, "", false},
		{"dotted normalized", store.Site{Name: "lit_literature.search_pubmed"}, mcpname.Normalize("lit_literature.search_pubmed"), true},
		{"read-only never", store.Site{Name: "deploy.prod", ReadOnly: true}, "", false},
		{"lone surrogate by units", store.Site{Name: "a\uFFFD", Units: []uint16{'a', 0xD800}}, mcpname.NormalizeUnits([]uint16{'a', 0xD800}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := storetest.ProviderSafe(tt.site)
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.want, got)
		})
	}
}

// TestFixtureCases: a fixture under <fixtures>/<dir>/conformance/<kind>/ is a conformance case
// of that kind, copied to its layout below <kind>/ and detected as that kind, renamed by the
// agent's Namer.
func TestFixtureCases(t *testing.T) {
	root := t.TempDir()
	dst := filepath.Join(root, "q", "conformance", string(qwen.KindUsage), ".qwen", "usage_record.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	b, err := os.ReadFile(qwenUsage)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dst, b, 0o644))
	cases := fixtureCases(t, root)
	require.Len(t, cases, 1)
	assert.Equal(t, qwen.KindUsage, cases[0].kind)
	f := cases[0].new(t)
	assert.Equal(t, qwen.KindUsage, f.Store.Ref().Kind)
	assert.True(t, strings.HasSuffix(f.Store.Ref().Path, filepath.Join(".qwen", "usage_record.jsonl")), f.Store.Ref().Path)
	storetest.Run(t, cases[0].new)
}
