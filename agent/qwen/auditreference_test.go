package qwen_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/agent/qwen/settings"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/permission/permissiontest"
	"github.com/sessionfix/sessionfix/permission/rules"
)

const (
	scenariosPath = "../../permission/testdata/scenarios.json"
	unitCasesPath = "../../permission/testdata/unit_cases.json"
)

// settingsFile renders a settings document (as a user would write it) and parses it with the
// settings reader, so the reference rows go through the same path as real files.
func settingsFile(t testing.TB, name string, servers map[string]bool, allow, ask, deny []string) *settings.File {
	t.Helper()
	doc := map[string]any{"$version": 3}
	if len(servers) > 0 {
		s := map[string]any{}
		for key, trust := range servers {
			s[key] = map[string]any{"command": "mcp-" + name, "trust": trust}
		}
		doc["mcpServers"] = s
	}
	perms := map[string][]string{}
	for k, v := range map[string][]string{"allow": allow, "ask": ask, "deny": deny} {
		if len(v) > 0 {
			perms[k] = v
		}
	}
	if len(perms) > 0 {
		doc["permissions"] = perms
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	require.NoError(t, err)
	f, err := settings.Parse(name+"/settings.json", data, settings.ScopeUser, nil)
	require.NoError(t, err)
	return f
}

// agentFile renders and parses a subagent file named "verifier".
func agentFile(t testing.TB, disallowed, localServers []string) *settings.Agent {
	t.Helper()
	var b strings.Builder
	b.WriteString("---\nname: verifier\ndescription: checks results\n")
	if len(disallowed) > 0 {
		b.WriteString("disallowedTools:\n")
		for _, d := range disallowed {
			fmt.Fprintf(&b, "  - %q\n", d)
		}
	}
	if len(localServers) > 0 {
		b.WriteString("mcpServers:\n")
		for _, k := range localServers {
			fmt.Fprintf(&b, "  %q:\n    command: local-server\n", k)
		}
	}
	b.WriteString("---\nYou verify.\n")
	a, err := settings.ParseAgent(".qwen/agents/verifier.md", []byte(b.String()))
	require.NoError(t, err)
	return a
}

func findTool(t testing.TB, rep *qwen.Report, id permission.Identity) qwen.Tool {
	t.Helper()
	for _, tool := range rep.Tools {
		if tool.Identity == id {
			return tool
		}
	}
	require.Failf(t, "tool not in the audit", "%+v", id)
	return qwen.Tool{}
}

// scenarioInput turns one qwen-reference.md §3.1 row into audit input: its servers become the inventory and
// the settings' mcpServers (agent-local ones go into the subagent's front matter instead),
// its rules a settings file, its subagent a .qwen/agents file whose calls the decisions describe.
func scenarioInput(t testing.TB, sc permissiontest.Scenario) qwen.Input {
	t.Helper()
	inv := mcpinventory.New()
	session := map[string]bool{}
	var local []string
	for _, s := range sc.Servers {
		inv.Add(s.Key, s.Trust, mcpinventory.SourceFile, s.Tools...)
		if s.AgentLocal {
			local = append(local, s.Key)
		} else {
			session[s.Key] = s.Trust
		}
	}
	in := qwen.Input{
		Settings:  settings.Merge(settingsFile(t, sc.ID, session, sc.Allow, sc.Ask, sc.Deny)),
		Inventory: inv,
		Mode:      sc.Mode,
	}
	if sc.Subagent != nil {
		in.Agents = []*settings.Agent{agentFile(t, sc.Subagent.DisallowedTools, local)}
		in.Agent = "verifier"
	}
	return in
}

// expectedDecision is the decision permission.Decide reaches for a call, in audit terms.
func expectedDecision(out permission.Outcome) qwen.Decision {
	switch out.Reason {
	case permission.ReasonDisallowed:
		return qwen.DecisionDisallowed
	case permission.ReasonDisabled:
		return qwen.DecisionDisabled
	}
	return qwen.Decision(out.Evaluation.Decision)
}

// TestScenarioMatrixThroughAudit replays every row of qwen-reference.md §3.1 through the
// audit: the target tool's outcome must be the real-CLI verdict, and its decision and
// deciding rule those of permission.Decide.
func TestScenarioMatrixThroughAudit(t *testing.T) {
	rows, err := permissiontest.LoadScenarios(scenariosPath)
	require.NoError(t, err)
	require.Len(t, rows, 58, "every row of the §3.1 table")
	for _, sc := range rows {
		t.Run(sc.ID, func(t *testing.T) {
			rep, err := qwen.Run(scenarioInput(t, sc))
			require.NoError(t, err)
			tool := findTool(t, rep, sc.Target)
			assert.Equal(t, sc.Registered, tool.Name, "registered name")
			assert.Equal(t, sc.Expected, tool.Now.Outcome, "outcome now: %+v", tool.Now)

			call, err := sc.Call()
			require.NoError(t, err)
			out := permission.Decide(call)
			assert.Equal(t, expectedDecision(out), tool.Now.Decision)
			switch {
			case out.Evaluation.Rule != nil:
				require.GreaterOrEqual(t, tool.Now.Rule, 0)
				assert.Equal(t, out.Evaluation.Rule.Raw, rep.Rules[tool.Now.Rule].Literal, "deciding rule")
			case tool.Now.Decision == qwen.DecisionDisallowed:
				require.GreaterOrEqual(t, tool.Now.Rule, 0)
				assert.Equal(t, qwen.DecisionDisallowed, tool.Now.Decision)
				assert.Equal(t, "disallowedTools", rep.Rules[tool.Now.Rule].Key)
			default:
				assert.Equal(t, -1, tool.Now.Rule)
			}
			// The before outcome follows the same layering as Decide for its own decision.
			assert.Equal(t, qwen.Outcome(tool.Before.Decision, tool.Trusted, sc.Mode), tool.Before.Outcome)
		})
	}
}

// TestScenarioPairs checks, for every §3.1 row with rules, that the target's pairs agree with
// its decision: the deciding rule's pair matches now, and every earlier rule of a more
// restrictive list does not.
func TestScenarioPairs(t *testing.T) {
	rows, err := permissiontest.LoadScenarios(scenariosPath)
	require.NoError(t, err)
	for _, sc := range rows {
		t.Run(sc.ID, func(t *testing.T) {
			rep, err := qwen.Run(scenarioInput(t, sc))
			require.NoError(t, err)
			pairs := evaluate(rep).Pairs
			require.Len(t, pairs, len(rep.Rules)*len(rep.Tools))
			tool := findTool(t, rep, sc.Target)
			if tool.Now.Rule < 0 {
				return
			}
			for _, p := range pairs {
				if p.Rule == tool.Now.Rule && rep.Tools[p.Tool].Identity == sc.Target {
					assert.Equal(t, rules.Matched, p.Now, "the deciding rule matches its tool")
				}
			}
		})
	}
}

// unitInput turns one §3.2 row into audit input: the live registry (or the tool alone when
// the row has none) as inventory and the single rule in its list.
func unitInput(t testing.TB, uc permissiontest.UnitCase) qwen.Input {
	t.Helper()
	inv := mcpinventory.New()
	inv.Add(uc.Server, false, mcpinventory.SourceFile, uc.Tool)
	for _, id := range uc.Registry {
		inv.Add(id.Server, false, mcpinventory.SourceFile, id.Tool)
	}
	var allow, ask, deny []string
	switch uc.Kind {
	case permission.BehaviorAllow:
		allow = []string{uc.Rule}
	case permission.BehaviorAsk:
		ask = []string{uc.Rule}
	default:
		deny = []string{uc.Rule}
	}
	return qwen.Input{Settings: settings.Merge(settingsFile(t, fmt.Sprint(uc.N), nil, allow, ask, deny)), Inventory: inv}
}

// TestUnitCasesThroughAudit replays every row of qwen-reference.md §3.2 through the audit.
// The audit models real calls, which always carry the producer context: rows taken with a
// producer context must give the table's decision; rows taken with less context (aliases,
// none) must give what permission.Evaluate gives with the producer context (for most of them
// the same value; the table's "unthreaded caller loses the deny" rows are the exceptions).
// In every row, the rule's pair says match exactly when it decided.
func TestUnitCasesThroughAudit(t *testing.T) {
	rows, err := permissiontest.LoadUnitCases(unitCasesPath)
	require.NoError(t, err)
	require.Len(t, rows, 71, "every row of the §3.2 table")
	producerRows := 0
	for _, uc := range rows {
		t.Run(uc.Name(), func(t *testing.T) {
			rep, err := qwen.Run(unitInput(t, uc))
			require.NoError(t, err)
			id := permission.Identity{Server: uc.Server, Tool: uc.Tool}
			tool := findTool(t, rep, id)
			require.Equal(t, uc.Registered, tool.Name)

			want := uc.Expected
			if uc.Ctx != permission.ContextProducer {
				reg := uc.Registry
				if reg == nil {
					reg = []permission.Identity{id}
				}
				want = permission.Evaluate(uc.Rules(), permission.NewTool(uc.Server, uc.Tool).Context(permission.ContextProducer), reg).Decision
			} else {
				producerRows++
			}
			assert.Equal(t, qwen.Decision(want), tool.Now.Decision)

			require.Len(t, rep.Rules, 1)
			for _, p := range evaluate(rep).Pairs {
				if rep.Tools[p.Tool].Identity != id {
					continue
				}
				if want == permission.DecisionDefault {
					assert.NotEqual(t, rules.Matched, p.Now)
				} else {
					assert.Equal(t, rules.Matched, p.Now)
					assert.Equal(t, 0, tool.Now.Rule)
				}
			}
		})
	}
	assert.Equal(t, 42, producerRows, "rows checked against the table itself")
}
