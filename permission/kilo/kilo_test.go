package kilo

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fixtures = "../../fixtures/kilo-real/"

// fixtureConfig reads kilo.json of the recording: its rules and its raw tools in config order.
func fixtureConfig(t *testing.T) ([]Rule, []Tool) {
	t.Helper()
	b, err := os.ReadFile(fixtures + "kilo.json")
	require.NoError(t, err)
	var doc struct {
		MCP        json.RawMessage `json:"mcp"`
		Permission json.RawMessage `json:"permission"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	rules, err := FromConfig(doc.Permission)
	require.NoError(t, err)
	dec := json.NewDecoder(strings.NewReader(string(doc.MCP)))
	_, err = dec.Token()
	require.NoError(t, err)
	var tools []Tool
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		var srv struct {
			Environment map[string]string `json:"environment"`
		}
		require.NoError(t, dec.Decode(&srv))
		for _, tl := range strings.Split(srv.Environment["TOOLS"], ",") {
			tools = append(tools, Tool{k.(string), tl})
		}
	}
	return rules, tools
}

// tsvRow is one row of rules.tsv.
type tsvRow struct{ release, rule, server, tool, name, outcome string }

func rulesTSV(t *testing.T) []tsvRow {
	t.Helper()
	b, err := os.ReadFile(fixtures + "rules.tsv")
	require.NoError(t, err)
	var out []tsvRow
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if i == 0 {
			continue
		}
		f := strings.Split(line, "\t")
		require.GreaterOrEqual(t, len(f), 6, line)
		out = append(out, tsvRow{f[0], f[1], f[2], f[3], f[4], f[5]})
	}
	return out
}

// TestOutcomesAgainstTheRecording: every measured 7.0.33 row of rules.tsv — the model name, the
// rule that decides (the row's rule column), and merged / ran / not offered (denied).
func TestOutcomesAgainstTheRecording(t *testing.T) {
	rules, tools := fixtureConfig(t)
	assert.Equal(t, []Rule{{"*", "*", Allow}, {"lit_get_data", "*", Allow}, {"foo_bar_deploy_prod", "*", Deny}, {"lit_____", "*", Allow}}, rules)
	outs := Outcomes(tools, BuildDefaults, rules)
	byTool := map[Tool]Outcome{}
	for _, o := range outs {
		byTool[o.Tool] = o
	}
	n := 0
	for _, row := range rulesTSV(t) {
		if row.release != "7.0.33" {
			continue
		}
		n++
		o, ok := byTool[Tool{row.server, row.tool}]
		require.True(t, ok, "%s/%s is a tool of kilo.json", row.server, row.tool)
		assert.Equal(t, row.name, o.Name, row.tool)
		key, val, _ := strings.Cut(row.rule, ": ")
		require.NotNil(t, o.Rule)
		assert.Equal(t, strings.Trim(key, `"`), o.Rule.Permission, "%s/%s decided by %s", row.server, row.tool, row.rule)
		assert.Equal(t, Action(strings.Trim(val, `"`)), o.Action)
		switch {
		case strings.HasPrefix(row.outcome, "merged"):
			assert.True(t, o.Shadowed, "%s/%s is merged into another tool", row.server, row.tool)
			assert.True(t, o.Offered)
		case strings.HasPrefix(row.outcome, "not offered (denied)"):
			assert.False(t, o.Offered, "%s/%s", row.server, row.tool)
			assert.Equal(t, Deny, o.Action)
		case strings.HasPrefix(row.outcome, "ran"):
			assert.True(t, o.Offered && !o.Shadowed && o.Action == Allow, "%s/%s ran: %+v", row.server, row.tool, o)
			assert.Equal(t, strings.Contains(row.outcome, "78 chars"), o.OverLong, row.tool)
		default:
			t.Fatalf("unexpected outcome %q", row.outcome)
		}
	}
	assert.Equal(t, 11, n, "every 7.0.33 row was checked")
	assert.Equal(t, Tool{"lit", "literature_search_pubmed"}, byTool[Tool{"lit", "literature.search_pubmed"}].Answers, "the later registration wins")
	assert.Equal(t, Tool{"foo_bar", "get_data"}, byTool[Tool{"foo.bar", "get_data"}].Answers)
}

// TestCoversTheDenyOfBothServers: the one deny spelled foo_bar_deploy_prod reaches deploy.prod
// of foo.bar and of foo_bar; "*" is no finding; lit_get_data reaches only lit's get+data.
func TestCoversTheDenyOfBothServers(t *testing.T) {
	rules, tools := fixtureConfig(t)
	cs := Covers(rules, tools)
	require.Len(t, cs, 1)
	assert.Equal(t, Cover{Rule: Rule{"foo_bar_deploy_prod", "*", Deny}, Index: 2, Names: []string{"foo_bar_deploy_prod"},
		Tools: []Tool{{"foo.bar", "deploy.prod"}, {"foo_bar", "deploy.prod"}}, Servers: []string{"foo.bar", "foo_bar"}}, cs[0])
	// A wildcard over one server's prefix reaches both servers that sanitize alike.
	cs = Covers([]Rule{{"foo_bar_*", "*", Ask}}, tools)
	require.Len(t, cs, 1)
	assert.Equal(t, []string{"foo.bar", "foo_bar"}, cs[0].Servers)
	// An exact rule reaching two raw tools of one server (their names merged).
	cs = Covers([]Rule{{"lit_literature_search_pubmed", "*", Deny}}, tools)
	require.Len(t, cs, 1)
	assert.Equal(t, []Tool{{"lit", "literature.search_pubmed"}, {"lit", "literature_search_pubmed"}}, cs[0].Tools)
	assert.Empty(t, Covers([]Rule{{"lit_*", "*", Deny}, {"*", "*", Allow}}, tools))
}

func TestFromConfig(t *testing.T) {
	rules, err := FromConfig([]byte(`"deny"`))
	require.NoError(t, err)
	assert.Equal(t, []Rule{{"*", "*", Deny}}, rules)
	// JavaScript key order: index-like keys first, ascending; a repeated key keeps its first
	// place and its last value.
	rules, err = FromConfig([]byte(`{"b": "allow", "10": "ask", "2": "deny", "a": {"*": "ask", "x y": "deny"}, "b": "deny", "02": "allow"}`))
	require.NoError(t, err)
	assert.Equal(t, []Rule{{"2", "*", Deny}, {"10", "*", Ask}, {"b", "*", Deny}, {"a", "*", Ask}, {"a", "x y", Deny}, {"02", "*", Allow}}, rules)
	for _, bad := range []string{`[]`, `{"a": "maybe"}`, `{"a": 1}`, `{"a": {"x": 2}}`, `"sometimes"`, ``} {
		_, err := FromConfig([]byte(bad))
		assert.ErrorIs(t, err, ErrBadPermission, bad)
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		s, p string
		want bool
	}{
		{"lit_get_data", "lit_get_data", true},
		{"lit_get_data", "lit_*", true},
		{"lit_get_data", "*data", true},
		{"lit_get_data", "lit_get_dat?", true},
		{"lit_get_data", "lit_get_dat", false},
		{"lit_get_data", "Lit_get_data", false},
		{"lit.get", "lit?get", true},
		{"lit_xget", "lit.get", false},
		{"ls", "ls *", true},
		{"ls -la", "ls *", true},
		{"lsx", "ls *", false},
		{"a😀b", "a??b", true},
		{"", "*", true},
		{"a\nb", "a*b", true},
	} {
		assert.Equal(t, c.want, Match(c.s, c.p), "%q ~ %q", c.s, c.p)
	}
}

func TestEvaluateLastMatchWins(t *testing.T) {
	cfg := []Rule{{"*", "*", Allow}, {"lit_*", "*", Deny}, {"lit_search", "*", Ask}}
	a, r := Evaluate("lit_search", BuildDefaults, cfg)
	assert.Equal(t, Ask, a)
	assert.Equal(t, &cfg[2], r)
	a, _ = Evaluate("lit_get", BuildDefaults, cfg)
	assert.Equal(t, Deny, a)
	assert.True(t, Disabled("lit_get", BuildDefaults, cfg))
	assert.False(t, Disabled("lit_search", BuildDefaults, cfg))
	a, r = Evaluate("x", nil)
	assert.Equal(t, Ask, a)
	assert.Nil(t, r)
	// A rule over one argument pattern decides no MCP call but, being the last match,
	// keeps the tool offered.
	narrow := []Rule{{"lit_*", "*", Deny}, {"lit_get", "secret*", Deny}}
	assert.False(t, Disabled("lit_get", narrow))
	a, _ = Evaluate("lit_get", narrow)
	assert.Equal(t, Deny, a)
}
