package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sessionfix/sessionfix/pipeline/report"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/reports"

	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
)

// checkJSON runs check --format json and decodes it.
func checkJSON(t *testing.T, env *Env, args ...string) (report.CheckReport, cliResult) {
	t.Helper()
	r := runCLI(t, env, "", append([]string{"check", "--format", "json"}, args...)...)
	var rep report.CheckReport
	require.NoError(t, json.Unmarshal([]byte(r.out), &rep), r.out+r.err)
	return rep, r
}

// byProvider is rejects (now, after fix) per provider ID.
func byProvider(rep report.CheckReport) map[string][2]int {
	out := map[string][2]int{}
	for _, p := range rep.Providers {
		out[p.ID] = [2]int{p.Now, p.AfterFix}
	}
	return out
}

func TestCheckQwenReal(t *testing.T) {
	env := testEnv(t)
	home := t.TempDir()
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", home)
	rep, r := checkJSON(t, env, "--provider", "all", home)
	require.Equal(t, exitcode.Finding, r.code, r.err)
	assert.Equal(t, 4, rep.Stores)
	assert.Equal(t, 64, rep.Checked)
	assert.Equal(t, map[string]int{"bridge": 10, "telemetry": 32, "usage-key": 20}, rep.Skipped)
	assert.Equal(t, 20, rep.Rejected)
	assert.Equal(t, 5, rep.Distinct)
	assert.Equal(t, 0, rep.RejectedAfterFix)
	strict := [2]int{20, 0}
	assert.Equal(t, map[string][2]int{"openai-chat": strict, "openai-responses": strict, "anthropic": strict, "bedrock": strict,
		"gemini": {0, 0}, "deepseek": strict, "dashscope": {0, 0}, "mistral": strict, "kimi": strict, "xai": {0, 0}}, byProvider(rep))
	// Per session and record: the dotted name of line 5 of the api session, and its repair.
	var f *report.CheckFinding
	for i := range rep.Findings {
		g := &rep.Findings[i]
		if strings.HasSuffix(g.Store, "50bcb974-4071-429f-a75f-7496ad5cddee.jsonl") && g.Line == 5 {
			f = g
		}
	}
	require.NotNil(t, f)
	assert.Equal(t, "mcp__foo.bar__get_data", f.Name)
	assert.Equal(t, "mcp__foo_bar__get_data_0xybsnb", f.After)
	assert.Equal(t, "rewrite", f.Action)
	assert.Empty(t, f.AfterFix)
	require.Len(t, f.Now, 7)
	assert.Equal(t, report.CheckRejection{Provider: "bedrock", Rules: []report.CheckRule{{Rule: "pattern", Detail: "does not match [a-zA-Z0-9_-]+"}}}, f.Now[3])

	// Text: per session, "would be rejected by X at line N", the rule and the error text.
	r = runCLI(t, env, "", "check", "--provider", "kimi,dashscope", home)
	require.Equal(t, exitcode.Finding, r.code)
	assert.Contains(t, r.out, "  mcp__foo.bar__get_data\n    would be rejected by kimi at line 3, line 5\n      kimi: pattern: does not match [A-Za-z0-9_-]+\n    after fix: mcp__foo_bar__get_data_0xybsnb passes every provider checked\n")
	assert.Contains(t, r.out, `kimi: "function name is invalid, must start with a letter and can contain letters, numbers, underscores, and dashes"`)
	assert.Contains(t, r.out, "20 name sites (5 distinct names) rejected now; 0 name sites still rejected after fix (exit 5)\n")
	assert.Equal(t, "check: 20 name sites (5 distinct names) rejected by at least one provider\n", r.err)

	// A provider that rejects none of them: exit 0.
	r = runCLI(t, env, "", "check", "--provider", "gemini,dashscope,xai", home)
	assert.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.out, "no name is rejected by gemini, dashscope, xai\n")
}

func TestCheckCodexReal(t *testing.T) {
	env := testEnv(t)
	rep, r := checkJSON(t, env, "--provider", "all", "--codex-config", codexFixtures+"config.toml", codexFixtures)
	require.Equal(t, exitcode.Finding, r.code, r.err)
	assert.Equal(t, 2, rep.Stores)
	assert.Equal(t, 5, rep.Rejected)
	assert.Equal(t, 1, rep.RejectedAfterFix)
	names := map[string]report.CheckFinding{}
	for _, f := range rep.Findings {
		names[f.Name] = f
	}
	// Codex 0.50.0 flat names the fix rewrites to namespace + name: checked as the flat
	// spelling the model sees.
	assert.Equal(t, "mcp__foo_bar__deploy_prod", names["mcp__foo-bar__deploy.prod"].After)
	assert.Equal(t, "mcp__lit__get_data", names["mcp__lit__get+data"].After)
	// Codex 0.169.0 itself stored namespace mcp__lit + a 56-character name: 66 flat, over
	// the 64 of Chat Completions and Bedrock (the Responses API takes the parts apart).
	long := names["mcp__lit__get_data_for_a_specific_location_and_date_range_extended"]
	assert.Equal(t, int64(15), long.Line)
	assert.Equal(t, "codex-over-long", long.Class) // kept: Codex's own name (issue 23 item 7)
	var ids []string
	for _, x := range long.Now {
		ids = append(ids, x.Provider)
	}
	assert.Equal(t, []string{"openai-chat", "anthropic", "bedrock", "gemini", "deepseek", "dashscope", "mistral"}, ids)
	assert.Equal(t, "66 code points > 64", long.Now[0].Rules[0].Detail)
	assert.Len(t, long.AfterFix, 7)
}

func TestCheckOpencodeReal(t *testing.T) {
	env := testEnv(t)
	dir := filepath.Join(t.TempDir(), "opencode")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	f, err := os.Open("../../fixtures/opencode-real/opencode.sql")
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, sqlitetest.BuildFromSQL(context.Background(), filepath.Join(dir, "opencode.db"), true, f))
	rep, r := checkJSON(t, env, "--provider", "all", dir)
	// The real opencode dump holds only names every provider takes: exit 0.
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Equal(t, 1, rep.Stores)
	assert.Equal(t, 28, rep.Checked)
	assert.Equal(t, map[string]int{"rule": 6}, rep.Skipped)
	assert.Equal(t, 0, rep.Rejected)
	assert.Empty(t, rep.Findings)

	// With the legacy rows of engine/sqlite's tests added: rows, not lines.
	dir2, _ := opencodeStore(t)
	rep, r = checkJSON(t, env, "--provider", "openai-chat,kimi", dir2)
	require.Equal(t, exitcode.Finding, r.code, r.err)
	assert.Equal(t, 42, rep.Checked)
	assert.Equal(t, 11, rep.Rejected)
	assert.Equal(t, 4, rep.Distinct)
	assert.Equal(t, 0, rep.RejectedAfterFix)
	// Kimi has no length cap: the 73-character name passes it, not Chat Completions.
	assert.Equal(t, map[string][2]int{"openai-chat": {11, 0}, "kimi": {9, 0}}, byProvider(rep))
	assert.Equal(t, "event id=evt_legacy00000000000000000001", rep.Findings[0].Row)
	r = runCLI(t, env, "", "check", "--provider", "kimi", dir2)
	assert.Contains(t, r.out, "  lit_literature.search_pubmed\n    would be rejected by kimi at row event id=evt_legacy00000000000000000001, row event id=evt_legacy00000000000000000002")
}

func TestCheckUsage(t *testing.T) {
	env := testEnv(t)
	home := t.TempDir()
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", home)
	r := runCLI(t, env, "", "check", home)
	assert.Equal(t, exitcode.Usage, r.code)
	assert.Contains(t, r.err, `--provider: no provider given`)
	r = runCLI(t, env, "", "check", "--provider", "openai", home)
	assert.Equal(t, exitcode.Usage, r.code)
	assert.Contains(t, r.err, `unknown provider "openai" (known: openai-chat, openai-responses, anthropic, bedrock, gemini, deepseek, dashscope, mistral, kimi, xai, all, or a profile file ./NAME.json)`)
	r = runCLI(t, env, "", "check", "--provider", "kimi", "--format", "xml", home)
	assert.Equal(t, exitcode.Usage, r.code)
	r = runCLI(t, env, "", "check", "--help")
	assert.Equal(t, exitcode.OK, r.code)
	assert.Contains(t, r.out, "EXIT STATUS:\n   0    success")
	assert.Contains(t, oneLine(r.out), "5 finding: a --fail-on condition matched (a name some --provider rejects was found (in history or the inventory))")
	r = runCLI(t, env, "", "check", "--provider", "kimi", filepath.Join(home, "nope"))
	assert.Equal(t, exitcode.Error, r.code, r.err)
}

func TestCheckProfileAndInventory(t *testing.T) {
	env := testEnv(t)
	home := t.TempDir()
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", home)
	inv := filepath.Join(t.TempDir(), "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers":{"web":{"tools":["search"]},"lit":{"tools":["get_data"]},"foo.bar":{"tools":["get_data"]}}}`), 0o600))
	rep, r := checkJSON(t, env, "--provider", "../../docs/my-gateway.json,dashscope", "--inventory", inv, home)
	require.Equal(t, exitcode.Finding, r.code, r.err)
	var decl []string
	for _, f := range rep.Findings {
		if f.Store == "" {
			decl = append(decl, f.Kind+" "+f.Name+" "+f.Now[0].Provider+" "+f.Now[0].Rules[0].Rule)
		}
	}
	// The raw dotted identity is rejected by the gateway's pattern; Qwen registers it
	// normalized (a hash suffix), which passes; no declared tool is named "search" itself.
	assert.Equal(t, []string{"declared-raw mcp__foo.bar__get_data my-gateway pattern"}, decl)
	assert.Equal(t, "my-gateway", rep.Providers[0].ID)
}

func TestCheckSARIF(t *testing.T) {
	env := testEnv(t)
	home := t.TempDir()
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", home)
	r := runCLI(t, env, "", "check", "--provider", "all", "--format", "sarif", home)
	require.Equal(t, exitcode.Finding, r.code, r.err)
	log := validSARIF(t, r.out)
	run := log.Runs[0]
	// 20 rejected sites × the 7 providers with the [a-zA-Z0-9_-] pattern, one rule each.
	assert.Len(t, run.Results, 140)
	var ids []string
	for _, x := range run.Tool.Driver.Rules {
		ids = append(ids, x.ID)
	}
	assert.Equal(t, []string{"provider/openai-chat/pattern", "provider/openai-responses/pattern", "provider/anthropic/pattern",
		"provider/bedrock/pattern", "provider/deepseek/pattern", "provider/mistral/pattern", "provider/kimi/pattern"}, ids)
	first := run.Results[0]
	assert.Equal(t, "provider/openai-chat/pattern", first.RuleID)
	assert.True(t, strings.HasSuffix(first.Locations[0].Physical.Artifact.URI, "/projects/-home-demo-src-api/chats/50bcb974-4071-429f-a75f-7496ad5cddee.jsonl"), first.Locations[0].Physical.Artifact.URI)
	assert.Equal(t, 3, first.Locations[0].Physical.Region.StartLine)
	assert.Len(t, first.Fingerprints["sessionfix/v1"], 32)
}

// TestCheckBaseline: with --baseline (a previous JSON or SARIF output) only a finding added
// since makes the run exit 5.
func TestCheckBaseline(t *testing.T) {
	env := testEnv(t)
	home := t.TempDir()
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", home)
	dir := t.TempDir()
	for _, format := range []string{"json", "sarif"} {
		r := runCLI(t, env, "", "check", "--provider", "all", "--format", format, home)
		require.Equal(t, exitcode.Finding, r.code, r.err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "base."+format), []byte(r.out), 0o600))
	}
	for _, format := range []string{"json", "sarif"} {
		r := runCLI(t, env, "", "check", "--provider", "all", "--baseline", filepath.Join(dir, "base."+format), home)
		require.Equal(t, exitcode.OK, r.code, r.err)
		assert.Contains(t, r.out, "20 name sites (5 distinct names) rejected now, 0 of them new since the baseline")
		assert.Contains(t, r.out, "(70 known fingerprints: provider, rule, name, store)") // 140 results, each name twice per store
	}
	// A session gains a record calling a new dotted tool.
	sess := filepath.Join(home, "projects/-home-demo-src-api/chats/50bcb974-4071-429f-a75f-7496ad5cddee.jsonl")
	b, err := os.ReadFile(sess)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	line5 := lines[4]
	require.Contains(t, line5, `"mcp__foo.bar__get_data"`)
	added := strings.ReplaceAll(line5, "mcp__foo.bar__get_data", "mcp__foo.bar__new_tool")
	require.NoError(t, os.WriteFile(sess, []byte(string(b)+added+"\n"), 0o600))
	for _, format := range []string{"json", "sarif"} {
		rep, r := checkJSON(t, env, "--provider", "all", "--baseline", filepath.Join(dir, "base."+format), home)
		require.Equal(t, exitcode.Finding, r.code, r.err)
		require.NotNil(t, rep.Baseline)
		assert.Equal(t, 70, rep.Baseline.Known)
		var fresh []string
		for _, f := range rep.Findings {
			if f.New {
				fresh = append(fresh, fmt.Sprintf("%s@%d", f.Name, f.Line))
			}
		}
		assert.Equal(t, []string{fmt.Sprintf("mcp__foo.bar__new_tool@%d", len(lines)+1)}, fresh)
		assert.Equal(t, 1, rep.Baseline.New)
		assert.Contains(t, r.err, "check: 1 name site rejected that is not in the baseline")
	}
	// As SARIF, every result of the new name is "new" (one per provider rule it breaks), the
	// others "unchanged"; none is gone.
	r := runCLI(t, env, "", "check", "--provider", "all", "--format", "sarif", "--baseline", filepath.Join(dir, "base.sarif"), home)
	require.Equal(t, exitcode.Finding, r.code, r.err)
	states := map[string]int{}
	for _, x := range validSARIF(t, r.out).Runs[0].Results {
		states[x.BaselineState]++
		if x.BaselineState != "unchanged" {
			assert.Contains(t, x.Message.Text, "mcp__foo.bar__new_tool")
		}
	}
	assert.Equal(t, map[string]int{"new": 7, "unchanged": 140}, states)
	// A file that is no check output is an error naming it.
	bad := filepath.Join(dir, "x.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"a":1}`), 0o600))
	r = runCLI(t, env, "", "check", "--provider", "all", "--baseline", bad, home)
	assert.Equal(t, exitcode.Error, r.code)
	assert.Contains(t, r.err, "--baseline "+bad+": not a check output")
}

// The same declared tools read from an inventory at another path (a CI job's temp copy) are
// the same findings, whichever format the baseline has (a SARIF baseline located them at
// the old inventory path and exited 5); a SARIF baseline written before the fingerprint of a
// declared tool left the path out still knows them, and lists none of them as absent.
func TestCheckBaselineInventoryMoved(t *testing.T) {
	env := testEnv(t)
	dir := t.TempDir()
	home := t.TempDir()
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", home)
	inv := filepath.Join(dir, "a", "inventory.json")
	moved := filepath.Join(dir, "b", "inventory.json")
	b, err := os.ReadFile("../../fixtures/qwen-settings/inventory.json")
	require.NoError(t, err)
	for _, p := range []string{inv, moved} {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o600))
	}
	for _, format := range []string{"json", "sarif"} {
		r := runCLI(t, env, "", "check", "--provider", "all", "--format", format, "--inventory", inv, home)
		require.Equal(t, exitcode.Finding, r.code, r.err)
		base := filepath.Join(dir, "base."+format)
		require.NoError(t, os.WriteFile(base, []byte(r.out), 0o600))
		r = runCLI(t, env, "", "check", "--provider", "all", "--baseline", base, "--inventory", moved, home)
		assert.Equal(t, exitcode.OK, r.code, "%s baseline: %s", format, r.err)
		assert.Contains(t, r.out, "0 of them new since the baseline", format)
	}
	// A baseline of the older formula: each declared tool's fingerprint had the inventory path.
	r := runCLI(t, env, "", "check", "--provider", "all", "--format", "sarif", "--inventory", inv, home)
	log := validSARIF(t, r.out)
	var legacy strings.Builder
	legacy.WriteString(`{"runs":[{"results":[`)
	n, declared := 0, 0
	for _, x := range log.Runs[0].Results {
		if !strings.HasPrefix(x.RuleID, "provider/") {
			continue
		}
		fp := x.Fingerprints["sessionfix/v1"]
		if len(x.Locations) > 0 && x.Locations[0].Physical.Artifact.URI == reports.SARIFPath(inv) {
			parts := strings.SplitN(strings.TrimPrefix(x.RuleID, "provider/"), "/", 2)
			name := regexp.MustCompile(`^(\S+) would be rejected`).FindStringSubmatch(x.Message.Text)
			require.Len(t, name, 2, x.Message.Text)
			fp = reports.SARIFFingerprint(parts[0], parts[1], name[1], reports.SARIFPath(inv), "")
			declared++
		}
		if n > 0 {
			legacy.WriteString(",")
		}
		n++
		fmt.Fprintf(&legacy, `{"ruleId":%q,"message":{"text":"x"},"partialFingerprints":{"sessionfix/v1":%q}}`, x.RuleID, fp)
	}
	legacy.WriteString(`]}]}`)
	require.Greater(t, declared, 0)
	old := filepath.Join(dir, "old.sarif")
	require.NoError(t, os.WriteFile(old, []byte(legacy.String()), 0o600))
	r = runCLI(t, env, "", "check", "--provider", "all", "--format", "sarif", "--baseline", old, "--inventory", inv, home)
	assert.Equal(t, exitcode.OK, r.code, r.err)
	states := map[string]int{}
	for _, x := range validSARIF(t, r.out).Runs[0].Results {
		if strings.HasPrefix(x.RuleID, "provider/") {
			states[x.BaselineState]++
		}
	}
	assert.Equal(t, map[string]int{"unchanged": n}, states)
}
