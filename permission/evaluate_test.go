package permission_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/permission"
)

// TestEvaluateOrder pins deny > ask > non-refused allow > default and the deciding rule.
func TestEvaluateOrder(t *testing.T) {
	reg := ids("foo_bar", "get_x", "foo:bar", "get+x")
	ctx := permission.NewTool("foo:bar", "get+x").Context(permission.ContextProducer)
	tests := []struct {
		name        string
		allow       []string
		ask         []string
		deny        []string
		want        permission.Decision
		wantRule    string
		wantRefused []string
	}{
		{"deny beats ask and allow", []string{"mcp__*"}, []string{"mcp__foo*"}, []string{"unrelated", "mcp__foo:bar"}, permission.DecisionDeny, "mcp__foo:bar", nil},
		{"ask beats allow", []string{"mcp__*"}, []string{"mcp__foo_bar__*"}, []string{"mcp__other"}, permission.DecisionAsk, "mcp__foo_bar__*", nil},
		{"refused allow falls through to the next", []string{"mcp__foo_bar", "mcp__foo_bar__*", "mcp__foo*"}, nil, nil, permission.DecisionAllow, "mcp__foo*",
			[]string{"mcp__foo_bar", "mcp__foo_bar__*"}},
		{"only refused allows give default", []string{"mcp__foo_bar__get_x"}, nil, nil, permission.DecisionDefault, "", []string{"mcp__foo_bar__get_x"}},
		{"no rules", nil, nil, nil, permission.DecisionDefault, "", nil},
		{"blank entries dropped", []string{"", "  "}, []string{" "}, []string{""}, permission.DecisionDefault, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := permission.Evaluate(permission.NewRules(tt.allow, tt.ask, tt.deny), ctx, reg)
			assert.Equal(t, tt.want, ev.Decision)
			if tt.wantRule == "" {
				assert.Nil(t, ev.Rule)
			} else {
				require.NotNil(t, ev.Rule)
				assert.Equal(t, tt.wantRule, ev.Rule.Raw)
			}
			var refused []string
			for _, r := range ev.Refused {
				refused = append(refused, r.Raw)
			}
			assert.Equal(t, tt.wantRefused, refused)
		})
	}
}

// TestRuleMatch pins the per-pair values the audit reports.
func TestRuleMatch(t *testing.T) {
	reg := ids("foo_bar", "get_x", "foo:bar", "get+x")
	other := permission.NewTool("foo:bar", "get+x").Context(permission.ContextProducer)
	safe := permission.NewTool("foo_bar", "get_x").Context(permission.ContextProducer)
	rule := permission.ParseRule("mcp__foo_bar")
	assert.Equal(t, permission.Refused, permission.RuleMatch(permission.BehaviorAllow, rule, other, reg))
	assert.Equal(t, permission.Matched, permission.RuleMatch(permission.BehaviorAllow, rule, other, nil))
	assert.Equal(t, permission.Matched, permission.RuleMatch(permission.BehaviorAllow, rule, safe, reg))
	assert.Equal(t, permission.Matched, permission.RuleMatch(permission.BehaviorDeny, rule, other, reg))
	assert.Equal(t, permission.NoMatch, permission.RuleMatch(permission.BehaviorDeny, permission.ParseRule("mcp__foo.bar"), other, reg))
	// Restrictive-only coverage: the same rule matches as deny, not as allow.
	f := permission.NewTool("foo", "_internal").Context(permission.ContextProducer)
	assert.Equal(t, permission.Matched, permission.RuleMatch(permission.BehaviorAsk, permission.ParseRule("mcp__foo_*"), f, nil))
	assert.Equal(t, permission.NoMatch, permission.RuleMatch(permission.BehaviorAllow, permission.ParseRule("mcp__foo_*"), f, nil))
}

// TestDecisionPriority pins Qwen Code's priority constants.
func TestDecisionPriority(t *testing.T) {
	assert.Equal(t, 3, permission.DecisionDeny.Priority())
	assert.Equal(t, 2, permission.DecisionAsk.Priority())
	assert.Equal(t, 1, permission.DecisionDefault.Priority())
	assert.Equal(t, 0, permission.DecisionAllow.Priority())
	assert.True(t, permission.BehaviorDeny.Restrictive())
	assert.True(t, permission.BehaviorAsk.Restrictive())
	assert.False(t, permission.BehaviorAllow.Restrictive())
}
