package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/mcpname"
)

type cliResult struct {
	out, err string
	code     int
}

// runCLI runs sessionfix in-process with injected streams; stdin is in.
func runCLI(t testing.TB, env *Env, in string, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	e := *env
	e.In, e.Out, e.Err = strings.NewReader(in), &out, &errb
	code := run(context.Background(), append([]string{"sessionfix"}, args...), &e)
	return cliResult{out.String(), errb.String(), code}
}

func testEnv(t testing.TB) *Env {
	home := t.TempDir()
	return &Env{
		Getenv: func(k string) string {
			if k == "XDG_STATE_HOME" {
				return filepath.Join(home, "state")
			}
			return ""
		},
		Home: home,
		Now:  func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) },
	}
}

// copyTree copies a fixture directory and gives every file a distinct old mtime.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	i := 0
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(target, b, 0o640))
		i++
		mt := time.Date(2026, 1, i, 8, 30, 0, 987654321, time.UTC)
		return os.Chtimes(target, mt, mt)
	}))
}

type fileState struct {
	sum   string
	mode  fs.FileMode
	mtime time.Time
}

func snapshotTree(t testing.TB, root string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		fi, _ := d.Info()
		s := sha256.Sum256(b)
		out[p] = fileState{hex.EncodeToString(s[:]), fi.Mode(), fi.ModTime()}
		return nil
	}))
	return out
}

func fixtureCopy(t testing.TB) string {
	dir := filepath.Join(t.TempDir(), "dot-qwen")
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", dir)
	return dir
}

func TestNamesReproducesEveryVector(t *testing.T) {
	vec, err := os.ReadFile("../../fixtures/vectors/qwen-names.jsonl")
	require.NoError(t, err)
	// Input: one JSON string per line (the raw column), as support engineers would pipe it.
	var in strings.Builder
	var want []map[string]string
	sc := bufio.NewScanner(bytes.NewReader(vec))
	for sc.Scan() {
		var row map[string]string
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row))
		want = append(want, row)
		b, _ := json.Marshal(row["raw"])
		in.Write(b)
		in.WriteByte('\n')
	}
	require.Len(t, want, 2283)
	for _, input := range []string{in.String(), string(vec)} { // strings, and the vector objects themselves
		r := runCLI(t, testEnv(t), input, "names", "--stdin", "--json", "--format", "jsonl")
		require.Equal(t, 0, r.code, r.err)
		lines := strings.Split(strings.TrimSuffix(r.out, "\n"), "\n")
		require.Len(t, lines, len(want))
		for i, l := range lines {
			var got map[string]string
			require.NoError(t, json.Unmarshal([]byte(l), &got), l)
			keys := make([]string, 0, len(got))
			for k := range got {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			require.Equal(t, []string{"class", "legacy", "mcp_normalized", "normalized", "raw"}, keys)
			for _, k := range []string{"raw", "normalized", "mcp_normalized", "legacy"} {
				require.Equal(t, want[i][k], got[k], "row %d key %s", i+1, k)
			}
			require.Equal(t, string(mcpname.Classify(want[i]["raw"], nil).Class), got["class"])
		}
	}
}

func TestNamesBadInputAndUsage(t *testing.T) {
	r := runCLI(t, testEnv(t), "\"mcp__a.b__c\"\nnot json\n\"\\ud800x\"\n", "names", "--stdin", "--json", "--format", "jsonl")
	assert.Equal(t, exitcode.Partial, r.code)
	assert.Contains(t, r.err, "standard input line 2")
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	require.Len(t, lines, 2, "the other lines are still answered")
	assert.Contains(t, lines[1], `"raw":"\ud800x"`, "a lone surrogate survives exactly")

	assert.Equal(t, exitcode.Usage, runCLI(t, testEnv(t), "", "names").code)
	assert.Equal(t, exitcode.Usage, runCLI(t, testEnv(t), "", "names", "--format", "xml", "a").code)
	assert.Equal(t, exitcode.Usage, runCLI(t, testEnv(t), "", "names", "--nope").code)
	r = runCLI(t, testEnv(t), "", "names", "mcp__lit__literature.search_pubmed")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.out, "mcp__lit__literature_search_pubmed_1nv53db")
}

// nameToken matches a JSON string token starting with mcp__ (escapes included).
var nameToken = regexp.MustCompile(`"mcp__(?:[^"\\]|\\.)*"`)

// maskNames replaces every mcp__ string token by a placeholder and returns the tokens in order.
func maskNames(b []byte) ([]byte, []string) {
	var toks []string
	masked := nameToken.ReplaceAllFunc(b, func(m []byte) []byte {
		var s string
		if err := json.Unmarshal(m, &s); err != nil {
			panic(err)
		}
		toks = append(toks, s)
		return []byte(`"<NAME>"`)
	})
	return masked, toks
}

// TestFixAcceptance runs the acceptance of the core issue on a copy of the real fixtures:
// dry-run changes no byte; apply rewrites exactly the names whose normalizeMcp differs and
// nothing else; a second apply has nothing to do; undo restores sha256, mode and mtime.
func TestFixAcceptance(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	state := filepath.Join(t.TempDir(), "S")
	orig := snapshotTree(t, dir)
	origBytes := map[string][]byte{}
	for p := range orig {
		origBytes[p], _ = os.ReadFile(p)
	}

	r := runCLI(t, env, "", "fix", dir)
	require.Equal(t, 0, r.code, r.err)
	assert.Contains(t, r.out, "would rewrite 35 names in 3 files; 7 legacy truncated names kept")
	assert.Equal(t, orig, snapshotTree(t, dir), "dry-run changes no byte, mode or mtime")

	r = runCLI(t, env, "", "fix", "--apply", dir)
	assert.Equal(t, exitcode.Usage, r.code, "non-interactive --apply needs --yes")
	assert.Equal(t, orig, snapshotTree(t, dir))

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, "rewrote 35 names in 3 files; 7 legacy truncated names kept")
	after := snapshotTree(t, dir)
	changed := 0
	for p, st := range orig {
		nb, _ := os.ReadFile(p)
		om, otoks := maskNames(origBytes[p])
		nm, ntoks := maskNames(nb)
		require.Equal(t, string(om), string(nm), "%s: every byte outside the names is identical", p)
		require.Len(t, ntoks, len(otoks))
		for i := range otoks {
			require.Equal(t, mcpname.NormalizeMcp(otoks[i]), ntoks[i], "%s token %d", p, i)
		}
		assert.Equal(t, st.mode, after[p].mode)
		assert.Equal(t, st.mtime, after[p].mtime, "%s: mtime kept", p)
		if st.sum != after[p].sum {
			changed++
		}
	}
	assert.Equal(t, 3, changed)

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	require.Equal(t, 0, r.code, r.err)
	assert.Contains(t, r.out, "nothing to change")
	runs, _ := os.ReadDir(filepath.Join(state, "runs"))
	assert.Len(t, runs, 1, "a second apply creates no run")

	r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, "restored 3 files")
	assert.Equal(t, orig, snapshotTree(t, dir), "undo restores sha256, mode and mtime")

	// Nothing to undo is one answer, exit 0, whichever way the run is named (issue 8 item 8).
	r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
	assert.Equal(t, exitcode.OK, r.code, "nothing left to undo: %s", r.err)
	assert.Equal(t, "nothing to undo: no run in "+state+" has changes left to undo (sessionfix runs lists the runs)\n", r.out)
	assert.Empty(t, r.err)
	r = runCLI(t, env, "", "undo", "--state-dir", state, runs[0].Name())
	assert.Equal(t, exitcode.OK, r.code)
	assert.Regexp(t, `^nothing to undo: run `+runs[0].Name()+` was already undone at 2026-11-30 12:00:00Z\n$`, r.out)
	assert.Empty(t, r.err)
	r = runCLI(t, env, "", "undo", "--last", "--state-dir", filepath.Join(t.TempDir(), "never-used"))
	assert.Equal(t, exitcode.OK, r.code, "no run ever recorded: %s", r.err)
	assert.Contains(t, r.out, "nothing to undo: no run in ")
	r = runCLI(t, env, "", "undo", "--state-dir", state, "20990101T000000Z-zzzz")
	assert.Equal(t, exitcode.Error, r.code, "a run id that names no run is an error")
	assert.Contains(t, r.err, `no such run: "20990101T000000Z-zzzz"`)
}

// TestFixSkipsFileAppendedDuringApply: an agent appending to a session while fix --apply runs
// gets its file skipped and reported (exit 4), the appended line survives, the rest is fixed.
func TestFixSkipsFileAppendedDuringApply(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	state := filepath.Join(t.TempDir(), "S")
	target := filepath.Join(dir, "projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl")
	before, _ := os.ReadFile(target)
	line := `{"uuid":"new","type":"user","message":{"role":"user","parts":[{"text":"appended while fixing"}]}}` + "\n"
	env.beforeCheck = func(path string) {
		if path == target {
			f, err := os.OpenFile(target, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, _ = f.WriteString(line)
			f.Close()
		}
	}
	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	assert.Equal(t, exitcode.InUse, r.code, r.out+r.err)
	assert.Contains(t, r.err, "in use, skipped")
	assert.Contains(t, r.out, "rewrote 20 names in 2 files")
	got, _ := os.ReadFile(target)
	assert.Equal(t, string(before)+line, string(got), "untouched, with the appended line")

	// The next run picks the file up.
	env.beforeCheck = nil
	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	assert.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, "rewrote 15 names in 1 file")
	got, _ = os.ReadFile(target)
	assert.True(t, strings.HasSuffix(string(got), line))
}

func TestScanOutputsAndExitCodes(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	r := runCLI(t, env, "", "scan", "--format", "json", dir)
	require.Equal(t, 0, r.code, r.err)
	var rep struct {
		Totals struct {
			Stores  int `json:"stores"`
			Rewrite int `json:"rewrite"`
		} `json:"totals"`
		Classes map[string]int `json:"classes"`
		Renames []struct {
			Old, New string
			Count    int
		} `json:"renames"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.out), &rep))
	assert.Equal(t, 4, rep.Totals.Stores)
	assert.Equal(t, 35, rep.Totals.Rewrite)
	assert.Equal(t, 28, rep.Classes["legacy-dotted"])
	assert.Equal(t, 7, rep.Classes["legacy-truncated-dotted"])
	assert.Equal(t, 7, rep.Classes["legacy-truncated"])
	require.Len(t, rep.Renames, 5)

	// Default root from $QWEN_HOME.
	env.Getenv = func(k string) string {
		if k == "QWEN_HOME" {
			return dir
		}
		return ""
	}
	r = runCLI(t, env, "", "scan")
	require.Equal(t, 0, r.code, r.err)
	assert.Contains(t, r.out, "scanned 4 stores")

	// A missing path and an unreadable file: listed, exit 3, the rest still scanned.
	bad := filepath.Join(dir, "projects/-home-demo-src-api/chats/50bcb974-4071-429f-a75f-7496ad5cddee.jsonl")
	require.NoError(t, os.Chmod(bad, 0o000))
	defer os.Chmod(bad, 0o640)
	r = runCLI(t, testEnv(t), "", "scan", dir, filepath.Join(dir, "nope"))
	if os.Geteuid() != 0 {
		assert.Contains(t, r.err, "50bcb974")
	}
	assert.Equal(t, exitcode.Partial, r.code)
	assert.Contains(t, r.err, "nope: error")

	r = runCLI(t, testEnv(t), "", "scan", dir, "--format", "json")
	assert.Equal(t, exitcode.Usage, r.code)
	assert.Contains(t, r.err, "put flags first (sessionfix scan [flags] [PATH...])")
}

func TestFixKeepTruncatedAndLossy(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	r := runCLI(t, env, "", "fix", "--keep-truncated", "--format", "json", dir)
	require.Equal(t, 0, r.code, r.err)
	var rep struct {
		Totals struct {
			Rewrite int `json:"rewrite"`
			Kept    int `json:"kept"`
		} `json:"totals"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.out), &rep))
	assert.Equal(t, 28, rep.Totals.Rewrite)
	assert.Equal(t, 14, rep.Totals.Kept)

	inv := filepath.Join(t.TempDir(), "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers":{"lit":{"tools":["literature.search_pubmed","literature_search_pubmed","get+data","get_data_for_a_specific_location_and_date_range_extended","搜索文献","ok_tool"]},"foo.bar":{"tools":["get_data","deploy.prod"]},"com.example.enterprise-search":{"tools":["query_documents_by_semantic_similarity","list"]}}}`), 0o600))
	r = runCLI(t, env, "", "fix", "--rewrite-lossy", dir)
	assert.Equal(t, exitcode.Usage, r.code, "--rewrite-lossy needs --inventory")
	r = runCLI(t, env, "", "fix", "--inventory", inv, "--rewrite-lossy", dir)
	require.Equal(t, 0, r.code, r.err)
	assert.Contains(t, r.out, "mcp__lit__get_data_0kcpus5")
	assert.Contains(t, r.out, "mcp__lit_______0s19gpv")
	assert.Contains(t, r.out, "lossy-legacy")
}

func TestFixJSONAndInteractiveConfirm(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	state := filepath.Join(t.TempDir(), "S")
	for _, args := range [][]string{{"fix", "--format", "json", dir}, {"fix", "--verbose", "--format", "json", dir}} {
		r := runCLI(t, env, "", args...)
		require.Equal(t, 0, r.code, r.err)
		var doc struct {
			Mode   string `json:"mode"`
			Stores []struct {
				Path      string `json:"path"`
				Decisions []struct{ Old, New, Action string }
			} `json:"stores"`
			Summary string                `json:"summary"`
			Totals  struct{ Rewrite int } `json:"totals"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.out), &doc), r.out)
		assert.Equal(t, "dry-run", doc.Mode)
		assert.Equal(t, 35, doc.Totals.Rewrite)
		assert.NotEmpty(t, doc.Stores)
	}

	// Interactive: "n" changes nothing, "y" applies.
	before := snapshotTree(t, dir)
	env.InTerminal = true
	r := runCLI(t, env, "n\n", "fix", "--apply", "--state-dir", state, dir)
	require.Equal(t, exitcode.Declined, r.code, "declining has its own code (issue 8 item 9): %s", r.err)
	assert.True(t, strings.HasSuffix(r.err, "[y/N] nothing was changed\n"), r.err)
	assert.Equal(t, before, snapshotTree(t, dir))
	r = runCLI(t, env, "y\n", "fix", "--apply", "--state-dir", state, "--format", "json", dir)
	require.Equal(t, 0, r.code, r.err)
	var doc struct {
		Mode    string `json:"mode"`
		RunID   string `json:"run_id"`
		Summary string `json:"summary"`
	}
	// The plan is printed as text before the prompt; the JSON document follows it.
	i := strings.Index(r.out, `{"mode":"apply"`)
	require.GreaterOrEqual(t, i, 0, r.out)
	require.NoError(t, json.Unmarshal([]byte(r.out[i:]), &doc), r.out[i:])
	assert.Equal(t, "rewrote 35 names in 3 files; 7 legacy truncated names kept", doc.Summary)
	assert.NotEmpty(t, doc.RunID)
}

func TestFixLeavesInvalidUTF8FileAlone(t *testing.T) {
	env := testEnv(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl")
	content := `{"message":{"parts":[{"functionCall":{"name":"mcp__a.b__c"}}]}}` + "\n" + "{\"x\":\"\xff\"}\n"
	require.NoError(t, os.WriteFile(bad, []byte(content), 0o600))
	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", filepath.Join(dir, "S"), dir)
	assert.Equal(t, exitcode.Partial, r.code, r.out)
	assert.Contains(t, r.out, "invalid UTF-8")
	assert.Contains(t, r.out, "not rewritten")
	got, _ := os.ReadFile(bad)
	assert.Equal(t, content, string(got))
	_, err := os.Stat(filepath.Join(dir, "S"))
	assert.ErrorIs(t, err, os.ErrNotExist, "no run is created when nothing can be written")
}

func TestDiscoveryEdgeCases(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	// The default state dir lives inside the scanned tree (HOME=tree): a first run's backups
	// must never be read as stores by a second run.
	env.Home = filepath.Dir(dir)
	env.Getenv = func(string) string { return "" }
	r := runCLI(t, env, "", "fix", "--apply", "--yes", env.Home)
	require.Equal(t, 0, r.code, r.out+r.err)
	r = runCLI(t, env, "", "scan", "--format", "json", env.Home)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, "sessionfix's state directory")
	assert.NotContains(t, r.out, "/backups/0")
	r = runCLI(t, env, "", "undo", "--last")
	require.Equal(t, 0, r.code, r.out+r.err)

	// The same tree given twice is read once; a non-UUID *.jsonl in chats/ is a session; a
	// FIFO named explicitly is refused (not opened); a leftover temp is named.
	extra := filepath.Join(dir, "projects/-home-demo-src-api/chats/notauuid.jsonl")
	require.NoError(t, os.WriteFile(extra, []byte(`{"message":{"parts":[{"functionCall":{"name":"mcp__a.b__c"}}]}}`+"\n"), 0o600))
	tmp := filepath.Join(dir, "projects/-home-demo-src-api/chats/.notauuid.jsonl4711")
	require.NoError(t, os.WriteFile(tmp, []byte("x"), 0o600))
	fifo := filepath.Join(t.TempDir(), "f.jsonl")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	rel, err := filepath.Rel(mustGetwd(t), dir)
	require.NoError(t, err)
	r = runCLI(t, testEnv(t), "", "scan", "--format", "json", dir, rel, filepath.Join(dir, "usage_record.jsonl"), fifo)
	assert.Equal(t, exitcode.Partial, r.code)
	var rep scanReport
	require.NoError(t, json.Unmarshal([]byte(r.out), &rep), r.out)
	assert.Len(t, rep.Stores, 5, "4 fixture stores + chats/notauuid.jsonl, each once")
	var reasons []string
	for _, p := range rep.Problems {
		reasons = append(reasons, filepath.Base(p.Path)+": "+p.Reason)
	}
	assert.Contains(t, strings.Join(reasons, "\n"), "f.jsonl: not a regular file")
	assert.Contains(t, strings.Join(reasons, "\n"), ".notauuid.jsonl4711: left over by an interrupted sessionfix run")
}

func TestUndoFromAnotherDirectory(t *testing.T) {
	env := testEnv(t)
	work := t.TempDir()
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", filepath.Join(work, "dot-qwen"))
	orig := snapshotTree(t, filepath.Join(work, "dot-qwen"))
	t.Chdir(work)
	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", "st", "dot-qwen")
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, "undo with: sessionfix undo --state-dir "+filepath.Join(work, "st"))
	t.Chdir(t.TempDir())
	r = runCLI(t, env, "", "undo", "--last", "--state-dir", filepath.Join(work, "st"))
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Equal(t, orig, snapshotTree(t, filepath.Join(work, "dot-qwen")))
}

func mustGetwd(t testing.TB) string {
	wd, err := os.Getwd()
	require.NoError(t, err)
	return wd
}

func TestInterruptedRunKeepsJSONValid(t *testing.T) {
	dir := fixtureCopy(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	e := *testEnv(t)
	e.In, e.Out, e.Err = strings.NewReader(""), &out, &errb
	code := run(ctx, []string{"sessionfix", "fix", "--apply", "--yes", "--format", "json", "--state-dir", filepath.Join(t.TempDir(), "S"), dir}, &e)
	assert.Equal(t, exitcode.Interrupted, code, "an interrupted run exits 130, the shell's convention")
	var doc map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc), out.String())
	assert.Equal(t, "interrupted", doc["error"])
	assert.Contains(t, errb.String(), "interrupted")

	if os.Geteuid() != 0 {
		ro := t.TempDir()
		require.NoError(t, os.Chmod(ro, 0o500))
		r := runCLI(t, testEnv(t), "", "fix", "--apply", "--yes", "--format", "json", "--state-dir", filepath.Join(ro, "S"), dir)
		assert.Equal(t, exitcode.Error, r.code)
		assert.Contains(t, r.err, "not writable (nothing was changed)")
	}
}

func TestNamesInputHygiene(t *testing.T) {
	// A BOM is not part of the first name; invalid UTF-8 is reported, not silently replaced.
	r := runCLI(t, testEnv(t), "\uFEFFmcp__a.b__c\nmcp__x\xff__y\nread_file\n", "names", "--stdin", "--format", "json")
	assert.Equal(t, exitcode.Partial, r.code)
	assert.Contains(t, r.err, "standard input line 2: invalid UTF-8")
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], `"raw":"mcp__a.b__c","class":"legacy-dotted"`)

	inv := filepath.Join(t.TempDir(), "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers":{"lit":{"tools":["literature.search_pubmed","get+data"]}}}`), 0o600))
	r = runCLI(t, testEnv(t), "", "names", "--inventory", inv, "--format", "jsonl", "mcp__lit__literature_search_pubmed_1nv53db", "mcp__lit__get_data")
	require.Equal(t, 0, r.code, r.err)
	assert.Contains(t, r.out, `"class":"normalized"`)
	assert.Contains(t, r.out, `"class":"lossy-legacy"`)
}

func TestLoneSurrogatesStayExactInOutput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chats")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte(
		`{"message":{"parts":[{"functionCall":{"name":"mcp__lit__x\ud800y"}}]}}`+"\n"+
			`{"message":{"parts":[{"functionCall":{"name":"mcp__lit__x\udc00y"}}]}}`+"\n"), 0o600))
	r := runCLI(t, testEnv(t), "", "fix", "--format", "json", dir)
	require.Equal(t, 0, r.code, r.err)
	assert.Contains(t, r.out, `"old":"mcp__lit__x\ud800y"`, "a JSON escape JSON.parse turns back into the same unit")
	assert.Contains(t, r.out, `"old":"mcp__lit__x\udc00y"`)
	r = runCLI(t, testEnv(t), "", "scan", dir)
	assert.Contains(t, r.out, `mcp__lit__x\ud800y`)
	assert.Contains(t, r.out, `mcp__lit__x\udc00y`)
}

// TestTuneGC: GOGC 200 and a 256 MiB soft limit unless the environment sets GOGC (then GOGC is
// left alone) or GOMEMLIMIT (then both are: the runtime's own reading of them stands).
func TestTuneGC(t *testing.T) {
	prevPercent := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	})
	env := func(vars map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}

	p, l := tuneGC(env(nil))
	assert.Equal(t, 200, p)
	assert.Equal(t, int64(40<<20), l)
	assert.Equal(t, 200, debug.SetGCPercent(100), "GOGC 200 was set")
	assert.Equal(t, int64(40<<20), debug.SetMemoryLimit(math.MaxInt64), "the limit was set")

	p, l = tuneGC(env(map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}))
	assert.Equal(t, -1, p)
	assert.Equal(t, int64(-1), l)
	assert.Equal(t, 100, debug.SetGCPercent(100), "GOGC from the environment is left alone")
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(math.MaxInt64), "GOMEMLIMIT from the environment is left alone")

	p, l = tuneGC(env(map[string]string{"GOMEMLIMIT": "off"}))
	assert.Equal(t, -1, p, "a memory limit set by the user leaves GOGC at the runtime's")
	assert.Equal(t, int64(-1), l)
	assert.Equal(t, 100, debug.SetGCPercent(100))

	p, l = tuneGC(env(map[string]string{"GOGC": "100"}))
	assert.Equal(t, -1, p)
	assert.Equal(t, int64(40<<20), l, "GOGC alone still gets the limit")
}
