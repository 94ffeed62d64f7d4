package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/reports/sariftest"
)

// sarifLog is the part of a SARIF log the tests read.
type sarifLog struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Rules []struct {
					ID string `json:"id"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID  string `json:"ruleId"`
			Level   string `json:"level"`
			Message struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations []struct {
				Physical struct {
					Artifact struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
			Fingerprints  map[string]string `json:"partialFingerprints"`
			BaselineState string            `json:"baselineState"`
		} `json:"results"`
	} `json:"runs"`
}

// validSARIF checks out against the OASIS SARIF 2.1.0 schema (reports/sariftest) and decodes it.
func validSARIF(t *testing.T, out string) sarifLog {
	t.Helper()
	sariftest.Validate(t, []byte(out))
	var log sarifLog
	require.NoError(t, json.Unmarshal([]byte(out), &log))
	require.Len(t, log.Runs, 1)
	return log
}

// TestScanSARIF: scan --format sarif gives one result per name fix would rewrite (warning) or
// keeps although a provider rejects it (error), rule id per class, located at store and line.
func TestScanSARIF(t *testing.T) {
	env := testEnv(t)
	home := t.TempDir()
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", home)
	r := runCLI(t, env, "", "scan", "--format", "sarif", home)
	require.Equal(t, exitcode.OK, r.code, r.err)
	run := validSARIF(t, r.out).Runs[0]
	assert.Len(t, run.Results, 35) // "would rewrite 35 names"
	var ids []string
	for _, x := range run.Tool.Driver.Rules {
		ids = append(ids, x.ID)
	}
	assert.Equal(t, []string{"sessionfix/name/legacy-dotted", "sessionfix/name/legacy-truncated-dotted"}, ids)
	first := run.Results[0]
	assert.Equal(t, "sessionfix/name/legacy-dotted", first.RuleID)
	assert.Equal(t, "warning", first.Level)
	assert.Equal(t, "mcp__foo.bar__get_data (legacy-dotted, call message.parts[0].functionCall.name) would be rewritten by sessionfix fix to mcp__foo_bar__get_data_0xybsnb.", first.Message.Text)
	assert.True(t, strings.HasSuffix(first.Locations[0].Physical.Artifact.URI, "/projects/-home-demo-src-api/chats/50bcb974-4071-429f-a75f-7496ad5cddee.jsonl"), first.Locations[0].Physical.Artifact.URI)
	assert.Equal(t, 3, first.Locations[0].Physical.Region.StartLine)
	assert.Len(t, first.Fingerprints["sessionfix/v1"], 32)

	// --keep-truncated: the truncated dotted names are kept and a provider rejects them: errors.
	r = runCLI(t, env, "", "scan", "--keep-truncated", "--format", "sarif", home)
	require.Equal(t, exitcode.OK, r.code, r.err)
	levels := map[string]int{}
	for _, x := range validSARIF(t, r.out).Runs[0].Results {
		levels[x.RuleID+" "+x.Level]++
	}
	assert.Equal(t, map[string]int{"sessionfix/name/legacy-dotted warning": 28, "sessionfix/name/legacy-truncated-dotted error": 7}, levels)
}

// TestScanSARIFCodex: a Codex rollout's rejected names, one result per name+namespace group.
func TestScanSARIFCodex(t *testing.T) {
	env := testEnv(t)
	home := t.TempDir()
	copyTree(t, "../../fixtures/codex-real", home)
	r := runCLI(t, env, "", "scan", "--format", "sarif", home)
	require.Equal(t, exitcode.OK, r.code, r.err)
	run := validSARIF(t, r.out).Runs[0]
	// "would rewrite 4 names in 1 file", and Codex 0.169.0's own 66-unit name kept (an error:
	// a provider rejects it; issue 23 item 7).
	require.Len(t, run.Results, 5)
	rules := map[string]int{}
	for _, x := range run.Results {
		rules[x.RuleID+" "+x.Level]++
		assert.Positive(t, x.Locations[0].Physical.Region.StartLine)
	}
	assert.Equal(t, map[string]int{"sessionfix/name/codex-rejected warning": 4, "sessionfix/name/codex-over-long error": 1}, rules)
}

// TestAuditSARIF: audit --format sarif on the acceptance fixture: the 1 lost and 3 gained pairs
// of the CSV, each at the settings file and the line of its rule.
func TestAuditSARIF(t *testing.T) {
	atRepoRoot(t)
	r := runCLI(t, testEnv(t), "", append(fixtureArgs(), "--format", "sarif")...)
	require.Equal(t, exitcode.OK, r.code, r.err)
	run := validSARIF(t, r.out).Runs[0]
	var ids []string
	for _, x := range run.Tool.Driver.Rules {
		ids = append(ids, x.ID)
	}
	assert.Equal(t, []string{"sessionfix/audit/lost", "sessionfix/audit/gained", "sessionfix/audit/refused"}, ids)
	var got []string
	for _, x := range run.Results {
		got = append(got, fmt.Sprintf("%s %s %s:%d", x.RuleID, x.Level, x.Locations[0].Physical.Artifact.URI, x.Locations[0].Physical.Region.StartLine))
		assert.Len(t, x.Fingerprints["sessionfix/v1"], 32)
	}
	assert.Equal(t, []string{
		"sessionfix/audit/gained warning fixtures/qwen-settings/workspace/.qwen/settings.json:3",
		"sessionfix/audit/lost error fixtures/qwen-settings/settings.json:21",
		"sessionfix/audit/gained warning fixtures/qwen-settings/settings.json:24",
		"sessionfix/audit/gained warning fixtures/qwen-settings/settings.json:24",
	}, got)
	assert.Equal(t, `allow rule "mcp__com.example.enterprise-___documents_by_semantic_similarity" (permissions.allow[2]) lost tool query_documents_by_semantic_similarity (server com.example.enterprise-search, registered name mcp__com_example_enterprise-search__query_documents_by__10hvo5y): matched it before the rename (legacy name mcp__com.example.enterprise-___documents_by_semantic_similarity) and now matches no more.`,
		run.Results[1].Message.Text)
	assert.NotEqual(t, run.Results[2].Fingerprints, run.Results[3].Fingerprints, "two tools, two findings")
}

// TestAuditSARIFRefused: an allow rule the ambiguity guard refuses (two servers flattening
// alike) is a refused result at its rule's line.
func TestAuditSARIFRefused(t *testing.T) {
	dir := t.TempDir()
	set, inv := filepath.Join(dir, "settings.json"), filepath.Join(dir, "inv.json")
	require.NoError(t, os.WriteFile(set, []byte("{\n  \"permissions\": {\n    \"allow\": [\"mcp__foo_bar__*\"]\n  }\n}\n"), 0o600))
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers": {"foo.bar": {"tools": ["evil"]}, "foo_bar": {"tools": ["evil"]}}}`), 0o600))
	r := runCLI(t, testEnv(t), "", "audit", "--settings", set, "--inventory", inv, "--format", "sarif")
	require.Equal(t, exitcode.OK, r.code, r.err)
	run := validSARIF(t, r.out).Runs[0]
	require.Len(t, run.Results, 1, r.out)
	x := run.Results[0]
	assert.Equal(t, "sessionfix/audit/refused", x.RuleID)
	assert.Equal(t, 3, x.Locations[0].Physical.Region.StartLine)
	assert.Equal(t, `allow rule "mcp__foo_bar__*" (permissions.allow[0]) refused tool evil (server foo.bar, registered name mcp__foo_bar__evil_1oxrpi0): names it, but the registry ambiguity guard refuses the grant.`, x.Message.Text)
}

// TestScanBaseline: scan --baseline (a previous scan --format sarif) exits 0 while nothing is
// new, and 5 for exactly the finding a new record adds; a file that is no SARIF is an error.
func TestScanBaseline(t *testing.T) {
	env := testEnv(t)
	home := t.TempDir()
	copyTree(t, "../../fixtures/qwen-real/dot-qwen", home)
	base := filepath.Join(t.TempDir(), "base.sarif")
	r := runCLI(t, env, "", "scan", "--format", "sarif", home)
	require.Equal(t, exitcode.OK, r.code, r.err)
	require.NoError(t, os.WriteFile(base, []byte(r.out), 0o600))
	r = runCLI(t, env, "", "scan", "--baseline", base, home)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.err, "scan: no finding new since the baseline "+base+" (35 findings now, 15 known fingerprints)\n")

	sess := filepath.Join(home, "projects/-home-demo-src-api/chats/50bcb974-4071-429f-a75f-7496ad5cddee.jsonl")
	b, err := os.ReadFile(sess)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	require.Contains(t, lines[4], `"mcp__foo.bar__get_data"`)
	// Another record of a known name in the same store is not new; a new dotted name is.
	again := lines[4] + "\n"
	require.NoError(t, os.WriteFile(sess, []byte(string(b)+again), 0o600))
	r = runCLI(t, env, "", "scan", "--baseline", base, home)
	require.Equal(t, exitcode.OK, r.code, r.err)
	added := strings.ReplaceAll(lines[4], "mcp__foo.bar__get_data", "mcp__foo.bar__new_tool")
	require.NoError(t, os.WriteFile(sess, []byte(string(b)+again+added+"\n"), 0o600))
	r = runCLI(t, env, "", "scan", "--baseline", base, home)
	require.Equal(t, exitcode.Finding, r.code, r.err)
	assert.Contains(t, r.err, "scan: 1 finding not in the baseline "+base+" (15 known fingerprints)\n")
	// The same run as SARIF: the added name is "new", the known ones "unchanged"; the baseline
	// file itself says nothing of states.
	assert.NotContains(t, readFileString(t, base), "baselineState")
	r = runCLI(t, env, "", "scan", "--format", "sarif", "--baseline", base, home)
	require.Equal(t, exitcode.Finding, r.code, r.err)
	states := map[string]int{}
	var fresh []string
	for _, x := range validSARIF(t, r.out).Runs[0].Results {
		states[x.BaselineState]++
		if x.BaselineState == "new" {
			fresh = append(fresh, fmt.Sprintf("%s:%d", filepath.Base(x.Locations[0].Physical.Artifact.URI), x.Locations[0].Physical.Region.StartLine))
		}
	}
	assert.Equal(t, map[string]int{"new": 1, "unchanged": 36}, states)
	assert.Equal(t, []string{fmt.Sprintf("50bcb974-4071-429f-a75f-7496ad5cddee.jsonl:%d", len(lines)+2)}, fresh)
	// Findings gone since the baseline (the session is deleted) are written back as "absent",
	// at the place the baseline named.
	require.NoError(t, os.Remove(sess))
	r = runCLI(t, env, "", "scan", "--format", "sarif", "--baseline", base, home)
	require.Equal(t, exitcode.OK, r.code, r.err)
	states = map[string]int{}
	var gone []string
	for _, x := range validSARIF(t, r.out).Runs[0].Results {
		states[x.BaselineState]++
		if x.BaselineState == "absent" {
			gone = append(gone, fmt.Sprintf("%s:%d", filepath.Base(x.Locations[0].Physical.Artifact.URI), x.Locations[0].Physical.Region.StartLine))
		}
	}
	assert.Equal(t, 0, states["new"], states)
	// Its five names (15 fingerprints: name per store) were first stored at line 3.
	assert.Equal(t, slices.Repeat([]string{"50bcb974-4071-429f-a75f-7496ad5cddee.jsonl:3"}, 5), gone)

	bad := filepath.Join(t.TempDir(), "x.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"roots":[]}`), 0o600))
	r = runCLI(t, env, "", "scan", "--baseline", bad, home)
	assert.Equal(t, exitcode.Error, r.code)
	assert.Contains(t, r.err, "--baseline "+bad+`: not a SARIF output (--format sarif): no "runs"`)
}

// TestAuditBaseline: audit --baseline (a previous audit --format sarif or json) exits 0 while no
// lost, gained or refused pair is new and 5 for exactly the one a second server adds (two keys
// flattening alike: the allow rule is refused now); SARIF results carry baselineState, and the
// gained pair the new server ends is written back as "absent".
func TestAuditBaseline(t *testing.T) {
	dir := t.TempDir()
	set, one, two := filepath.Join(dir, "settings.json"), filepath.Join(dir, "one.json"), filepath.Join(dir, "two.json")
	require.NoError(t, os.WriteFile(set, []byte("{\n  \"permissions\": {\n    \"allow\": [\"mcp__foo_bar__*\"],\n    \"deny\": [\"mcp__foo.bar__evil\"]\n  }\n}\n"), 0o600))
	require.NoError(t, os.WriteFile(one, []byte(`{"servers": {"foo.bar": {"tools": ["evil"]}}}`), 0o600))
	require.NoError(t, os.WriteFile(two, []byte(`{"servers": {"foo.bar": {"tools": ["evil"]}, "foo_bar": {"tools": ["evil"]}}}`), 0o600))
	env := testEnv(t)
	for _, format := range []string{"sarif", "json"} {
		r := runCLI(t, env, "", "audit", "--settings", set, "--inventory", one, "--format", format)
		require.Equal(t, exitcode.OK, r.code, r.err)
		base := filepath.Join(dir, "base."+format)
		require.NoError(t, os.WriteFile(base, []byte(r.out), 0o600))

		r = runCLI(t, env, "", "audit", "--settings", set, "--inventory", one, "--baseline", base)
		require.Equal(t, exitcode.OK, r.code, r.err)
		assert.Contains(t, r.err, "audit: no finding new since the baseline "+base+" (1 known fingerprints)\n")

		r = runCLI(t, env, "", "audit", "--settings", set, "--inventory", two, "--baseline", base)
		require.Equal(t, exitcode.Finding, r.code, r.err)
		assert.Contains(t, r.err, "audit: 1 finding not in the baseline "+base+" (1 known fingerprints)\n")
		// --fail-on narrows the classes counted: the new pair is refused, not lost.
		r = runCLI(t, env, "", "audit", "--settings", set, "--inventory", two, "--baseline", base, "--fail-on", "lost")
		require.Equal(t, exitcode.OK, r.code, r.err)

		r = runCLI(t, env, "", "audit", "--settings", set, "--inventory", two, "--baseline", base, "--format", "sarif")
		require.Equal(t, exitcode.Finding, r.code, r.err)
		var got []string
		for _, x := range validSARIF(t, r.out).Runs[0].Results {
			got = append(got, x.RuleID+" "+x.BaselineState)
		}
		want := []string{"sessionfix/audit/refused new"}
		if format == "sarif" { // a JSON baseline has fingerprints only: nothing to write back
			want = append(want, "sessionfix/audit/gained absent")
		}
		assert.Equal(t, want, got)
	}
	bad := filepath.Join(dir, "x.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"a":1}`), 0o600))
	r := runCLI(t, env, "", "audit", "--settings", set, "--inventory", one, "--baseline", bad)
	assert.Equal(t, exitcode.Error, r.code)
	assert.Contains(t, r.err, "--baseline "+bad+`: not an audit output (no "runs" or "pairs")`)
}

// TestScanSARIFRedispatch: the Claude Code sessions of fixtures/claude-real with an inventory
// adding my_server (normalizes like "my server"): the 1.0.51 calls of lit/literature_search_pubmed
// now reached by lit/literature.search_pubmed (sessionfix/name/redispatch, error) and the 1.0.51
// mcp__my_server__ping calls both servers' ping now share (sessionfix/name/ambiguous, warning),
// valid SARIF 2.1.0; a baseline of that output marks them unchanged.
func TestScanSARIFRedispatch(t *testing.T) {
	env := testEnv(t)
	dir := t.TempDir()
	copyTree(t, "../../fixtures/claude-real", dir)
	inv := filepath.Join(t.TempDir(), "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers": {"lit": {"tools": ["literature.search_pubmed", "literature_search_pubmed"]},
  "my server": {"tools": ["ping"]}, "my_server": {"tools": ["ping"]}}}`), 0o644))
	r := runCLI(t, env, "", "scan", "--agent", "claude", "--inventory", inv, "--format", "sarif", filepath.Join(dir, "dot-claude"))
	require.Equal(t, exitcode.OK, r.code, r.err)
	run := validSARIF(t, r.out).Runs[0]
	got := map[string]int{}
	var msg string
	for _, x := range run.Results {
		if strings.HasPrefix(x.RuleID, "sessionfix/name/redispatch") || x.RuleID == "sessionfix/name/ambiguous" {
			got[x.RuleID+" "+x.Level]++
			if x.RuleID == "sessionfix/name/redispatch" && msg == "" {
				msg = x.Message.Text
				assert.Equal(t, 4, x.Locations[0].Physical.Region.StartLine)
				assert.True(t, strings.HasSuffix(x.Locations[0].Physical.Artifact.URI, "/d848c0de-9878-4606-93d3-ab6dda5f2c41.jsonl"), x.Locations[0].Physical.Artifact.URI)
			}
		}
	}
	assert.Equal(t, map[string]int{"sessionfix/name/redispatch error": 2, "sessionfix/name/ambiguous warning": 2}, got)
	assert.Contains(t, msg, "called lit/literature_search_pubmed (the only tool Claude Code 1.0.51 (line 4) named so (server-normalized era)); now reaches lit/literature.search_pubmed")
	var ids []string
	for _, x := range run.Tool.Driver.Rules {
		ids = append(ids, x.ID)
	}
	assert.Contains(t, ids, "sessionfix/name/redispatch")
	assert.Contains(t, ids, "sessionfix/name/ambiguous")

	base := filepath.Join(t.TempDir(), "base.sarif")
	require.NoError(t, os.WriteFile(base, []byte(r.out), 0o644))
	r = runCLI(t, env, "", "scan", "--agent", "claude", "--inventory", inv, "--format", "sarif", "--baseline", base, filepath.Join(dir, "dot-claude"))
	require.Equal(t, exitcode.OK, r.code, r.err)
	for _, x := range validSARIF(t, r.out).Runs[0].Results {
		if x.RuleID == "sessionfix/name/redispatch" || x.RuleID == "sessionfix/name/ambiguous" {
			assert.Equal(t, "unchanged", x.BaselineState)
		}
	}
}
