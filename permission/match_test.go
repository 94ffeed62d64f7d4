package permission_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
)

// idp returns a pointer to an identity, for matcher calls.
func idp(server, tool string) *permission.Identity {
	return &permission.Identity{Server: server, Tool: tool}
}

// evalOne evaluates a single rule of behavior b for ctx without a registry.
func evalOne(t testing.TB, b permission.Behavior, rule string, ctx permission.Context) permission.Decision {
	t.Helper()
	var rules permission.Rules
	r := []permission.Rule{permission.ParseRule(rule)}
	switch b {
	case permission.BehaviorAllow:
		rules.Allow = r
	case permission.BehaviorAsk:
		rules.Ask = r
	default:
		rules.Deny = r
	}
	return permission.Evaluate(rules, ctx, nil).Decision
}

// TestMatchesMcpPatternFacts pins the "Matcher-level facts" of qwen-reference.md §3.2 that are
// stated on matchesMcpPattern (toolName, raw, aliases, identity as the tests pass them).
func TestMatchesMcpPatternFacts(t *testing.T) {
	dotted := permission.NewTool("foo.bar", "evil") // mcp__foo_bar__evil_1oxrpi0
	colon := permission.NewTool("foo:bar", "a.b")
	debug := permission.NewTool("github", "__debug")
	require.Equal(t, "mcp__github____debug", debug.Name)
	tests := []struct {
		name     string
		pattern  string
		toolName string
		raw      string
		aliases  []string
		id       *permission.Identity
		want     bool
	}{
		{"dotted server rule vs safe sibling", "mcp__foo.bar", "mcp__foo_bar__evil", "", nil, nil, false},
		{"dotted wildcard vs safe sibling", "mcp__foo.bar__*", "mcp__foo_bar__evil", "", nil, nil, false},
		{"dotted server rule with raw", "mcp__foo.bar", dotted.Name, "mcp__foo.bar__evil", nil, nil, true},
		{"dotted wildcard with raw", "mcp__foo.bar__*", dotted.Name, "mcp__foo.bar__evil", nil, nil, true},
		{"safe server rule", "mcp__foo_bar", "mcp__foo_bar__evil", "", nil, nil, true},
		{"bare star safe", "*", "mcp__foo_bar__evil", "", nil, nil, false},
		{"bare star dotted", "*", dotted.Name, "", nil, nil, false},
		{"mcp__* safe", "mcp__*", "mcp__foo_bar__evil", "", nil, nil, true},
		{"mcp__* dotted", "mcp__*", dotted.Name, "", nil, nil, true},
		// Without identity the flattened split is the accepted residual.
		{"no identity: mcp__foo vs foo_ tool", "mcp__foo", "mcp__foo____internal", "", nil, nil, true},
		{"no identity: mcp__foo__* vs foo_ tool", "mcp__foo__*", "mcp__foo____internal", "", nil, nil, true},
		// With identity {foo_, _internal}.
		{"foo_: mcp__foo", "mcp__foo", "mcp__foo____internal", "", nil, idp("foo_", "_internal"), false},
		{"foo_: mcp__foo_", "mcp__foo_", "mcp__foo____internal", "", nil, idp("foo_", "_internal"), true},
		{"foo_: mcp__foo__*", "mcp__foo__*", "mcp__foo____internal", "", nil, idp("foo_", "_internal"), false},
		{"foo_: mcp__foo___*", "mcp__foo___*", "mcp__foo____internal", "", nil, idp("foo_", "_internal"), true},
		{"foo_: mcp__foo____*", "mcp__foo____*", "mcp__foo____internal", "", nil, idp("foo_", "_internal"), true},
		{"foo_: mcp__foo____in*", "mcp__foo____in*", "mcp__foo____internal", "", nil, idp("foo_", "_internal"), true},
		{"foo_bar/baz: mcp__foo", "mcp__foo", "mcp__foo_bar__baz", "", nil, idp("foo_bar", "baz"), false},
		{"foo_bar/baz: mcp__foo_bar", "mcp__foo_bar", "mcp__foo_bar__baz", "", nil, idp("foo_bar", "baz"), true},
		{"foo_bar/evil: mcp__*", "mcp__*", "mcp__foo_bar__evil", "", nil, idp("foo_bar", "evil"), true},
		{"foo_bar/evil: mcp__foo*", "mcp__foo*", "mcp__foo_bar__evil", "", nil, idp("foo_bar", "evil"), true},
		{"foo_bar/evil: mcp__foo__*", "mcp__foo__*", "mcp__foo_bar__evil", "", nil, idp("foo_bar", "evil"), false},
		{"foo/deploy: sibling separator continuation", "mcp__foo___*", "mcp__foo__deploy", "", nil, idp("foo", "deploy"), false},
		{"foo/_internal: mcp__foo_* grant side", "mcp__foo_*", "mcp__foo___internal", "", []string{}, idp("foo", "_internal"), false},
		{"my__svc/deploy: mcp__my__svc*", "mcp__my__svc*", "mcp__my__svc__deploy", "", []string{}, idp("my__svc", "deploy"), true},
		{"github/__debug: mcp__github____*", "mcp__github____*", debug.Name, "", debug.PermissionAliases, idp("github", "__debug"), true},
		{"foo:bar/a.b: mcp__foo_bar", "mcp__foo_bar", colon.Name, "", colon.PermissionAliases, &colon.Identity, true},
		{"foo:bar/a.b: mcp__foo_bar__*", "mcp__foo_bar__*", colon.Name, "", colon.PermissionAliases, &colon.Identity, true},
		{"foo:bar/a.b: mcp__foo_bar__a_b*", "mcp__foo_bar__a_b*", colon.Name, "", colon.PermissionAliases, &colon.Identity, true},
		{"foo:bar/a.b: mcp__foo:bar", "mcp__foo:bar", colon.Name, "", colon.PermissionAliases, &colon.Identity, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, permission.MatchesMcpPattern(tt.pattern, tt.toolName, tt.raw, tt.aliases, tt.id))
		})
	}
}

// TestBareStarNeverMatches pins "matchesMcpPattern('*', x) = matchesToolPattern('*', x) =
// matchesRule(parseRule('*'), x) = false" at every layer and context level.
func TestBareStarNeverMatches(t *testing.T) {
	star := permission.ParseRule("*")
	for _, tool := range []permission.Tool{
		permission.NewTool("foo_bar", "evil"), permission.NewTool("foo.bar", "evil"),
		permission.NewTool("https://mcp.services.example.internal/sse?team=infra", "deploy"),
	} {
		for _, level := range []permission.ContextLevel{permission.ContextNone, permission.ContextAliases, permission.ContextProducer} {
			t.Run(tool.Name+"/"+string(level), func(t *testing.T) {
				ctx := tool.Context(level)
				assert.False(t, permission.MatchesMcpPattern("*", ctx.ToolName, tool.Raw, ctx.Aliases, ctx.Identity))
				assert.False(t, permission.MatchesToolPattern("*", ctx.ToolName, ctx.Aliases, ctx.Identity))
				assert.False(t, permission.MatchesRule(star, ctx, true))
				assert.False(t, permission.MatchesRule(star, ctx, false))
				assert.True(t, permission.MatchesRule(permission.ParseRule("mcp__*"), ctx, false))
			})
		}
	}
}

// TestRestrictiveFallbackFacts pins the facts that differ between the grant side and the
// blocklist/deny side (qwen-reference.md §3.2 "Matcher-level facts").
func TestRestrictiveFallbackFacts(t *testing.T) {
	t.Run("foo/_internal mcp__foo_* restricts but never grants", func(t *testing.T) {
		tool := permission.NewTool("foo", "_internal")
		ctx := tool.Context(permission.ContextProducer)
		assert.True(t, permission.MatchesToolPattern("mcp__foo_*", ctx.ToolName, ctx.Aliases, ctx.Identity))
		assert.Equal(t, permission.DecisionDeny, evalOne(t, permission.BehaviorDeny, "mcp__foo_*", ctx))
		assert.Equal(t, permission.DecisionDefault, evalOne(t, permission.BehaviorAllow, "mcp__foo_*", ctx))
	})
	t.Run("zybio.db blocklist needs the alias channel", func(t *testing.T) {
		tool := permission.NewTool("zybio.db", "literature.search_pubmed")
		assert.True(t, permission.MatchesToolPattern("mcp__zybio.db", tool.Name, tool.PermissionAliases, nil))
		assert.False(t, permission.MatchesToolPattern("mcp__zybio.db", tool.Name, nil, nil))
	})
	t.Run("shared legacy spelling of another server's verbatim name stays on the blocklist", func(t *testing.T) {
		attacker := permission.NewTool("foo:bar", `evil[a b#c#d"e~f|x`)
		const shared = "mcp__foo_bar__evil_a_b_c_d_e_f_x"
		require.Equal(t, shared, permission.NewTool("foo_bar", "evil_a_b_c_d_e_f_x").Name)
		require.Contains(t, attacker.PermissionAliases, shared)
		assert.True(t, permission.MatchesToolPattern(shared, attacker.Name, attacker.PermissionAliases, nil))
	})
	t.Run("mcp__ rule against a non-MCP tool enters the MCP branch and fails", func(t *testing.T) {
		ctx := permission.Context{ToolName: "x__github__deploy"}
		for _, restrictive := range []bool{true, false} {
			assert.False(t, permission.MatchesRule(permission.ParseRule("mcp__github"), ctx, restrictive))
		}
		assert.True(t, permission.MatchesRule(permission.ParseRule("mcp__github"),
			permission.NewTool("github", "deploy").Context(permission.ContextAliases), false))
	})
	t.Run("non-mcp wildcard rules reach MCP tools through the MCP branch", func(t *testing.T) {
		ctx := permission.NewTool("github", "deploy").Context(permission.ContextProducer)
		for _, r := range []string{"m*", "mcp*", "mcp_*"} {
			assert.True(t, permission.MatchesRule(permission.ParseRule(r), ctx, false), r)
			assert.True(t, permission.MatchesRule(permission.ParseRule(r), ctx, true), r)
		}
	})
	t.Run("mcp rule with a specifier never matches", func(t *testing.T) {
		ctx := permission.NewTool("srv", "tool").Context(permission.ContextProducer)
		assert.False(t, permission.MatchesRule(permission.ParseRule("mcp__srv__tool(x)"), ctx, true))
		assert.True(t, permission.MatchesRule(permission.ParseRule("mcp__srv__tool()"), ctx, true))
		assert.False(t, permission.MatchesRule(permission.ParseRule("mcp__srv__tool(x"), ctx, true))
	})
}

// TestWholeServerCoverage pins the key-shape facts of qwen-reference.md §3.2: keys whose
// registration lost the "__" separator, and bare-server own coverage at key lengths around
// the legacy vouching window.
func TestWholeServerCoverage(t *testing.T) {
	lost := []string{strings.Repeat("k", 53), "a.b-" + strings.Repeat("k", 50)}
	for _, key := range lost {
		tool := permission.NewTool(key, "tool")
		require.Len(t, strings.Split(tool.Name, "__"), 2, "registration lost its separator")
		ctx := tool.Context(permission.ContextAliases)
		for _, rule := range []string{"mcp__" + key, "mcp__" + key + "__*"} {
			t.Run(fmt.Sprintf("lost separator %d/%s", len(key), rule[len(rule)-3:]), func(t *testing.T) {
				assert.True(t, permission.MatchesRule(permission.ParseRule(rule), ctx, false))
				assert.True(t, permission.MatchesToolPattern(rule, tool.Name, tool.PermissionAliases, nil))
				assert.Equal(t, permission.DecisionDeny, evalOne(t, permission.BehaviorDeny, rule, ctx))
			})
		}
	}
	for _, n := range []int{21, 22, 23, 24, 30} {
		server := strings.Repeat("s", n)
		tool := permission.NewTool(server, strings.Repeat("t", 40))
		t.Run(fmt.Sprintf("own key length %d", n), func(t *testing.T) {
			assert.True(t, permission.MatchesToolPattern("mcp__"+server, tool.Name, tool.PermissionAliases, nil))
			assert.True(t, permission.MatchesToolPattern("mcp__"+server+"__*", tool.Name, tool.PermissionAliases, nil))
		})
	}
}

// TestCutRegistrationsRestrict pins "rules <registered>* and <registered[0:56]>* restrict
// (deny/ask)" for 63-unit registrations (restrictive prefix fallback).
func TestCutRegistrationsRestrict(t *testing.T) {
	tools := []permission.Tool{
		permission.NewTool("https://mcp.services.example.internal/sse?team=infra", "deploy"),
		permission.NewTool("https://mcp.services.example.internal/sse?team=inf", "run"),
		permission.NewTool(strings.Repeat("k", 53), "tool"),
		permission.NewTool("a.b-"+strings.Repeat("k", 50), "tool"),
	}
	for _, tool := range tools {
		require.Len(t, tool.Name, mcpname.MaxLength)
		ctx := tool.Context(permission.ContextProducer)
		for _, rule := range []string{tool.Name + "*", tool.Name[:56] + "*"} {
			t.Run(rule, func(t *testing.T) {
				assert.True(t, permission.MatchesToolPattern(rule, ctx.ToolName, ctx.Aliases, ctx.Identity))
				assert.Equal(t, permission.DecisionDeny, evalOne(t, permission.BehaviorDeny, rule, ctx))
				assert.Equal(t, permission.DecisionAsk, evalOne(t, permission.BehaviorAsk, rule, ctx))
			})
		}
		t.Run(tool.Name+"/foreign suffix", func(t *testing.T) {
			foreign := tool.Name[:len(tool.Name)-1] + "Z"
			assert.False(t, permission.MatchesToolPattern(foreign, ctx.ToolName, ctx.Aliases, ctx.Identity))
		})
	}
}

// TestColonServerDeniedAtEveryLength pins "foo:bar tool with raw length 15…80: deny
// mcp__foo:bar always → deny/disabled".
func TestColonServerDeniedAtEveryLength(t *testing.T) {
	for n := 15; n <= 80; n++ {
		tool := permission.NewTool("foo:bar", strings.Repeat("x", n-14))
		require.Equal(t, n, mcpname.Len(tool.Raw))
		assert.Equal(t, permission.DecisionDeny, evalOne(t, permission.BehaviorDeny, "mcp__foo:bar", tool.Context(permission.ContextAliases)), "raw length %d", n)
		assert.Equal(t, permission.DecisionDeny, evalOne(t, permission.BehaviorDeny, "mcp__foo:bar", tool.Context(permission.ContextProducer)), "raw length %d", n)
	}
}

// TestMatchesRuleNonMCP pins the documented simplification for built-in tools.
func TestMatchesRuleNonMCP(t *testing.T) {
	tests := []struct {
		rule, tool string
		want       bool
	}{
		{"Bash", "run_shell_command", true},
		{"Bash", "monitor", true},
		{"Monitor", "run_shell_command", false},
		{"Read", "grep_search", true},
		{"Read", "edit", false},
		{"Edit", "write_file", true},
		{"Agent", "agent", true},
		{"agent", "Task", true},
		{"Bash(git *)", "run_shell_command", false},
		{"Agent(model:opus)", "agent", false},
		{"mcp__github", "run_shell_command", false},
		{"*", "run_shell_command", false},
	}
	for _, tt := range tests {
		t.Run(tt.rule+"/"+tt.tool, func(t *testing.T) {
			assert.Equal(t, tt.want, permission.MatchesRule(permission.ParseRule(tt.rule), permission.Context{ToolName: tt.tool}, true))
		})
	}
}
