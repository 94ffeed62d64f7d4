package permission_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionfix/sessionfix/permission"
)

// TestDecide covers the layers of qwen-reference.md §2.2 beyond the §3.1 matrix: L1 gates,
// reasons, and the plan / auto-edit modes.
func TestDecide(t *testing.T) {
	tool := permission.NewTool("github", "create_issue")
	ctx := tool.Context(permission.ContextProducer)
	reg := []permission.Identity{tool.Identity}
	allow := permission.NewRules([]string{"mcp__github"}, nil, nil)
	ask := permission.NewRules(nil, []string{"mcp__github"}, nil)
	deny := permission.NewRules(nil, nil, []string{"mcp__github"})
	tests := []struct {
		name        string
		call        permission.Call
		wantVerdict permission.Verdict
		wantReason  permission.Reason
		wantFinal   permission.Decision
	}{
		{"disabled blocks before rules", permission.Call{Context: ctx, Rules: allow, Disabled: true, Mode: permission.ModeYolo},
			permission.VerdictBlock, permission.ReasonDisabled, ""},
		{"subagent blocklist", permission.Call{Context: ctx, Rules: allow, DisallowedTools: []string{"mcp__github__*"}, Mode: permission.ModeYolo},
			permission.VerdictBlock, permission.ReasonDisallowed, ""},
		{"empty blocklist", permission.Call{Context: ctx, DisallowedTools: []string{}, Mode: permission.ModeYolo},
			permission.VerdictRan, permission.ReasonYolo, permission.DecisionAsk},
		{"deny beats trust and yolo", permission.Call{Context: ctx, Rules: deny, Trusted: true, Mode: permission.ModeYolo, Registry: reg},
			permission.VerdictBlock, permission.ReasonDenyRule, permission.DecisionDeny},
		{"untrusted default asks", permission.Call{Context: ctx},
			permission.VerdictAsk, permission.ReasonDefault, permission.DecisionAsk},
		{"trusted server runs", permission.Call{Context: ctx, Trusted: true, Mode: permission.ModeDefault},
			permission.VerdictRan, permission.ReasonTrusted, permission.DecisionAllow},
		{"ask rule beats trust", permission.Call{Context: ctx, Rules: ask, Trusted: true},
			permission.VerdictAsk, permission.ReasonAskRule, permission.DecisionAsk},
		{"yolo runs an ask rule", permission.Call{Context: ctx, Rules: ask, Mode: permission.ModeYolo},
			permission.VerdictRan, permission.ReasonYolo, permission.DecisionAsk},
		{"allow rule runs", permission.Call{Context: ctx, Rules: allow, Registry: reg},
			permission.VerdictRan, permission.ReasonAllowRule, permission.DecisionAllow},
		{"allow rule in yolo keeps its reason", permission.Call{Context: ctx, Rules: allow, Mode: permission.ModeYolo},
			permission.VerdictRan, permission.ReasonAllowRule, permission.DecisionAllow},
		{"plan blocks a confirmation", permission.Call{Context: ctx, Mode: permission.ModePlan},
			permission.VerdictBlock, permission.ReasonDefault, permission.DecisionAsk},
		{"plan runs an allowed call", permission.Call{Context: ctx, Rules: allow, Mode: permission.ModePlan},
			permission.VerdictRan, permission.ReasonAllowRule, permission.DecisionAllow},
		{"auto-edit still asks for mcp", permission.Call{Context: ctx, Mode: permission.ModeAutoEdit},
			permission.VerdictAsk, permission.ReasonDefault, permission.DecisionAsk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := permission.Decide(tt.call)
			assert.Equal(t, tt.wantVerdict, out.Verdict)
			assert.Equal(t, tt.wantReason, out.Reason)
			assert.Equal(t, tt.wantFinal, out.Final)
		})
	}
	assert.Equal(t, permission.DecisionAllow, permission.DefaultPermission(true))
	assert.Equal(t, permission.DecisionAsk, permission.DefaultPermission(false))
}
