package gemini

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func migrationOf(t *testing.T, dir string, mode Mode) Migration {
	c := caseConfig(t, rulesDir+dir)
	return Migration{From: MustRelease("0.32.1"), To: MustRelease("0.61.0"), Mode: mode, Settings: c.Settings, Policies: c.Policies, Tools: c.Tools}
}

// applyPlan applies the rewrites that are not held to copies of the rule files and returns the
// configuration of the rewritten files (and the new bytes by path).
func applyPlan(t *testing.T, m Migration, plan []*Rewrite) (Migration, map[string][]byte) {
	t.Helper()
	edits := map[string][]Edit{}
	for _, rw := range plan {
		if !rw.Held {
			edits[rw.File] = append(edits[rw.File], rw.Edits...)
		}
	}
	out := m
	out.Settings, out.Policies = nil, nil
	files := map[string][]byte{}
	for _, s := range m.Settings {
		data, err := ApplyEdits(s.Data, edits[s.Path])
		require.NoError(t, err)
		files[s.Path] = data
		ns, err := ParseSettings(s.Path, data, s.Scope)
		require.NoError(t, err)
		out.Settings = append(out.Settings, ns)
	}
	for _, p := range m.Policies {
		data, err := ApplyEdits(p.Data, edits[p.Path])
		require.NoError(t, err)
		files[p.Path] = data
		np := ParsePolicy(p.Path, data, p.Scope)
		require.Nil(t, np.SyntaxError)
		out.Policies = append(out.Policies, np)
	}
	return out, files
}

// TestMigrationOfTheRecordedRules: the rules of rules/deny and rules/allow that 0.61.0 no longer
// applies as 0.32.1 did are rewritten to mcpName + the tool (every tool of a server: "*"), or,
// in settings, to the name 0.61.0 declares; the rest are left; each file changes only in those
// bytes; and under 0.61.0 the rewritten rules decide every tool as 0.32.1 decided it (a deny
// that denied hides now: stronger, never weaker).
func TestMigrationOfTheRecordedRules(t *testing.T) {
	for _, c := range []struct {
		dir  string
		mode Mode
	}{{"deny", ModeYolo}, {"allow", ModeDefault}} {
		m := migrationOf(t, c.dir, c.mode)
		plan := PlanMigration(m)
		got := map[string]string{}
		for _, rw := range plan {
			assert.False(t, rw.Held, "%s: %s", rw.Rule.ID, rw.Why)
			got[rw.Rule.Text] = rw.New
		}
		list := "tools.exclude"
		if c.dir == "allow" {
			list = "tools.allowed"
		}
		want := map[string]string{
			list + `: "foo.bar__purge"`:                  list + `: "mcp_foo.bar_purge"`,
			`toolName = "foo.bar__wipe"`:                 `mcpName = "foo.bar", toolName = "wipe"`,
			`toolName = "acme__*"`:                       `mcpName = "acme", toolName = "*"`,
			`toolName = "lit__literature.search_pubmed"`: `mcpName = "lit", toolName = "literature.search_pubmed"`,
		}
		if c.dir == "allow" {
			want[`tools.allowed: "deploy.prod"`] = `tools.allowed: "mcp_foo.bar_deploy.prod"`
		}
		assert.Equal(t, want, got, c.dir)

		after, files := applyPlan(t, m, plan)
		// Byte-exact: the TOML rule gains one line, the settings only the changed string.
		d1 := files[rulesDir+c.dir+"/policies/"+map[string]string{"deny": "d1", "allow": "a1"}[c.dir]+"-g1-qualified.toml"]
		assert.Equal(t, "[[rule]]\nmcpName = \"foo.bar\"\ntoolName = \"wipe\"\ndecision = \""+map[string]string{"deny": "deny", "allow": "allow"}[c.dir]+"\"\npriority = 500\n", string(d1))
		orig, err := os.ReadFile(rulesDir + c.dir + "/settings.json")
		require.NoError(t, err)
		wantSettings := strings.Replace(string(orig), `"foo.bar__purge"`, `"mcp_foo.bar_purge"`, 1)
		if c.dir == "allow" {
			wantSettings = strings.Replace(wantSettings, `["deploy.prod"`, `["mcp_foo.bar_deploy.prod"`, 1)
		}
		assert.Equal(t, wantSettings, string(files[rulesDir+c.dir+"/settings.json"]))

		old := Evaluate(Config{Release: m.From, Mode: m.Mode, Settings: m.Settings, Policies: m.Policies, Tools: m.Tools})
		now := Evaluate(Config{Release: m.To, Mode: m.Mode, Settings: after.Settings, Policies: after.Policies, Tools: m.Tools})
		for _, ch := range Compare(old, now) {
			switch {
			case c.dir == "deny" && ch.Before.Outcome != Ran:
				assert.NotEqual(t, Ran, ch.Now.Outcome, "%s: 0.32.1 %s, 0.61.0 after the migration %s", ch.Tool, ch.Before.Outcome, ch.Now.Outcome)
			case c.dir == "allow" && ch.Before.Outcome == Ran:
				assert.Equal(t, Ran, ch.Now.Outcome, "%s: 0.32.1 ran it; 0.61.0 after the migration: %s", ch.Tool, ch.Now.Why)
			}
		}
		if c.dir == "deny" {
			assert.Zero(t, Count(Compare(old, now), Lost), "no restriction lost after the migration")
		}
	}
}

// TestMigrationNeverWidens: "foo bar" (a server key 0.61.0's names change) shares
// mcp_foo_bar_get_data with foo_bar: the exact-name form of a deny of "foo bar__get_data" would
// also match foo_bar/get_data, so it is held; a wildcard over "foo bar" has no 0.61.0 form.
func TestMigrationNeverWidens(t *testing.T) {
	dir := t.TempDir()
	settings := writeFile(t, dir, "settings.json", `{"tools": {"exclude": ["foo bar__get_data"]}}`)
	pol := writeFile(t, dir, "policies/p.toml", "[[rule]]\ntoolName = \"foo bar__ping\"\ndecision = \"deny\"\npriority = 1\n\n[[rule]]\ntoolName = \"foo bar__*\"\ndecision = \"deny\"\npriority = 2\n")
	sf, err := ParseSettings(settings, readFile(t, settings), ScopeUser)
	require.NoError(t, err)
	m := Migration{From: MustRelease("0.32.1"), To: MustRelease("0.61.0"), Mode: ModeYolo,
		Settings: []*SettingsFile{sf}, Policies: []*PolicyFile{ParsePolicy(pol, readFile(t, pol), ScopeUser)},
		Tools: []Tool{{"foo_bar", "get_data"}, {"foo bar", "get_data"}, {"foo bar", "ping"}}}
	plan := PlanMigration(m)
	require.Len(t, plan, 3)
	byText := map[string]*Rewrite{}
	for _, rw := range plan {
		byText[rw.Rule.Text] = rw
	}
	ex := byText[`tools.exclude: "foo bar__get_data"`]
	require.NotNil(t, ex)
	assert.True(t, ex.Held)
	assert.Equal(t, []Tool{{"foo bar", "get_data"}, {"foo_bar", "get_data"}}, ex.After)
	assert.Contains(t, ex.Why, "would also match foo_bar/get_data")
	ping := byText[`toolName = "foo bar__ping"`]
	require.NotNil(t, ping)
	assert.False(t, ping.Held, ping.Why)
	assert.Equal(t, `toolName = "mcp_foo_bar_ping"`, ping.New, "the server key changes in 0.61.0's name: mcpName cannot be used, the exact name can")
	all := byText[`toolName = "foo bar__*"`]
	require.NotNil(t, all)
	assert.True(t, all.Held)
	assert.Contains(t, all.Why, "no rule of Gemini CLI from 0.33.0 addresses every tool of foo bar")
}

// TestMigrationOfALegacyExclude: a v1 top-level excludeTools hid the tool up to 0.22.x; 0.61.0
// does not read it: the plan says to move it, and changes nothing.
func TestMigrationOfALegacyExclude(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "settings.json", "{\n  // v1\n  \"excludeTools\": [\"deploy.prod\"]\n}\n")
	sf, err := ParseSettings(p, readFile(t, p), ScopeUser)
	require.NoError(t, err)
	require.Len(t, sf.LegacyExclude, 1)
	assert.Equal(t, Pos{p, 3, 20}, sf.LegacyExclude[0].Pos)
	tools := []Tool{{"foo.bar", "deploy.prod"}}
	old := Evaluate(Config{Release: MustRelease("0.20.0"), Mode: ModeYolo, Settings: []*SettingsFile{sf}, Tools: tools})
	assert.Equal(t, Hidden, old.Tools[0].Outcome, old.Tools[0].Why)
	now := Evaluate(Config{Release: Latest, Mode: ModeYolo, Settings: []*SettingsFile{sf}, Tools: tools})
	assert.Equal(t, Ran, now.Tools[0].Outcome)
	require.Len(t, now.Findings, 1)
	assert.Equal(t, FindingIgnored, now.Findings[0].Kind)
	plan := PlanMigration(Migration{From: MustRelease("0.20.0"), To: Latest, Mode: ModeYolo, Settings: []*SettingsFile{sf}, Tools: tools})
	require.Len(t, plan, 1)
	assert.True(t, plan[0].Held)
	assert.Contains(t, plan[0].Why, `move "deploy.prod" into tools.exclude (as mcp_foo.bar_deploy.prod)`)
}

// TestMigrationInlineAndListRules: a rule in an inline table gets its mcpName inside the table;
// a toolName list is rewritten in place, string by string, its brackets, line breaks and comments
// kept (red before: the strings first..last were replaced as one span and the comment between
// them was lost); CRLF files get CRLF. A list whose strings do not map one to one onto tools
// (acme__* names two) and has a comment between its strings is held back, said, rather than
// rewritten without the comment.
func TestMigrationInlineAndListRules(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, dir, "p.toml", "rule = [ { toolName = 'lit__ok_tool', decision = \"deny\", priority = 5 } ]\r\n")
	pol2 := writeFile(t, dir, "q.toml", "[[rule]]\r\n  # two tools\r\n  toolName = [\"lit__a\", # first\r\n    \"lit__b\"]\r\n  decision = \"deny\"\r\n  priority = 5\r\n")
	tools := []Tool{{"lit", "ok_tool"}, {"lit", "a"}, {"lit", "b"}}
	m := Migration{From: MustRelease("0.32.1"), To: Latest, Mode: ModeYolo, Tools: tools,
		Policies: []*PolicyFile{ParsePolicy(pol, readFile(t, pol), ScopeUser), ParsePolicy(pol2, readFile(t, pol2), ScopeUser)}}
	plan := PlanMigration(m)
	require.Len(t, plan, 2)
	_, files := applyPlan(t, m, plan)
	assert.Equal(t, "rule = [ { mcpName = \"lit\", toolName = \"ok_tool\", decision = \"deny\", priority = 5 } ]\r\n", string(files[pol]))
	assert.Equal(t, "[[rule]]\r\n  # two tools\r\n  mcpName = \"lit\"\r\n  toolName = [\"a\", # first\r\n    \"b\"]\r\n  decision = \"deny\"\r\n  priority = 5\r\n", string(files[pol2]))

	pol3 := writeFile(t, dir, "r.toml", "[[rule]]\ntoolName = [\"acme__*\", # all of acme\n  \"lit__a\"]\ndecision = \"deny\"\npriority = 5\n")
	tools = []Tool{{"acme", "a1"}, {"acme", "a2"}, {"lit", "a"}}
	plan = PlanMigration(Migration{From: MustRelease("0.32.1"), To: Latest, Mode: ModeYolo, Tools: tools,
		Policies: []*PolicyFile{ParsePolicy(pol3, readFile(t, pol3), ScopeUser)}})
	require.Len(t, plan, 1)
	assert.True(t, plan[0].Held)
	assert.Contains(t, plan[0].Why, "its toolName list has a comment between its strings, which the rewrite of the list would lose: rewrite it by hand to toolName = [\"mcp_acme_a1\", \"mcp_acme_a2\", \"mcp_lit_a\"]")
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}
