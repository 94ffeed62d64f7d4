package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/reports"
)

// TestLabelsReadAsEnglish: issue 8 item 17, the labels of scan and fix.
func TestLabelsReadAsEnglish(t *testing.T) {
	env := testEnv(t)

	t.Run("one other file", func(t *testing.T) {
		dir := fixtureCopy(t) // usage/token-usage-2026-11.jsonl is not a store
		r := runCLI(t, env, "", "scan", "--format", "json", dir)
		var rep struct {
			Ignored int `json:"ignored_files"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.out), &rep), r.out)
		require.Equal(t, 1, rep.Ignored)
		r = runCLI(t, env, "", "scan", dir)
		assert.Contains(t, r.out, "\n1 other file is not a store and was not read (--format json lists them)\n")
		assert.NotContains(t, r.out, "1 other files")
	})

	t.Run("a database is named by its profile and counted as a database", func(t *testing.T) {
		dir, _ := opencodeStore(t)
		r := runCLI(t, env, "", "scan", dir)
		require.Equal(t, 0, r.code, r.out+r.err)
		assert.Regexp(t, `opencode\.db +opencode +\d+`, r.out)
		assert.NotContains(t, r.out, " sqlite ")
		assert.Contains(t, r.out, "would rewrite 11 names in 1 database;")

		r = runCLI(t, env, "", "fix", dir)
		assert.Contains(t, r.out, "opencode.db (opencode)\n")
		assert.Regexp(t, `\n  ROW +SITE +OLD +NEW +CLASS\n`, r.out)
		assert.Contains(t, r.out, "would rewrite 11 names in 1 database;")

		r = runCLI(t, env, "", "fix", "--format", "json", dir)
		var plan struct {
			Stores []struct {
				Kind, Profile string
				Decisions     []map[string]any
			}
		}
		require.NoError(t, json.Unmarshal([]byte(r.out), &plan), r.out)
		require.Len(t, plan.Stores, 1)
		assert.Equal(t, "sqlite", plan.Stores[0].Kind, "the kind stays (manifests, scripts)")
		assert.Equal(t, "opencode", plan.Stores[0].Profile)
		d := plan.Stores[0].Decisions[0]
		assert.Equal(t, "event id=evt_legacy00000000000000000001", d["row"])
		assert.Nil(t, d["line"])
		assert.IsType(t, float64(0), d["offset"])

		state := filepath.Join(t.TempDir(), "S")
		r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
		require.Equal(t, 0, r.code, r.out+r.err)
		assert.Contains(t, r.out, "rewrote 11 names in 1 database;")

		r = runCLI(t, env, "", "undo", "--state-dir", state, "--last")
		require.Equal(t, 0, r.code, r.out+r.err)
		assert.Contains(t, r.out, ": 1 database to restore\n")
		assert.Contains(t, r.out, "restored 1 database of run ")
	})

	t.Run("where is a line number, in the header and as a JSON number", func(t *testing.T) {
		dir := fixtureCopy(t)
		r := runCLI(t, env, "", "fix", dir)
		assert.Regexp(t, `\n  LINE +SITE +OLD +NEW +CLASS\n`, r.out)
		assert.NotContains(t, r.out, "WHERE")
		r = runCLI(t, env, "", "fix", "--format", "json", dir)
		var plan struct {
			Stores []struct{ Decisions []map[string]any }
		}
		require.NoError(t, json.Unmarshal([]byte(r.out), &plan), r.out)
		d := plan.Stores[0].Decisions[0]
		line, ok := d["line"].(float64)
		require.True(t, ok, "line is a number: %v", d)
		assert.Equal(t, d["where"], jsonNum(line), "where keeps the same text")
	})

	t.Run("a name without a dot is not called dotted", func(t *testing.T) {
		r := runCLI(t, env, "", "names", "mcp__文献__搜索", "mcp__foo.bar__x", "mcp__lit__"+strings.Repeat("x", 60))
		require.Equal(t, 0, r.code, r.err)
		assert.Regexp(t, `mcp__文献__搜索 +legacy-non-ascii `, r.out)
		assert.Regexp(t, `mcp__foo\.bar__x +legacy-dotted `, r.out)
		assert.Regexp(t, `x +legacy-over-long `, r.out)

		dir := t.TempDir()
		line := `{"uuid":"a","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"mcp__lit__搜索文献","args":{}}}]}}` + "\n"
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "projects", "p", "chats"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "projects", "p", "chats", "s.jsonl"), []byte(line), 0o644))
		r = runCLI(t, env, "", "scan", dir)
		require.Equal(t, 0, r.code, r.out+r.err)
		assert.Regexp(t, `\nlegacy-non-ascii +1 +rewrite to normalizeMcp`, r.out)
		assert.NotContains(t, r.out, "legacy-dotted")
		r = runCLI(t, env, "", "scan", "--format", "json", dir)
		assert.Contains(t, r.out, `"class": "legacy-dotted"`, "JSON keeps the machine class")
		assert.Contains(t, r.out, `"reasons": [`+"\n"+`        "non-ascii"`)
	})

	t.Run("a problem names its path once", func(t *testing.T) {
		dir := t.TempDir()
		bad := filepath.Join(dir, "b.db")
		require.NoError(t, os.WriteFile(bad, append([]byte("SQLite format 3\x00"), make([]byte, 4096)...), 0o644))
		r := runCLI(t, env, "", "scan", dir)
		all := r.out + r.err
		assert.Contains(t, all, bad+": error: ")
		assert.Equal(t, 1, strings.Count(all, bad), all)
	})

	t.Run("a settings parse error names its path once, with line and column", func(t *testing.T) {
		dir := t.TempDir()
		f := filepath.Join(dir, "settings.json")
		require.NoError(t, os.WriteFile(f, []byte(`{"permissions": {"allow": [`+"\n"), 0o644))
		r := runCLI(t, env, "", "scan", dir)
		all := r.out + r.err
		assert.Contains(t, all, f+":2:1: error: ")
		assert.Equal(t, 1, strings.Count(all, f), all)
	})

	t.Run("help texts", func(t *testing.T) {
		for _, cmd := range []string{"scan", "fix"} {
			r := runCLI(t, env, "", cmd, "--help")
			// laid out for 80 columns: the words, however the lines break
			assert.Contains(t, oneLine(r.out), "--workers value parallel readers (default: the number of CPUs, at most 8) ", cmd)
		}
		r := runCLI(t, env, "", "fix", "--help")
		assert.Contains(t, r.out, "hard link")
	})
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }

// largeHome builds a Qwen runtime directory of n sessions from the three real fixture sessions
// (copies under projects/p<i>/chats/) plus the fixture's usage_record.jsonl.
func largeHome(t testing.TB, n int) string {
	t.Helper()
	src := fixtureCopy(t)
	sessions, err := filepath.Glob(filepath.Join(src, "projects", "*", "chats", "*.jsonl"))
	require.NoError(t, err)
	require.Len(t, sessions, 3)
	dir := filepath.Join(t.TempDir(), "big")
	for i := range n {
		b, err := os.ReadFile(sessions[i%len(sessions)])
		require.NoError(t, err)
		chats := filepath.Join(dir, "projects", fmt.Sprintf("p%03d", i/10), "chats")
		require.NoError(t, os.MkdirAll(chats, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(chats, fmt.Sprintf("s%03d.jsonl", i)), b, 0o644))
	}
	b, err := os.ReadFile(filepath.Join(src, "usage_record.jsonl"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "usage_record.jsonl"), b, 0o644))
	return dir
}

func lineCount(s string) int { return strings.Count(s, "\n") }

// TestLargeHomeTextIsASummary: issue 8 item 14. 300 sessions printed 322 scan lines and 4,613
// fix lines (every store, every plan); now a summary of bounded size, the full lists with -v
// and in JSON.
func TestLargeHomeTextIsASummary(t *testing.T) {
	env := testEnv(t)
	dir := largeHome(t, 300)

	r := runCLI(t, env, "", "scan", dir)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Less(t, lineCount(r.out), 70, r.out)
	assert.Regexp(t, `\nqwen +qwen-session +300 +[0-9.]+ MiB +8600 +10600 +3000 +600 +0\n`, r.out)
	assert.Regexp(t, `\nqwen +qwen-usage +1 `, r.out)
	assert.Contains(t, r.out, "the 20 largest of 301 stores (-v or --format json lists every store):")
	assert.Regexp(t, `\nmcp__foo\.bar__get_data +mcp__foo_bar__get_data_0xybsnb +legacy-dotted +601\n`, r.out)
	assert.Regexp(t, `\nmcp__lit__get_data_for_a_spe___location_and_date_range_extended +legacy-truncated +601 +middle-truncated legacy name kept`, r.out)
	assert.Equal(t, 20, strings.Count(r.out, "/chats/s"), "20 stores listed")

	r = runCLI(t, env, "", "scan", "-v", dir)
	assert.Equal(t, 300, strings.Count(r.out, "/chats/s"), "-v lists every store")

	r = runCLI(t, env, "", "scan", "--format", "json", dir)
	var rep struct {
		Stores []struct{ Bytes int64 } `json:"stores"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.out), &rep))
	assert.Len(t, rep.Stores, 301)
	assert.Positive(t, rep.Stores[0].Bytes)

	r = runCLI(t, env, "", "fix", dir)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Less(t, lineCount(r.out), 70, r.out)
	assert.Contains(t, r.out, "301 stores: the plan of each store is not listed (-v lists it, --format json has it)")
	assert.Contains(t, r.out, "would rewrite 3005 names in 201 files;")
	assert.NotContains(t, r.out, "  LINE ")

	r = runCLI(t, env, "", "fix", "-v", dir)
	assert.Equal(t, 301, strings.Count(r.out, "  LINE "), "-v prints every plan")

	r = runCLI(t, env, "", "fix", "--format", "json", dir)
	var plan struct {
		Stores []struct{ Decisions []json.RawMessage } `json:"stores"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.out), &plan))
	assert.Len(t, plan.Stores, 201, "JSON has the plan of every store with a change")

	state := filepath.Join(t.TempDir(), "S")
	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Less(t, lineCount(r.out), 70, r.out)
	assert.Contains(t, r.out, "rewrote 3005 names in 201 files;")

	small := fixtureCopy(t)
	r = runCLI(t, env, "", "fix", small)
	assert.Contains(t, r.out, "  LINE ", "a small home still prints its plan")
}

// TestProgressBarByFileCountAndTime: issue 8 item 15. 5,000 small files showed no bar (only
// 64 MiB did), and --apply said "reading". The clock is injected: no test here waits.
func TestProgressBarByFileCountAndTime(t *testing.T) {
	big := largeHome(t, 300)
	env := testEnv(t)
	env.ErrTerminal = true

	r := runCLI(t, env, "", "scan", big)
	require.Equal(t, 0, r.code, r.err)
	assert.Contains(t, r.err, "reading ")
	assert.Regexp(t, `reading \d+/301 files`, r.err)

	state := filepath.Join(t.TempDir(), "S")
	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, big)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Regexp(t, `rewriting \d+/301 files`, r.err)
	assert.NotContains(t, r.err, "reading ")

	small := fixtureCopy(t)
	r = runCLI(t, env, "", "scan", small)
	assert.NotContains(t, r.err, "files", "a quick run over 4 files shows no bar")

	slow := *env
	tick := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	slow.Now = func() time.Time { tick = tick.Add(700 * time.Millisecond); return tick }
	r = runCLI(t, &slow, "", "scan", small)
	assert.Regexp(t, `reading \d+/4 files`, r.err, "a run that took over a second shows the bar")

	env.ErrTerminal = false
	r = runCLI(t, env, "", "scan", big)
	assert.Empty(t, r.err, "never without a terminal")
}

// TestNamesShowsWhatRewriteLossyWrites and undo --format json: issue 8 item 18.
func TestNamesShowsWhatRewriteLossyWrites(t *testing.T) {
	env := testEnv(t)
	inv := filepath.Join(t.TempDir(), "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers":{"lit":{"tools":["get+data","literature.search_pubmed"]}}}`), 0o644))
	r := runCLI(t, env, "", "names", "--inventory", inv, "mcp__lit__get_data", "mcp__lit__x")
	require.Equal(t, 0, r.code, r.err)
	assert.Regexp(t, `mcp__lit__get_data +lossy-legacy `, r.out)
	assert.Contains(t, r.out, "note: mcp__lit__get_data: lossy legacy spelling of mcp__lit__get+data; fix keeps it, fix --rewrite-lossy writes mcp__lit__get_data_0kcpus5\n")
	assert.Equal(t, 1, strings.Count(r.out, "note:"), "only the lossy name gets a note")

	r = runCLI(t, env, "", "names", "--format", "jsonl", "--inventory", inv, "mcp__lit__get_data")
	assert.Equal(t, `{"raw":"mcp__lit__get_data","class":"lossy-legacy","normalized":"mcp__lit__get_data","mcp_normalized":"mcp__lit__get_data","legacy":"mcp__lit__get_data","owner":"mcp__lit__get+data","rewrite_lossy":"mcp__lit__get_data_0kcpus5"}`+"\n", r.out)

	// What fix --rewrite-lossy really writes is that name.
	dir := t.TempDir()
	chats := filepath.Join(dir, "projects", "p", "chats")
	require.NoError(t, os.MkdirAll(chats, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(chats, "s.jsonl"), []byte(`{"uuid":"a","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"mcp__lit__get_data","args":{}}}]}}`+"\n"), 0o644))
	r = runCLI(t, env, "", "fix", "--inventory", inv, "--rewrite-lossy", dir)
	assert.Regexp(t, `mcp__lit__get_data +mcp__lit__get_data_0kcpus5 +lossy-legacy`, r.out)
}

func TestUndoFormatJSON(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	state := filepath.Join(t.TempDir(), "S")
	type report struct {
		RunID         string `json:"run_id"`
		RunDir        string `json:"run_dir"`
		AlreadyUndone bool   `json:"already_undone"`
		Files         []struct {
			Path, Kind, Status string
			Names              int
		} `json:"files"`
		Restored    int    `json:"restored"`
		NotRestored int    `json:"not_restored"`
		Summary     string `json:"summary"`
		Error       string `json:"error"`
	}

	r := runCLI(t, env, "", "undo", "--format", "json", "--state-dir", state, "20990101T000000Z-zzzz")
	assert.NotEqual(t, 0, r.code)
	var none report
	require.NoError(t, json.Unmarshal([]byte(r.out), &none), "an undo that cannot run still closes its JSON: %q", r.out)
	assert.NotEmpty(t, none.Error)

	r = runCLI(t, env, "", "undo", "--format", "json", "--state-dir", state, "--last")
	assert.Equal(t, exitcode.OK, r.code, "nothing to undo is not a failure")
	var nothing report
	require.NoError(t, json.Unmarshal([]byte(r.out), &nothing), r.out)
	assert.Empty(t, nothing.Error)
	assert.Contains(t, nothing.Summary, "nothing to undo: no run in ")

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	require.Equal(t, 0, r.code, r.out+r.err)

	r = runCLI(t, env, "", "undo", "--format", "json", "--state-dir", state, "--last")
	require.Equal(t, 0, r.code, r.out+r.err)
	var rep report
	require.NoError(t, json.Unmarshal([]byte(r.out), &rep), r.out)
	assert.NotEmpty(t, rep.RunID)
	assert.Equal(t, 3, rep.Restored)
	assert.Equal(t, 0, rep.NotRestored)
	require.Len(t, rep.Files, 3)
	for _, f := range rep.Files {
		assert.Equal(t, "restored", f.Status, f.Path)
		assert.Positive(t, f.Names)
	}
	assert.Equal(t, "restored 3 files of run "+rep.RunID, rep.Summary)
	assert.Empty(t, rep.Error)

	r = runCLI(t, env, "", "undo", "--format", "json", "--state-dir", state, rep.RunID)
	var again report
	require.NoError(t, json.Unmarshal([]byte(r.out), &again), r.out)
	assert.True(t, again.AlreadyUndone)
	assert.Equal(t, rep.RunID, again.RunID)
}

// TestLargeHomeWithFewChangesListsThem: 300 sessions of which only 2 need a rewrite still
// print those 2 plans (with where each name is), then the summary.
func TestLargeHomeWithFewChangesListsThem(t *testing.T) {
	src := fixtureCopy(t)
	clean, err := os.ReadFile(filepath.Join(src, "projects", "-home-demo-src-lab", "chats", "6c420482-9bae-4f87-8e2a-2bb4c3936481.jsonl"))
	require.NoError(t, err)
	dirty, err := os.ReadFile(filepath.Join(src, "projects", "-home-demo-src-api", "chats", "50bcb974-4071-429f-a75f-7496ad5cddee.jsonl"))
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "home")
	chats := filepath.Join(dir, "projects", "p", "chats")
	require.NoError(t, os.MkdirAll(chats, 0o755))
	for i := range 300 {
		b := clean
		if i == 7 || i == 200 {
			b = dirty
		}
		require.NoError(t, os.WriteFile(filepath.Join(chats, fmt.Sprintf("s%03d.jsonl", i)), b, 0o644))
	}
	r := runCLI(t, testEnv(t), "", "fix", dir)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Equal(t, 2, strings.Count(r.out, "  LINE "), r.out)
	assert.Contains(t, r.out, "s007.jsonl (qwen-session)\n")
	assert.Contains(t, r.out, "s200.jsonl (qwen-session)\n")
	assert.NotContains(t, r.out, "is not listed")
	assert.Contains(t, r.out, "stores by agent and kind:")
	assert.Less(t, lineCount(r.out), 100)
}

// TestPlanAlignsCJKNames: issue 8 item 16 end to end — the NEW column of a plan starts at the
// same terminal cell in a row with a CJK name as in an ASCII row.
func TestPlanAlignsCJKNames(t *testing.T) {
	dir := t.TempDir()
	chats := filepath.Join(dir, "projects", "p", "chats")
	require.NoError(t, os.MkdirAll(chats, 0o755))
	rec := func(id, name string) string {
		return `{"uuid":"` + id + `","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"id":"` + id + `","name":"` + name + `","args":{}}}]}}` + "\n"
	}
	require.NoError(t, os.WriteFile(filepath.Join(chats, "s.jsonl"), []byte(rec("a", "mcp__lit__搜索文献.v2")+rec("b", "mcp__lit__literature.search")), 0o644))
	r := runCLI(t, testEnv(t), "", "fix", dir)
	require.Equal(t, 0, r.code, r.out+r.err)
	var cols []int
	for _, line := range strings.Split(r.out, "\n") {
		for _, n := range []string{"mcp__lit_______v2_", "mcp__lit__literature_search_"} {
			if i := strings.Index(line, n); i >= 0 && strings.Contains(line, " call ") {
				cols = append(cols, reports.DisplayWidth(line[:i]))
			}
		}
	}
	require.Len(t, cols, 2, r.out)
	assert.Equal(t, cols[0], cols[1], "NEW column aligned:\n%s", r.out)
}

// TestSkippedLineNamesThePathOnce: "DB: in use, skipped: DB: store is in use…" named the
// database twice (seen in make demo); the reason loses its own path (issue 8 item 17).
func TestSkippedLineNamesThePathOnce(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	target := filepath.Join(dir, "projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl")
	env.beforeCheck = func(path string) {
		if path == target {
			f, err := os.OpenFile(target, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, _ = f.WriteString(`{"uuid":"new","type":"user","message":{"role":"user","parts":[{"text":"x"}]}}` + "\n")
			f.Close()
		}
	}
	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", filepath.Join(t.TempDir(), "S"), dir)
	require.Equal(t, exitcode.InUse, r.code, r.out+r.err)
	var line string
	for _, l := range strings.Split(r.err, "\n") {
		if strings.Contains(l, "in use, skipped") {
			line = l
		}
	}
	require.NotEmpty(t, line, r.err)
	assert.True(t, strings.HasPrefix(line, target+": in use, skipped: "), line)
	assert.Equal(t, 1, strings.Count(line, target), line)
}
