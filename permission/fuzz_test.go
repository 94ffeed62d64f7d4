package permission_test

import (
	"strings"
	"testing"

	"github.com/sessionfix/sessionfix/permission"
)

// FuzzParseRule checks that ParseRule never panics and keeps its grammar invariants.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"", "*", "mcp__foo*", "Bash(git:*)", "Agent(a, model:opus)", "mcp__x(", "x()", " (", "()", "\uFEFFRead(/a)\u0085", "mcp__a(b)c)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r := permission.ParseRule(in)
		if !strings.Contains(in, r.Raw) {
			t.Fatalf("Raw %q is not a substring of the input %q", r.Raw, in)
		}
		open := strings.IndexByte(r.Raw, '(')
		if r.Invalid != (open >= 0 && !strings.HasSuffix(r.Raw, ")")) {
			t.Fatalf("Invalid=%v for %q", r.Invalid, r.Raw)
		}
		if open < 0 && (r.Specifier != "" || r.ToolName != permission.ResolveToolName(r.Raw)) {
			t.Fatalf("rule without parentheses %q parsed as %+v", r.Raw, r)
		}
		if r.Specifier != "" && r.Kind == permission.KindNone {
			t.Fatalf("specifier %q without a kind in %q", r.Specifier, r.Raw)
		}
		if len(r.ParamMatchers) > 0 && r.Kind != permission.KindLiteral {
			t.Fatalf("param matchers on a %q specifier in %q", r.Kind, r.Raw)
		}
		if strings.HasPrefix(r.ToolName, "mcp__") && len(r.ParamMatchers) > 0 {
			t.Fatalf("MCP rule %q got param matchers", r.Raw)
		}
	})
}

// FuzzMcpMatchers checks invariants every MCP tool and rule must keep, at every context level:
// a bare "*" never matches; "mcp__*", the registered name and the exact raw identity always
// grant; whatever an allow rule matches, the same rule as deny/ask matches too (restrictive ⊇
// grant); the registry guard never refuses the exact raw identity nor a registered name that no
// other registered tool shares.
func FuzzMcpMatchers(f *testing.F) {
	seeds := [][4]string{
		{"foo.bar", "evil", "mcp__foo_bar__*", "foo_bar"},
		{"foo_", "_internal", "mcp__foo__*", "foo"},
		{"https://mcp.services.example.internal/sse?team=infra", "deploy", "mcp__https___mcp.services.ex*", "x"},
		{"a__b", "_hidden", "mcp__a__b___*", "a"},
		{"zybio.db", "search_pubmed", "mcp__zybio.db_*", "zybio_db"},
		{"k", strings.Repeat("t", 80), "mcp__k__ttt", "k"},
		{"🎉", "x", "m*", ""},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3])
	}
	levels := []permission.ContextLevel{permission.ContextNone, permission.ContextAliases, permission.ContextProducer}
	f.Fuzz(func(t *testing.T, server, tool, pattern, otherServer string) {
		tl := permission.NewTool(server, tool)
		rule := permission.ParseRule(pattern)
		star, all := permission.ParseRule("*"), permission.ParseRule("mcp__*")
		for _, level := range levels {
			ctx := tl.Context(level)
			for _, restrictive := range []bool{false, true} {
				if permission.MatchesRule(star, ctx, restrictive) {
					t.Fatalf("bare * matched %q (%s)", tl.Name, level)
				}
				if !permission.MatchesRule(all, ctx, restrictive) {
					t.Fatalf("mcp__* missed %q (%s)", tl.Name, level)
				}
			}
			if !permission.MatchesMcpName(tl.Name, tl.Name, ctx.Aliases, ctx.Identity) {
				t.Fatalf("registered name %q does not match itself (%s)", tl.Name, level)
			}
			if permission.MatchesRule(rule, ctx, false) && !permission.MatchesRule(rule, ctx, true) {
				t.Fatalf("rule %q grants %q but does not restrict it (%s)", pattern, tl.Name, level)
			}
		}
		ctx := tl.Context(permission.ContextProducer)
		if !strings.HasSuffix(tl.Raw, "*") && !permission.MatchesMcpName(tl.Raw, tl.Name, ctx.Aliases, ctx.Identity) {
			t.Fatalf("raw identity %q does not match its tool %q", tl.Raw, tl.Name)
		}
		other := permission.NewTool(otherServer, tool)
		reg := []permission.Identity{tl.Identity, other.Identity}
		if permission.HasAmbiguousMcpGrant(tl.Raw, tl.Identity, reg) {
			t.Fatalf("guard refused the exact raw identity %q", tl.Raw)
		}
		if other.Name != tl.Name && other.Identity != tl.Identity && permission.HasAmbiguousMcpGrant(tl.Name, tl.Identity, reg) {
			t.Fatalf("guard refused the unique registered name %q", tl.Name)
		}
	})
}
