package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/rewrite"
)

// qwenSession is the fixture session the plan tests change after planning.
const qwenSession = "projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl"

const appendedLine = `{"type":"user","message":{"role":"user","parts":[{"text":"one more turn"}]}}` + "\n"

func appendTo(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func readTree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			rel, _ := filepath.Rel(root, p)
			out[rel] = string(b)
		}
		return nil
	}))
	return out
}

// The acceptance of issue 10 item 4: fix --plan-out p.json DIR, append a line to one session,
// fix --apply --yes --plan p.json: the changed store is refused (named, exit 4), every other
// store is rewritten exactly as planned, undo restores all.
func TestPlanOutThenApplyPlan(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	orig := readTree(t, dir)
	state := filepath.Join(t.TempDir(), "state")
	plan := filepath.Join(t.TempDir(), "p.json")

	r := runCLI(t, env, "", "fix", "--plan-out", plan, dir)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.out, "plan written to "+plan+" (35 names in 3 stores); nothing was changed")
	assert.Equal(t, orig, readTree(t, dir), "--plan-out is a dry run")
	pf, err := pipeline.ReadPlanFile(plan)
	require.NoError(t, err)
	require.Len(t, pf.Stores, 3)

	// What each store becomes when rewritten as planned: a plain fix --apply of a copy made
	// before the change (planning is deterministic; the plan names the same edits).
	ref := fixtureCopy(t)
	require.Equal(t, exitcode.OK, runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", filepath.Join(t.TempDir(), "s2"), ref).code)
	want := readTree(t, ref)

	changed := filepath.Join(dir, qwenSession)
	appendTo(t, changed, appendedLine)
	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, "--plan", plan)
	require.Equal(t, exitcode.InUse, r.code, "the changed store is refused: in use, exit 4: %s", r.err)
	assert.Contains(t, r.err, changed+": in use, skipped: changed since it was planned (size ")
	assert.Contains(t, r.out, "rewrote 20 names in 2 files; 7 legacy truncated names kept; 1 file skipped (in use)")
	got := readTree(t, dir)
	for rel := range orig {
		switch {
		case rel == qwenSession:
			assert.Equal(t, orig[rel]+appendedLine, got[rel], "the changed store is not touched")
		case slices_contains(pf.Paths(), filepath.Join(dir, rel)):
			assert.Equal(t, want[rel], got[rel], "%s is rewritten exactly as planned", rel)
			assert.NotEqual(t, orig[rel], got[rel], rel)
		default:
			assert.Equal(t, orig[rel], got[rel], "%s is not in the plan", rel)
		}
	}

	r = runCLI(t, env, "", "undo", "--state-dir", state, "--last", "--yes")
	require.Equal(t, exitcode.OK, r.code, r.err)
	orig[qwenSession] += appendedLine
	assert.Equal(t, orig, readTree(t, dir), "undo restores every rewritten store")
}

func slices_contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// answerAfter is standard input that, when the [y/N] question is read, first runs change (a
// store changes between the plan shown and the answer), then answers answer.
type answerAfter struct {
	change func()
	r      *strings.Reader
}

func (a *answerAfter) Read(p []byte) (int, error) {
	if a.change != nil {
		a.change()
		a.change = nil
	}
	return a.r.Read(p)
}

// Interactive fix --apply applies the plan the person confirmed, not a new one: a session
// appended to between the plan and the "y" is refused (exit 4) instead of being planned again
// and rewritten with changes nobody saw.
func TestInteractiveApplyAppliesConfirmedPlan(t *testing.T) {
	env := testEnv(t)
	env.InTerminal = true
	dir := fixtureCopy(t)
	orig := readTree(t, dir)
	changed := filepath.Join(dir, qwenSession)
	// The appended line holds a legacy name: planned again, it would be rewritten too.
	line := `{"type":"assistant","message":{"role":"model","parts":[{"functionCall":{"name":"mcp__new.server__tool"}}]}}` + "\n"
	var out, errb bytes.Buffer
	e := *env
	e.In, e.Out, e.Err = &answerAfter{change: func() { appendTo(t, changed, line) }, r: strings.NewReader("y\n")}, &out, &errb
	code := run(context.Background(), []string{"sessionfix", "fix", "--apply", "--state-dir", filepath.Join(t.TempDir(), "s"), dir}, &e)
	require.Equal(t, exitcode.InUse, code, errb.String())
	assert.Contains(t, errb.String(), changed+": in use, skipped: changed since it was planned")
	assert.Equal(t, orig[qwenSession]+line, readTree(t, dir)[qwenSession], "the session changed after the prompt is not rewritten")
	assert.Contains(t, out.String(), "rewrote 20 names in 2 files")
}

// A plan file is untrusted input: every tampered, malformed or misdirected plan is refused with
// an error naming the file and what is wrong, and nothing is changed.
func TestApplyPlanRefusesTamperedPlans(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	plan := filepath.Join(t.TempDir(), "p.json")
	require.Equal(t, exitcode.OK, runCLI(t, env, "", "fix", "--plan-out", plan, dir).code)
	good, err := os.ReadFile(plan)
	require.NoError(t, err)
	pf, err := pipeline.ReadPlanFile(plan)
	require.NoError(t, err)
	orig := readTree(t, dir)
	other := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(other, []byte("\"mcp__a.b__c\" is not a store\n"), 0o600))

	resealed := func(edit func(p *rewrite.PlanFile)) []byte {
		c := *pf
		c.Stores = append([]rewrite.PlannedStore(nil), pf.Stores...)
		for i := range c.Stores {
			c.Stores[i].Edits = append([]rewrite.PlannedEdit(nil), pf.Stores[i].Edits...)
		}
		edit(&c)
		b, err := rewrite.MarshalPlanFile(&c)
		require.NoError(t, err)
		return b
	}
	for _, tc := range []struct {
		name string
		doc  []byte
		code int
		msg  string
	}{
		{"edited by hand", bytes.Replace(good, []byte(`"new": "mcp__foo_bar__get_data_0xybsnb"`), []byte(`"new": "mcp__evil"`), 1), exitcode.Error, "its checksum does not match its content"},
		{"not a plan", []byte(`{"stores":[]}`), exitcode.Error, "not a sessionfix plan"},
		{"path traversal", resealed(func(p *rewrite.PlanFile) { p.Stores[0].Path = dir + "/projects/../../../etc/passwd" }), exitcode.Error, "stores[0].path: not a clean path"},
		{"relative path", resealed(func(p *rewrite.PlanFile) { p.Stores[0].Path = "projects/x.jsonl" }), exitcode.Error, "stores[0].path: not an absolute path"},
		{"relative mcp_config", resealed(func(p *rewrite.PlanFile) {
			p.Options.SetAgentValues(rewrite.PlanMember{Key: "mcp_config", Repeatable: true, File: true, After: "profile"}, []string{"../mcp.json"})
		}), exitcode.Error, "options.mcp_config[0]: not an absolute path"},
		{"unknown agent", resealed(func(p *rewrite.PlanFile) { p.Options.Agent = "acme" }), exitcode.Error, `options: --agent must be one of ` + selectable() + `, not "acme"`},
		{"unknown kind", resealed(func(p *rewrite.PlanFile) { p.Stores[0].Kind = "shell-script" }), exitcode.Error, `unknown store kind "shell-script"`},
		{"old not a token", resealed(func(p *rewrite.PlanFile) { p.Stores[0].Edits[0].Old = `x", "y` }), exitcode.Error, "edits[0]: old is not a JSON string token"},
		{"new with a newline", resealed(func(p *rewrite.PlanFile) { p.Stores[0].Edits[0].New = "a\nb" }), exitcode.Error, "edits[0]: new is not a name"},
		{"offset past the end", resealed(func(p *rewrite.PlanFile) { p.Stores[0].Edits[0].Offset = 1 << 40 }), exitcode.Error, "outside the store"},
		{"unknown member", bytes.Replace(good, []byte(`"format"`), []byte(`"run":"rm -rf /","format"`), 1), exitcode.Error, "checksum does not match"},
		// Well-formed and sealed, but not what sessionfix plans for the store: refused, the others rewritten.
		{"another new name", resealed(func(p *rewrite.PlanFile) { p.Stores[0].Edits[0].New = "mcp__evil" }), exitcode.Partial, "planning it again does not give the planned edits (planned"},
		// A file that is not a store of the plan's kind is never opened as one.
		{"not a store", resealed(func(p *rewrite.PlanFile) {
			p.Stores = p.Stores[:1]
			p.Stores[0].Path = other
		}), exitcode.Partial, "not a known session"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(plan, tc.doc, 0o600))
			state := filepath.Join(t.TempDir(), "s")
			r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, "--plan", plan)
			assert.Equal(t, tc.code, r.code, r.err)
			assert.Contains(t, r.err, tc.msg)
			if tc.code == exitcode.Error {
				assert.Contains(t, r.err, "plan "+plan+" refused: ")
				assert.Equal(t, orig, readTree(t, dir), "nothing is changed")
			} else if tc.name == "another new name" {
				rel, _ := filepath.Rel(dir, pf.Stores[0].Path)
				got := readTree(t, dir)
				assert.Equal(t, orig[rel], got[rel], "the store whose edits differ is not rewritten")
				assert.Contains(t, r.err, pf.Stores[0].Path+": failed: ")
				assert.Contains(t, r.out, "rewrote 20 names in 2 files")
				u := runCLI(t, env, "", "undo", "--state-dir", state, "--last", "--yes")
				require.Equal(t, exitcode.OK, u.code, u.err)
				assert.Equal(t, orig, readTree(t, dir), "undo restores the two stores rewritten")
			}
			b, _ := os.ReadFile(other)
			assert.Equal(t, "\"mcp__a.b__c\" is not a store\n", string(b))
		})
	}
}

func TestPlanFlagsUsage(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	plan := filepath.Join(t.TempDir(), "p.json")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"fix", "--apply", "--yes", "--plan-out", plan, dir}, "--plan-out writes the plan of a dry run"},
		{[]string{"fix", "--plan", plan, dir}, "--plan applies a plan: it needs --apply"},
		{[]string{"fix", "--apply", "--yes", "--plan", plan, dir}, "--plan takes its stores from the plan: give no PATH"},
		{[]string{"fix", "--apply", "--yes", "--plan", plan, "--keep-truncated"}, "drop --keep-truncated"},
		{[]string{"fix", "--plan-out", plan, "--plan", plan}, "exclude each other"},
		{[]string{"fix", "--plan-out", "", dir}, "--plan-out needs a file name"},
		{[]string{"fix", "--plan-out", "-", dir}, "standard output carries the report"},
	} {
		r := runCLI(t, env, "", tc.args...)
		assert.Equal(t, exitcode.Usage, r.code, "%v: %s", tc.args, r.err)
		assert.Contains(t, r.err, tc.msg, tc.args)
		assert.NoFileExists(t, plan)
	}
	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--plan", plan)
	assert.Equal(t, exitcode.Error, r.code)
	assert.Contains(t, r.err, "plan "+plan+": no such file or directory")
}

// The plan file documents itself: its members are those of docs/plan.md.
func TestPlanFileShape(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	plan := filepath.Join(t.TempDir(), "p.json")
	r := runCLI(t, env, "", "fix", "--format", "json", "--plan-out", plan, dir)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.err, "plan written to "+plan, "with --format json the note goes to standard error")
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.out), &doc), "standard output stays one JSON document")
	b, err := os.ReadFile(plan)
	require.NoError(t, err)
	var pf map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &pf))
	assert.ElementsMatch(t, []string{"checksum", "format", "version", "created", "options", "stores"}, keys(pf))
	assert.JSONEq(t, `"sessionfix-plan"`, string(pf["format"]))
	assert.JSONEq(t, `"2026-11-30T12:00:00Z"`, string(pf["created"]))
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A plan applies byte for byte what a plain fix --apply would, for every engine: a Codex
// rollout (names rewritten and "namespace" members inserted) and an opencode database.
func TestApplyPlanCodexAndSQLite(t *testing.T) {
	rollout := readFixture(t, "rollout-codex-0.50.0.jsonl")
	home, path := codexHome(t, rollout, true)
	refHome, refPath := codexHome(t, rollout, true)
	_, db := opencodeStore(t)
	_, refDB := opencodeStore(t)
	e := newCodexEnv(t, map[string]string{"CODEX_HOME": home})
	plan := filepath.Join(t.TempDir(), "p.json")

	require.Equal(t, exitcode.OK, e.run(t, "fix", "--plan-out", plan, path, db), e.err.String())
	pf, err := pipeline.ReadPlanFile(plan)
	require.NoError(t, err)
	require.Len(t, pf.Stores, 2)
	inserts := 0
	for _, ps := range pf.Stores {
		for _, ed := range ps.Edits {
			if ed.Old == "" && ed.Field == "namespace" {
				inserts++
			}
		}
	}
	assert.Positive(t, inserts, "the rollout's plan inserts namespace members")
	require.Equal(t, exitcode.OK, e.run(t, "fix", "--apply", "--yes", "--state-dir", filepath.Join(t.TempDir(), "s"), "--plan", plan), e.err.String())

	r := newCodexEnv(t, map[string]string{"CODEX_HOME": refHome})
	require.Equal(t, exitcode.OK, r.run(t, "fix", "--apply", "--yes", "--state-dir", filepath.Join(t.TempDir(), "s2"), refPath, refDB), r.err.String())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	want, err := os.ReadFile(refPath)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "the rollout is rewritten as planned")
	assert.NotEqual(t, string(rollout), string(got))
	assert.Equal(t, dumpSHA(t, refDB), dumpSHA(t, db), "the database is rewritten as planned")
}

// A database planned batch by batch (more than rewrite.BatchSites sites) is recorded as one
// store of the plan and checked whole: applied as planned when unchanged, refused (exit 4) once
// it changed.
func TestApplyPlanBatchedDatabase(t *testing.T) {
	defer func(n int) { rewrite.BatchSites = n }(rewrite.BatchSites)
	rewrite.BatchSites = 3
	env := testEnv(t)
	_, db := opencodeStore(t)
	_, refDB := opencodeStore(t)
	plan := filepath.Join(t.TempDir(), "p.json")
	r := runCLI(t, env, "", "fix", "--plan-out", plan, db)
	require.Equal(t, exitcode.OK, r.code, r.err)
	pf, err := pipeline.ReadPlanFile(plan)
	require.NoError(t, err)
	require.Len(t, pf.Stores, 1, "one store, however many parts")
	assert.Equal(t, 11, pf.Stores[0].Names)

	mtime := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(db, mtime, mtime))
	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", filepath.Join(t.TempDir(), "s"), "--plan", plan)
	require.Equal(t, exitcode.InUse, r.code, r.err)
	assert.Contains(t, r.err, db+": in use, skipped: changed since it was planned (modified ")
	before := dumpSHA(t, db)

	r = runCLI(t, env, "", "fix", "--plan-out", plan, db)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Equal(t, before, dumpSHA(t, db))
	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", filepath.Join(t.TempDir(), "s"), "--plan", plan)
	require.Equal(t, exitcode.OK, r.code, r.err)
	require.Equal(t, exitcode.OK, runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", filepath.Join(t.TempDir(), "s2"), refDB).code)
	assert.Equal(t, dumpSHA(t, refDB), dumpSHA(t, db), "rewritten as planned")
	assert.NotEqual(t, before, dumpSHA(t, db))
}

// selectable is the --agent ids as CheckAgent lists them, from agent/all (a test that spells
// them out breaks when an agent is added).
func selectable() string {
	var ids []string
	for _, id := range all.Selectable() {
		ids = append(ids, string(id))
	}
	return strings.Join(ids, ", ")
}
