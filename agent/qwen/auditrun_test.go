package qwen_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/agent/qwen/settings"
	"github.com/sessionfix/sessionfix/audit"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/permission/rules"
)

func TestLegacyMatch(t *testing.T) {
	tests := []struct {
		name, pattern, legacy string
		want                  bool
	}{
		{"exact legacy spelling", "mcp__lit__literature.search_pubmed", "mcp__lit__literature.search_pubmed", true},
		{"registered spelling is not the legacy one", "mcp__lit__literature_search_pubmed_1nv53db", "mcp__lit__literature.search_pubmed", false},
		{"prefix wildcard", "mcp__foo.bar__*", "mcp__foo.bar__get_data", true},
		{"prefix wildcard inside the server key", "mcp__foo*", "mcp__foo.bar__get_data", true},
		{"prefix wildcard of another server", "mcp__foo_bar__*", "mcp__foo.bar__get_data", false},
		{"bare star never matched", "*", "mcp__foo.bar__get_data", false},
		{"non-mcp prefix wildcard", "m*", "mcp__github__create_issue", true},
		{"whole server, second field", "mcp__foo.bar", "mcp__foo.bar__get_data", true},
		{"whole server, other key", "mcp__foo", "mcp__foo.bar__get_data", false},
		{"whole server, flattened split", "mcp__foo", "mcp__foo____internal", true},
		{"whole server with __ in the key never equals one field", "mcp__a__b", "mcp__a__b___hidden", false},
		{"truncated legacy spelling, exact", "mcp__lit__get_data_for_a_spe___location_and_date_range_extended",
			"mcp__lit__get_data_for_a_spe___location_and_date_range_extended", true},
		{"built-in rule", "read_file", "mcp__lit__ok_tool", false},
		{"empty pattern", "", "mcp__lit__ok_tool", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, qwen.LegacyMatch(tt.pattern, tt.legacy))
		})
	}
}

// TestChangeOf: Qwen Code's matches as the engine's (Refused is NotApplied: a refused grant
// that matched before is lost, one that did not is no gain).
func TestChangeOf(t *testing.T) {
	inv := mcpinventory.New()
	inv.Add("foo:bar", false, mcpinventory.SourceFile, "a.b")
	inv.Add("foo_bar", false, mcpinventory.SourceFile, "unrelated")
	inv.Add("foo.bar", false, mcpinventory.SourceFile, "c")
	rep := run(t, `{"permissions": {"allow": ["mcp__foo_bar__*"], "deny": ["mcp__foo.bar__c"]}}`, inv)
	e := rep.Evaluation()
	got := map[[2]rules.Match]permission.Change{}
	for i := range e.Rules {
		for j := range e.Tools {
			now, before := e.Now.Match(i, j), e.Before.Match(i, j)
			got[[2]rules.Match{now, before}] = rules.ChangeOf(now, before)
		}
	}
	assert.Equal(t, map[[2]rules.Match]permission.Change{
		{rules.NotApplied, rules.Matched}: permission.ChangeLost, // foo:bar/a.b: legacy mcp__foo_bar__a.b
		{rules.NotApplied, rules.No}:      permission.ChangeSame, // foo.bar/c: refused, never matched
		{rules.Matched, rules.Matched}:    permission.ChangeSame,
		{rules.No, rules.No}:              permission.ChangeSame,
	}, got)
}

// TestOutcomeAgreesWithDecide checks the before-side layering (Outcome) against
// permission.Decide for every decision it can reach, in every mode and trust.
func TestOutcomeAgreesWithDecide(t *testing.T) {
	tool := permission.NewTool("srv", "t")
	rulesFor := map[qwen.Decision]permission.Rules{
		qwen.DecisionDeny:    permission.NewRules(nil, nil, []string{"mcp__srv"}),
		qwen.DecisionAsk:     permission.NewRules(nil, []string{"mcp__srv"}, nil),
		qwen.DecisionAllow:   permission.NewRules([]string{"mcp__srv"}, nil, nil),
		qwen.DecisionDefault: {},
	}
	for _, mode := range []permission.Mode{permission.ModeDefault, permission.ModeYolo, permission.ModePlan, permission.ModeAutoEdit} {
		for _, trusted := range []bool{false, true} {
			for d, rules := range rulesFor {
				out := permission.Decide(permission.Call{Context: tool.Context(permission.ContextProducer), Trusted: trusted,
					Mode: mode, Rules: rules, Registry: []permission.Identity{tool.Identity}})
				assert.Equal(t, out.Verdict, qwen.Outcome(d, trusted, mode), "%s trusted=%v %s", mode, trusted, d)
			}
			gated := permission.Decide(permission.Call{Context: tool.Context(permission.ContextProducer), Trusted: trusted, Mode: mode, Disabled: true})
			for _, d := range []qwen.Decision{qwen.DecisionExcluded, qwen.DecisionDisabled, qwen.DecisionDisallowed} {
				assert.Equal(t, gated.Verdict, qwen.Outcome(d, trusted, mode))
			}
		}
	}
}

func loadFixture(t testing.TB) qwen.Input {
	t.Helper()
	const dir = "../../fixtures/qwen-settings/"
	user, err := settings.Load(dir+"settings.json", settings.ScopeUser, nil)
	require.NoError(t, err)
	ws, err := settings.Load(dir+"workspace/.qwen/settings.json", settings.ScopeWorkspace, nil)
	require.NoError(t, err)
	agents, errs := settings.LoadAgentsDir(dir + "workspace/.qwen/agents")
	require.Empty(t, errs)
	inv, err := mcpinventory.Load(dir + "inventory.json")
	require.NoError(t, err)
	return qwen.Input{Settings: settings.Merge(user, ws), Agents: agents, Inventory: inv}
}

type pairKey struct{ rule, server, tool string }

// evaluate is the engine's evaluation of the report (rule-major, as Qwen Code's reports list
// the pairs).
func evaluate(rep *qwen.Report) *rules.Result { return rules.Evaluate(rep.Evaluation(), rules.Order{}) }

func pairsByKey(rep *qwen.Report) map[pairKey]rules.Pair {
	out := map[pairKey]rules.Pair{}
	for _, p := range evaluate(rep).Pairs {
		t := rep.Tools[p.Tool]
		out[pairKey{rep.Rules[p.Rule].Literal, t.Identity.Server, t.Identity.Tool}] = p
	}
	return out
}

// TestFixture pins the audit of fixtures/qwen-settings (user + workspace settings, the
// verifier subagent, inventory.json).
func TestFixture(t *testing.T) {
	rep, err := qwen.Run(loadFixture(t))
	require.NoError(t, err)
	res := evaluate(rep)
	c := res.Counts
	assert.Equal(t, [6]int{18, 12, 26, 1, 3, 0}, [6]int{c.Rules, c.Tools, c.Pairs, c.Lost, c.Gained, c.NotApplied})
	assert.False(t, rep.Inferred())
	assert.Len(t, res.Pairs, 18*12)

	pairs := pairsByKey(rep)
	tests := []struct {
		name        string
		key         pairKey
		now, before rules.Match
		change      permission.Change
	}{
		{"truncated legacy allow is no longer published for a 29-unit key",
			pairKey{"mcp__com.example.enterprise-___documents_by_semantic_similarity", "com.example.enterprise-search", "query_documents_by_semantic_similarity"},
			rules.No, rules.Matched, permission.ChangeLost},
		{"registered-name allow written by a new version",
			pairKey{"mcp__foo_bar__get_data_0xybsnb", "foo.bar", "get_data"}, rules.Matched, rules.No, permission.ChangeGained},
		{"ask for the underscore server now also restricts the dotted one",
			pairKey{"mcp__foo_bar__*", "foo.bar", "deploy.prod"}, rules.Matched, rules.No, permission.ChangeGained},
		{"ask for the underscore server, its own tool",
			pairKey{"mcp__foo_bar__*", "foo_bar", "evil"}, rules.Matched, rules.Matched, permission.ChangeSame},
		{"dotted whole-server allow does not reach foo_bar",
			pairKey{"mcp__foo.bar", "foo_bar", "evil"}, rules.No, rules.No, permission.ChangeSame},
		{"dotted whole-server allow keeps its own server",
			pairKey{"mcp__foo.bar", "foo.bar", "get_data"}, rules.Matched, rules.Matched, permission.ChangeSame},
		{"legacy exact deny through the raw alias",
			pairKey{"mcp__foo.bar__deploy.prod", "foo.bar", "deploy.prod"}, rules.Matched, rules.Matched, permission.ChangeSame},
		{"tools.disabled legacy entry", pairKey{"mcp__foo.bar__get_data", "foo.bar", "get_data"}, rules.Matched, rules.Matched, permission.ChangeSame},
		{"tools.disabled legacy entry does not disable the colliding server",
			pairKey{"mcp__foo.bar__get_data", "foo_bar", "get_data"}, rules.No, rules.No, permission.ChangeSame},
		{"excludeTools compares the raw name", pairKey{"deploy.prod", "foo.bar", "deploy.prod"}, rules.Matched, rules.Matched, permission.ChangeSame},
		{"excludeTools is per server", pairKey{"deploy.prod", "foo_bar", "evil"}, rules.No, rules.No, permission.ChangeSame},
		{"subagent blocklist", pairKey{"mcp__com.example.enterprise-search__list", "com.example.enterprise-search", "list"}, rules.Matched, rules.Matched, permission.ChangeSame},
		{"tools.exclude CJK legacy spelling", pairKey{"mcp__lit______", "lit", "搜索文献"}, rules.Matched, rules.Matched, permission.ChangeSame},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := pairs[tt.key]
			require.True(t, ok)
			assert.Equal(t, tt.now, p.Now, "now")
			assert.Equal(t, tt.before, p.Before, "before")
			assert.Equal(t, tt.change, p.Change, "change")
		})
	}

	decisions := map[string][2]qwen.Decision{}
	outcomes := map[string][2]permission.Verdict{}
	for _, tool := range rep.Tools {
		k := tool.Identity.Server + "/" + tool.Identity.Tool
		decisions[k] = [2]qwen.Decision{tool.Now.Decision, tool.Before.Decision}
		outcomes[k] = [2]permission.Verdict{tool.Now.Outcome, tool.Before.Outcome}
	}
	assert.Equal(t, map[string][2]qwen.Decision{
		"com.example.enterprise-search/list":                                   {qwen.DecisionDefault, qwen.DecisionDefault},
		"com.example.enterprise-search/query_documents_by_semantic_similarity": {qwen.DecisionDefault, qwen.DecisionAllow},
		"foo.bar/deploy.prod":                                                  {qwen.DecisionExcluded, qwen.DecisionExcluded},
		"foo.bar/get_data":                                                     {qwen.DecisionDisabled, qwen.DecisionDisabled},
		"foo_bar/evil":                                                         {qwen.DecisionDeny, qwen.DecisionDeny},
		"foo_bar/get_data":                                                     {qwen.DecisionAsk, qwen.DecisionAsk},
		"lit/get+data":                                                         {qwen.DecisionAllow, qwen.DecisionAllow},
		"lit/get_data_for_a_specific_location_and_date_range_extended": {qwen.DecisionDeny, qwen.DecisionDeny},
		"lit/literature.search_pubmed":                                 {qwen.DecisionAllow, qwen.DecisionAllow},
		"lit/literature_search_pubmed":                                 {qwen.DecisionAllow, qwen.DecisionAllow},
		"lit/ok_tool":                                                  {qwen.DecisionAllow, qwen.DecisionAllow},
		"lit/搜索文献":                                                     {qwen.DecisionDeny, qwen.DecisionDeny},
	}, decisions)
	assert.Equal(t, [2]permission.Verdict{permission.VerdictRan, permission.VerdictRan},
		outcomes["com.example.enterprise-search/query_documents_by_semantic_similarity"], "trusted server: ran either way")
	assert.Equal(t, [2]permission.Verdict{permission.VerdictAsk, permission.VerdictAsk}, outcomes["foo_bar/get_data"])

	// Tool decisions name their rule with its origin.
	for _, tool := range rep.Tools {
		if tool.Identity.Server == "foo_bar" && tool.Identity.Tool == "evil" {
			r := rep.Rules[tool.Now.Rule]
			assert.Equal(t, "permissions.deny", r.Key)
			assert.Equal(t, settings.ScopeWorkspace, r.Scope)
			assert.Equal(t, 0, r.Index)
		}
	}
}

// TestFixtureAsSubagent describes the verifier subagent's calls: its blocklist hides the
// dotted server and the enterprise list tool.
func TestFixtureAsSubagent(t *testing.T) {
	in := loadFixture(t)
	in.Agent = "verifier"
	rep, err := qwen.Run(in)
	require.NoError(t, err)
	for _, tool := range rep.Tools {
		if tool.Identity == (permission.Identity{Server: "com.example.enterprise-search", Tool: "list"}) {
			assert.Equal(t, qwen.DecisionDisallowed, tool.Now.Decision)
			assert.Equal(t, permission.VerdictBlock, tool.Now.Outcome)
			assert.Equal(t, "mcp__com.example.enterprise-search__list", rep.Rules[tool.Now.Rule].Literal)
			assert.Equal(t, qwen.DecisionDisallowed, tool.Before.Decision)
		}
	}

	in.Agent = "nobody"
	_, err = qwen.Run(in)
	assert.ErrorIs(t, err, qwen.ErrUnknownAgent)
}

func parse(t testing.TB, doc string) *settings.File {
	t.Helper()
	f, err := settings.Parse("settings.json", []byte(doc), settings.ScopeUser, settings.Env{"SRV": "foo.bar"})
	require.NoError(t, err)
	return f
}

func run(t testing.TB, doc string, inv *mcpinventory.Inventory) *qwen.Report {
	t.Helper()
	rep, err := qwen.Run(qwen.Input{Settings: settings.Merge(parse(t, doc)), Inventory: inv})
	require.NoError(t, err)
	return rep
}

func toolOf(rep *qwen.Report, server, tool string) qwen.Tool {
	for _, t := range rep.Tools {
		if t.Identity == (permission.Identity{Server: server, Tool: tool}) {
			return t
		}
	}
	return qwen.Tool{}
}

func TestRefusedGrantIsLost(t *testing.T) {
	inv := mcpinventory.New()
	inv.Add("foo.bar", false, mcpinventory.SourceFile, "evil")
	inv.Add("foo_bar", false, mcpinventory.SourceFile, "evil")
	rep := run(t, `{"permissions": {"allow": ["mcp__foo_bar__*"]}}`, inv)
	assert.Equal(t, 1, evaluate(rep).Counts.NotApplied)
	pairs := pairsByKey(rep)
	p := pairs[pairKey{"mcp__foo_bar__*", "foo.bar", "evil"}]
	assert.Equal(t, rules.NotApplied, p.Now, "P1: the dotted server's grant is refused")
	assert.Equal(t, rules.No, p.Before)
	assert.Equal(t, permission.ChangeSame, p.Change, "no → refused is no gain")
	assert.Equal(t, rules.Matched, pairs[pairKey{"mcp__foo_bar__*", "foo_bar", "evil"}].Now)

	dotted := toolOf(rep, "foo.bar", "evil")
	assert.Equal(t, qwen.DecisionDefault, dotted.Now.Decision)
	assert.Equal(t, []int{0}, dotted.Now.Refused)
	assert.Equal(t, permission.VerdictAsk, dotted.Now.Outcome)

	// E2: a grant that matched the legacy spelling and is refused now is lost.
	inv = mcpinventory.New()
	inv.Add("foo:bar", false, mcpinventory.SourceFile, "a.b")
	inv.Add("foo_bar", false, mcpinventory.SourceFile, "unrelated")
	rep = run(t, `{"permissions": {"allow": ["mcp__foo_bar__*"]}}`, inv)
	p = pairsByKey(rep)[pairKey{"mcp__foo_bar__*", "foo:bar", "a.b"}]
	assert.Equal(t, rules.NotApplied, p.Now)
	assert.Equal(t, rules.Matched, p.Before, "legacy mcp__foo_bar__a.b starts with the prefix")
	assert.Equal(t, permission.ChangeLost, p.Change)
	c := evaluate(rep).Counts
	assert.Equal(t, [6]int{1, 2, 2, 1, 0, 1}, [6]int{c.Rules, c.Tools, c.Pairs, c.Lost, c.Gained, c.NotApplied})
	colon := toolOf(rep, "foo:bar", "a.b")
	assert.Equal(t, [2]qwen.Decision{qwen.DecisionDefault, qwen.DecisionAllow}, [2]qwen.Decision{colon.Now.Decision, colon.Before.Decision})
	assert.Equal(t, [2]permission.Verdict{permission.VerdictAsk, permission.VerdictRan}, [2]permission.Verdict{colon.Now.Outcome, colon.Before.Outcome})
}

func TestRegistrationGates(t *testing.T) {
	inv := mcpinventory.New()
	inv.Add("a", false, mcpinventory.SourceFile, "x", "y")
	inv.Add("b", true, mcpinventory.SourceFile, "x")
	inv.Add("scratch-1", false, mcpinventory.SourceFile, "x")
	tests := []struct {
		name string
		doc  string
		want map[string]qwen.Decision
		note map[string]string
	}{
		{"no gates", `{}`, map[string]qwen.Decision{"a/x": qwen.DecisionDefault, "a/y": qwen.DecisionDefault, "b/x": qwen.DecisionDefault, "scratch-1/x": qwen.DecisionDefault}, nil},
		{"mcp.excluded glob", `{"mcp": {"excluded": ["scratch-?"]}}`,
			map[string]qwen.Decision{"a/x": qwen.DecisionDefault, "scratch-1/x": qwen.DecisionExcluded}, nil},
		{"mcp.allowed set", `{"mcp": {"allowed": ["a"]}}`,
			map[string]qwen.Decision{"a/x": qwen.DecisionDefault, "b/x": qwen.DecisionExcluded},
			map[string]string{"b/x": "server not in mcp.allowed"}},
		{"empty mcp.allowed lets no server through", `{"mcp": {"allowed": []}}`,
			map[string]qwen.Decision{"a/x": qwen.DecisionExcluded, "b/x": qwen.DecisionExcluded}, nil},
		{"includeTools", `{"mcpServers": {"a": {"command": "a", "includeTools": ["x(id)"]}}}`,
			map[string]qwen.Decision{"a/x": qwen.DecisionDefault, "a/y": qwen.DecisionExcluded, "b/x": qwen.DecisionDefault},
			map[string]string{"a/y": "tool not in includeTools"}},
		{"empty includeTools lets no tool through", `{"mcpServers": {"a": {"command": "a", "includeTools": []}}}`,
			map[string]qwen.Decision{"a/x": qwen.DecisionExcluded, "a/y": qwen.DecisionExcluded}, nil},
		{"excludeTools wins over includeTools", `{"mcpServers": {"a": {"command": "a", "includeTools": ["x"], "excludeTools": ["x"]}}}`,
			map[string]qwen.Decision{"a/x": qwen.DecisionExcluded}, nil},
		{"tools.disabled", `{"tools": {"disabled": ["mcp__a__y"]}}`,
			map[string]qwen.Decision{"a/x": qwen.DecisionDefault, "a/y": qwen.DecisionDisabled}, nil},
		{"deny comes after the gates", `{"tools": {"disabled": ["mcp__a__y"]}, "permissions": {"deny": ["mcp__a"]}}`,
			map[string]qwen.Decision{"a/x": qwen.DecisionDeny, "a/y": qwen.DecisionDisabled}, nil},
		{"settings trust overrides the inventory", `{"mcpServers": {"b": {"command": "b", "trust": false}}}`,
			map[string]qwen.Decision{"b/x": qwen.DecisionDefault}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := run(t, tt.doc, inv)
			for k, want := range tt.want {
				server, tool, _ := strings.Cut(k, "/")
				got := toolOf(rep, server, tool)
				assert.Equal(t, want, got.Now.Decision, k)
				assert.Equal(t, want, got.Before.Decision, "%s before", k)
				if n, ok := tt.note[k]; ok {
					assert.Equal(t, n, got.Now.Note)
					assert.Equal(t, "("+n+")", table(rep).Tools.Rows[slices.IndexFunc(rep.Tools, func(x qwen.Tool) bool { return x.Identity == got.Identity })][5])
				}
			}
		})
	}
	// trust: b is trusted in the inventory, and not when the settings say so.
	assert.Equal(t, permission.VerdictRan, toolOf(run(t, `{}`, inv), "b", "x").Now.Outcome)
	assert.Equal(t, permission.VerdictAsk, toolOf(run(t, `{"mcpServers": {"b": {"command": "b", "trust": false}}}`, inv), "b", "x").Now.Outcome)
}

// TestRulesPrintAsWritten: rules are matched after $VAR expansion but reported as written,
// so an environment value never reaches a report.
func TestRulesPrintAsWritten(t *testing.T) {
	inv := mcpinventory.New()
	inv.Add("foo.bar", false, mcpinventory.SourceFile, "get_data")
	rep := run(t, `{"permissions": {"deny": ["mcp__$SRV"]}}`, inv)
	tool := toolOf(rep, "foo.bar", "get_data")
	assert.Equal(t, qwen.DecisionDeny, tool.Now.Decision, "matched after expansion")
	r := table(rep)
	require.Len(t, r.Pairs.Rows, 1)
	assert.Equal(t, "mcp__$SRV", r.Pairs.Rows[0][4])
	assert.Equal(t, "mcp__$SRV", r.Tools.Rows[0][5])
}

func TestTables(t *testing.T) {
	inv := mcpinventory.New()
	inv.Add("lit", false, mcpinventory.SourceInferred, "ok_tool")
	rep := run(t, `{"permissions": {"allow": ["mcp__lit", "Read"]}}`, inv)
	assert.True(t, rep.Inferred())
	r := table(rep)
	assert.Equal(t, append(append([]string{}, qwen.PairColumns...), "inventory"), r.Pairs.Columns)
	assert.Equal(t, [][]string{{"settings.json", "user", "permissions.allow", "0", "mcp__lit", "lit", "ok_tool",
		"mcp__lit__ok_tool", "match", "match", "same", "inferred"}}, r.Pairs.Rows)
	assert.Len(t, audit.Build(rep.RuleAudit(&qwen.Loaded{}, nil), true, time.Time{}, "test").Pairs.Rows, 2, "--all-pairs lists the built-in rule too")
	assert.Equal(t, [][]string{{"lit", "ok_tool", "mcp__lit__ok_tool", "mcp__lit__ok_tool", "allow", "mcp__lit", "ran",
		"allow", "mcp__lit", "ran", "inferred"}}, r.Tools.Rows)
	assert.Len(t, qwen.PairColumns, 11)
	assert.Len(t, qwen.ToolColumns, 10)
}

// table is the engine's report of rep (the pairs listed by default).
func table(rep *qwen.Report) *audit.Report {
	return audit.Build(rep.RuleAudit(&qwen.Loaded{}, nil), false, time.Time{}, "test")
}
