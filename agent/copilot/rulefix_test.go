package copilot

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/store"
)

// applyEdits makes edits (offsets into data) on data, checking each one's old bytes: what the
// rule-file store writes.
func applyEdits(t *testing.T, data []byte, edits []store.FileEdit) string {
	t.Helper()
	es := append([]store.FileEdit(nil), edits...)
	sort.SliceStable(es, func(i, j int) bool { return es[i].At < es[j].At })
	var out []byte
	at := int64(0)
	for _, e := range es {
		require.GreaterOrEqual(t, e.At, at)
		require.Equal(t, e.Old, string(data[e.At:e.At+int64(len(e.Old))]))
		out = append(append(out, data[at:e.At]...), e.New...)
		at = e.At + int64(len(e.Old))
	}
	return string(append(out, data[at:]...))
}

const (
	// The recording's deny-raw flags (rules.tsv: 1.0.39 denied the tools, 1.0.102 ran them) in a
	// script, and a second command line whose allow is already in 1.0.40's spelling.
	ciScript = "#!/bin/sh\n# nightly triage\ncopilot -p \"triage\" --allow-all-tools --deny-tool 'lit(literature.search_pubmed)' --deny-tool 'lit(get+data)' --deny-tool 'foo.bar(deploy.prod)'\ncopilot -p \"summarize\" --allow-tool 'lit(literature-search_pubmed)'\n"
	// A workflow: a run: scalar and a block scalar with a line continuation, a comment; lit's
	// get+data and get-data sanitize alike.
	workflow = "# nightly\non: schedule\njobs:\n  triage:\n    runs-on: ubuntu-latest\n    steps:\n" +
		"      - run: copilot -p \"triage\" --allow-all-tools --deny-tool 'lit(literature.search_pubmed)'  # keep out\n" +
		"      - name: deploy check\n        run: |\n          copilot -p \"check\" --allow-all-tools \\\n            --deny-tool \"foo.bar(deploy.prod)\" --deny-tool 'lit(get+data)'\n"
)

func ruleFixIn(t *testing.T, inv string, files ...string) agent.RuleFixInput {
	return agent.RuleFixInput{Env: agent.Env{Getenv: func(string) string { return "" }, Home: t.TempDir()}, Inventory: inv, Cwd: t.TempDir(),
		Options: agent.Values{RulesFromOption: files}, Problem: func(err error) { t.Errorf("problem: %v", err) }, Note: func(string) {}, Warn: func(string) {}}
}

// TestRuleFixScript: on the recording's deny-raw flags the migration rewrites the three tool
// parts (server part as configured), only their bytes inside the quoted shell words, and says per
// command line that the tool ran under 1.0.102 and is denied after the rewrite; the allow already
// in 1.0.40's spelling is left out. Red before: Copilot CLI had no RuleFix.
func TestRuleFixScript(t *testing.T) {
	dir := t.TempDir()
	sh := filepath.Join(dir, "ci.sh")
	require.NoError(t, os.WriteFile(sh, []byte(ciScript), 0o755))
	inv := filepath.Join(dir, "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers": {"lit": {"tools": ["literature.search_pubmed", "literature_search_pubmed", "get+data", "ok_tool"]}, "foo.bar": {"tools": ["get_data", "deploy.prod"]}, "foo_bar": {"tools": ["deploy.prod"]}}}`), 0o600))
	require.Implements(t, (*agent.RuleFixer)(nil), Agent)
	p, err := Agent.(agent.RuleFixer).RuleFix().Plan(context.Background(), ruleFixIn(t, inv, sh))
	require.NoError(t, err)
	assert.Equal(t, "1.0.102", p.Version)
	var rows []string
	for _, c := range p.Changes {
		rows = append(rows, strings.Join([]string{c.Key, c.Action, c.Old, c.New, strings.Join(c.Before, ","), strings.Join(c.After, ","), c.Note}, " | "))
	}
	real, err := filepath.EvalSymlinks(sh)
	require.NoError(t, err)
	run := "in the run at " + real + ":3:1 "
	assert.Equal(t, []string{
		"--deny-tool | rewrite | lit(literature.search_pubmed) | lit(literature-search_pubmed) | lit/literature.search_pubmed | lit/literature.search_pubmed | " + run + "lit/literature.search_pubmed: ran now, denied after the rewrite",
		"--deny-tool | rewrite | lit(get+data) | lit(get-data) | lit/get+data | lit/get+data | " + run + "lit/get+data: ran now, denied after the rewrite",
		"--deny-tool | rewrite | foo.bar(deploy.prod) | foo.bar(deploy-prod) | foo.bar/deploy.prod | foo.bar/deploy.prod | " + run + "foo.bar/deploy.prod: ran now, denied after the rewrite",
	}, rows)
	require.Len(t, p.Edits, 1)
	assert.Equal(t, 3, p.Edits[0].Rules)
	assert.Equal(t, strings.NewReplacer("lit(literature.search_pubmed)", "lit(literature-search_pubmed)", "lit(get+data)", "lit(get-data)",
		"foo.bar(deploy.prod)", "foo.bar(deploy-prod)").Replace(ciScript), applyEdits(t, []byte(ciScript), p.Edits[0].Edits))
	assert.Equal(t, []store.FileEdit{{At: int64(strings.Index(ciScript, "literature.search_pubmed")), Old: "literature.search_pubmed", New: "literature-search_pubmed"}}, p.Edits[0].Edits[:1])
}

// TestRuleFixWorkflow: in workflow YAML the tool part is rewritten inside the run: scalar and
// inside a block scalar's quoted word (the comment, the continuation and every other byte kept);
// lit(get+data) is held back, said: lit(get-data) would also match lit/get-data (they sanitize
// alike), so the rule would then cover both.
func TestRuleFixWorkflow(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, "nightly.yml")
	require.NoError(t, os.WriteFile(wf, []byte(workflow), 0o644))
	inv := filepath.Join(dir, "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers": {"lit": {"tools": ["literature.search_pubmed", "get+data", "get-data", "ok_tool"]}, "foo.bar": {"tools": ["deploy.prod"]}}}`), 0o600))
	p, err := Agent.(agent.RuleFixer).RuleFix().Plan(context.Background(), ruleFixIn(t, inv, wf))
	require.NoError(t, err)
	require.Len(t, p.Changes, 3)
	assert.Equal(t, []any{"rewrite", "rewrite", "held"}, []any{p.Changes[0].Action, p.Changes[1].Action, p.Changes[2].Action})
	assert.Equal(t, "lit(get-data) would match 2 tools (lit/get+data, lit/get-data): they sanitize alike; kept as written", p.Changes[2].Note)
	assert.Equal(t, []string{"lit/get+data", "lit/get-data"}, p.Changes[2].After)
	require.Len(t, p.Edits, 1)
	assert.Equal(t, 2, p.Edits[0].Rules)
	assert.Equal(t, strings.NewReplacer("lit(literature.search_pubmed)", "lit(literature-search_pubmed)", "foo.bar(deploy.prod)", "foo.bar(deploy-prod)").Replace(workflow),
		applyEdits(t, []byte(workflow), p.Edits[0].Edits))
}
