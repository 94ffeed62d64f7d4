package permission_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionfix/sessionfix/permission"
)

// ids builds a registry from "server", "tool" pairs.
func ids(pairs ...string) []permission.Identity {
	out := make([]permission.Identity, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, permission.Identity{Server: pairs[i], Tool: pairs[i+1]})
	}
	return out
}

// TestRegistryGuard replays scenarios of Qwen Code's mcp-grant-ambiguity.test.ts beyond the
// qwen-reference.md §3.2 selection: an allow rule evaluated for each tool against a live registry.
func TestRegistryGuard(t *testing.T) {
	tests := []struct {
		name     string
		rule     string
		registry []permission.Identity
		target   permission.Identity
		want     permission.Decision
	}{
		{"foo/bar unsafe sibling refused", "mcp__foo_bar", ids("foo_bar", "get_x", "foo/bar", "get+x"), permission.Identity{Server: "foo/bar", Tool: "get+x"}, permission.DecisionDefault},
		{"foo.bar unsafe sibling refused (wildcard)", "mcp__foo_bar__*", ids("foo_bar", "get_x", "foo.bar", "get+x"), permission.Identity{Server: "foo.bar", Tool: "get+x"}, permission.DecisionDefault},
		{"raw safe owner keeps wildcard", "mcp__foo_bar__*", ids("foo_bar", "get_x", "foo.bar", "get+x"), permission.Identity{Server: "foo_bar", Tool: "get_x"}, permission.DecisionAllow},
		{"unsafe owner alone keeps grant", "mcp__foo_bar", ids("foo:bar", "get+x"), permission.Identity{Server: "foo:bar", Tool: "get+x"}, permission.DecisionAllow},
		{"raw wildcard own (foo/__internal_debug)", "mcp__foo____i*", ids("foo", "__internal_debug", "foo_", "_internal_secret"), permission.Identity{Server: "foo", Tool: "__internal_debug"}, permission.DecisionAllow},
		{"raw wildcard foreign (foo_/_internal_secret)", "mcp__foo____i*", ids("foo", "__internal_debug", "foo_", "_internal_secret"), permission.Identity{Server: "foo_", Tool: "_internal_secret"}, permission.DecisionDefault},
		{"foreign alone gets it back", "mcp__foo____i*", ids("foo_", "_internal_secret"), permission.Identity{Server: "foo_", Tool: "_internal_secret"}, permission.DecisionAllow},
		{"mcp__foo___* own foo_", "mcp__foo___*", ids("foo_", "release", "foo", "_deploy"), permission.Identity{Server: "foo_", Tool: "release"}, permission.DecisionAllow},
		{"mcp__foo___* foreign foo", "mcp__foo___*", ids("foo_", "release", "foo", "_deploy"), permission.Identity{Server: "foo", Tool: "_deploy"}, permission.DecisionDefault},
		{"mcp__foo____* own foo", "mcp__foo____*", ids("foo", "__internal", "foo_", "_internal"), permission.Identity{Server: "foo", Tool: "__internal"}, permission.DecisionAllow},
		{"mcp__foo____* foreign foo_", "mcp__foo____*", ids("foo", "__internal", "foo_", "_internal"), permission.Identity{Server: "foo_", Tool: "_internal"}, permission.DecisionDefault},
		{"nested key foo::bar refused", "mcp__foo__*", ids("foo", "deploy", "foo::bar", "deploy"), permission.Identity{Server: "foo::bar", Tool: "deploy"}, permission.DecisionDefault},
		{"nested key foo::bar: own foo", "mcp__foo__*", ids("foo", "deploy", "foo::bar", "deploy"), permission.Identity{Server: "foo", Tool: "deploy"}, permission.DecisionAllow},
		{"nested bare server vs exact tool: exact", "mcp__foo__bar", ids("foo", "bar", "foo__bar", "deploy"), permission.Identity{Server: "foo", Tool: "bar"}, permission.DecisionAllow},
		{"nested bare server vs exact tool: nested", "mcp__foo__bar", ids("foo", "bar", "foo__bar", "deploy"), permission.Identity{Server: "foo__bar", Tool: "deploy"}, permission.DecisionDefault},
		{"nested bare server alone", "mcp__foo__bar", ids("foo__bar", "deploy"), permission.Identity{Server: "foo__bar", Tool: "deploy"}, permission.DecisionAllow},
		{"single nested producer bare", "mcp__my__svc", ids("my__svc", "_internal"), permission.Identity{Server: "my__svc", Tool: "_internal"}, permission.DecisionAllow},
		{"single nested producer wildcard", "mcp__my__svc___*", ids("my__svc", "_internal"), permission.Identity{Server: "my__svc", Tool: "_internal"}, permission.DecisionAllow},
		{"lossy prefix claimed by longer key: own", "mcp__foo_bar__deploy*", ids("foo.bar", "deploy", "foo_bar__deploy_service_prod", "x"), permission.Identity{Server: "foo.bar", Tool: "deploy"}, permission.DecisionDefault},
		{"lossy prefix claimed by longer key: longer", "mcp__foo_bar__deploy*", ids("foo:bar", "deploy", "foo_bar__deploy_service_prod", "x"), permission.Identity{Server: "foo_bar__deploy_service_prod", Tool: "x"}, permission.DecisionDefault},
		{"lossy prefix alone", "mcp__foo_bar__deploy*", ids("foo.bar", "deploy"), permission.Identity{Server: "foo.bar", Tool: "deploy"}, permission.DecisionAllow},
		{"lossy whole server, same key siblings", "mcp__foo_bar__*", ids("foo:bar", "deploy", "foo:bar", "restart"), permission.Identity{Server: "foo:bar", Tool: "restart"}, permission.DecisionAllow},
		{"tool prefix also names a server: first", "mcp__foo__bar__deploy*", ids("foo", "bar__deploy_x", "foo__bar", "deploy_y"), permission.Identity{Server: "foo", Tool: "bar__deploy_x"}, permission.DecisionDefault},
		{"tool prefix also names a server: second", "mcp__foo__bar__deploy*", ids("foo", "bar__deploy_x", "foo__bar", "deploy_y"), permission.Identity{Server: "foo__bar", Tool: "deploy_y"}, permission.DecisionDefault},
		{"tool prefix, one producer left", "mcp__foo__bar__deploy*", ids("foo", "bar__deploy_x"), permission.Identity{Server: "foo", Tool: "bar__deploy_x"}, permission.DecisionAllow},
		{"exact alias does not grant same-server sibling: own", "mcp__foo__get_x", ids("foo", "get_x", "foo", "get+x"), permission.Identity{Server: "foo", Tool: "get_x"}, permission.DecisionAllow},
		{"exact alias alone", "mcp__foo__get_x", ids("foo", "get+x"), permission.Identity{Server: "foo", Tool: "get+x"}, permission.DecisionAllow},
		{"explicit raw identity", "mcp__foo:bar__get+x", ids("foo_bar", "get_x", "foo:bar", "get+x"), permission.Identity{Server: "foo:bar", Tool: "get+x"}, permission.DecisionAllow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := permission.NewTool(tt.target.Server, tt.target.Tool).Context(permission.ContextProducer)
			rules := permission.NewRules([]string{tt.rule}, nil, nil)
			assert.Equal(t, tt.want, permission.Evaluate(rules, ctx, tt.registry).Decision)
		})
	}
}

// TestSharedCutHead pins "refuses a shared registered cut head across long server keys".
func TestSharedCutHead(t *testing.T) {
	first := permission.NewTool("https://mcp.services.example.internal/sse?team=abc.def", "deploy")
	second := permission.NewTool("https://mcp.services.example.internal/sse?team=abc.deg", "deploy")
	rule := first.Name[:56] + "*"
	assert.Equal(t, first.Name[:56], second.Name[:56])
	reg := []permission.Identity{first.Identity, second.Identity}
	rules := permission.NewRules([]string{rule}, nil, nil)
	for _, tool := range []permission.Tool{first, second} {
		ev := permission.Evaluate(rules, tool.Context(permission.ContextProducer), reg)
		assert.Equal(t, permission.DecisionDefault, ev.Decision)
		assert.Equal(t, []permission.Rule{permission.ParseRule(rule)}, ev.Refused)
	}
	assert.Equal(t, permission.DecisionAllow,
		permission.Evaluate(rules, first.Context(permission.ContextProducer), reg[:1]).Decision)
}

// TestGuardNeverWeakensRestrictions pins that deny and ask keep every claimant (the guard is
// grant-only).
func TestGuardNeverWeakensRestrictions(t *testing.T) {
	reg := ids("foo_bar", "get_x", "foo:bar", "get+x")
	for _, rule := range []string{"mcp__foo_bar", "mcp__foo_bar__*", "mcp__foo_bar__get_x"} {
		for _, id := range reg {
			ctx := permission.NewTool(id.Server, id.Tool).Context(permission.ContextProducer)
			assert.Equal(t, permission.DecisionDeny, permission.Evaluate(permission.NewRules(nil, nil, []string{rule}), ctx, reg).Decision, rule)
			assert.Equal(t, permission.DecisionAsk, permission.Evaluate(permission.NewRules(nil, []string{rule}, nil), ctx, reg).Decision, rule)
		}
	}
}

// TestIsMcpAllowAmbiguousOff pins that no registry or no identity turns the guard off, and that
// an empty registry cannot refuse.
func TestIsMcpAllowAmbiguousOff(t *testing.T) {
	id := &permission.Identity{Server: "foo:bar", Tool: "get+x"}
	reg := ids("foo_bar", "get_x", "foo:bar", "get+x")
	assert.True(t, permission.IsMcpAllowAmbiguous("mcp__foo_bar", id, reg))
	assert.False(t, permission.IsMcpAllowAmbiguous("mcp__foo_bar", id, nil))
	assert.False(t, permission.IsMcpAllowAmbiguous("mcp__foo_bar", nil, reg))
	for _, p := range []string{"mcp__foo_bar", "mcp__foo_bar__*", "mcp__foo_bar__get_x", "mcp__f*", strings.Repeat("x", 5)} {
		assert.False(t, permission.HasAmbiguousMcpGrant(p, *id, []permission.Identity{}), p)
	}
}

// TestAcknowledgedResidualE1 pins caveat R23-1 of qwen-reference.md §2.6: a legacy exact entry
// still grants foo:bar/a.b while foo_bar has an unrelated tool (scenario E1 grants), whereas
// the wildcard form is refused (E2).
func TestAcknowledgedResidualE1(t *testing.T) {
	reg := ids("foo:bar", "a.b", "foo_bar", "unrelated")
	ctx := permission.NewTool("foo:bar", "a.b").Context(permission.ContextProducer)
	assert.Equal(t, permission.DecisionAllow, permission.Evaluate(permission.NewRules([]string{"mcp__foo_bar__a.b"}, nil, nil), ctx, reg).Decision)
	assert.Equal(t, permission.DecisionDefault, permission.Evaluate(permission.NewRules([]string{"mcp__foo_bar__*"}, nil, nil), ctx, reg).Decision)
}
