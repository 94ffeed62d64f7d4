package permission_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionfix/sessionfix/permission"
)

// TestParseRule covers the grammar of qwen-reference.md §2.3.
func TestParseRule(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  permission.Rule
	}{
		{"bare mcp name", "mcp__github__create_issue",
			permission.Rule{Raw: "mcp__github__create_issue", ToolName: "mcp__github__create_issue"}},
		{"trimmed", "  \tmcp__github\n", permission.Rule{Raw: "mcp__github", ToolName: "mcp__github"}},
		{"JS trim strips BOM and NBSP", "\uFEFF\u00a0mcp__x\u3000", permission.Rule{Raw: "mcp__x", ToolName: "mcp__x"}},
		{"JS trim keeps NEL", "\u0085mcp__x", permission.Rule{Raw: "\u0085mcp__x", ToolName: "\u0085mcp__x"}},
		{"wildcard kept", "mcp__foo*", permission.Rule{Raw: "mcp__foo*", ToolName: "mcp__foo*"}},
		{"bare star", "*", permission.Rule{Raw: "*", ToolName: "*"}},
		{"Bash alias", "Bash", permission.Rule{Raw: "Bash", ToolName: "run_shell_command"}},
		{"Read alias", "Read", permission.Rule{Raw: "Read", ToolName: "read_file"}},
		{"Edit alias", "Edit", permission.Rule{Raw: "Edit", ToolName: "edit"}},
		{"WebFetch alias", "WebFetch", permission.Rule{Raw: "WebFetch", ToolName: "web_fetch"}},
		{"Agent alias", "Agent", permission.Rule{Raw: "Agent", ToolName: "agent"}},
		{"Task alias", "Task", permission.Rule{Raw: "Task", ToolName: "agent"}},
		{"aliases are case-sensitive", "bash", permission.Rule{Raw: "bash", ToolName: "bash"}},
		{"no own-property trick", "constructor", permission.Rule{Raw: "constructor", ToolName: "constructor"}},
		{"command specifier legacy :*", "Bash(git:*)",
			permission.Rule{Raw: "Bash(git:*)", ToolName: "run_shell_command", Specifier: "git *", Kind: permission.KindCommand}},
		{"tool part trimmed", "Bash (ls)",
			permission.Rule{Raw: "Bash (ls)", ToolName: "run_shell_command", Specifier: "ls", Kind: permission.KindCommand}},
		{"path specifier", "Read(./secrets/**)",
			permission.Rule{Raw: "Read(./secrets/**)", ToolName: "read_file", Specifier: "./secrets/**", Kind: permission.KindPath}},
		{"domain specifier keeps colon", "WebFetch(domain:x.com)",
			permission.Rule{Raw: "WebFetch(domain:x.com)", ToolName: "web_fetch", Specifier: "domain:x.com", Kind: permission.KindDomain}},
		{"literal param matchers", "Agent(coder, model:opus,type:*)",
			permission.Rule{Raw: "Agent(coder, model:opus,type:*)", ToolName: "agent", Specifier: "coder", Kind: permission.KindLiteral,
				ParamMatchers: []permission.ParamMatcher{{Key: "model", ValuePattern: "opus"}, {Key: "type", ValuePattern: "*"}}}},
		{"literal bad key stays plain", "Agent(my-key:v)",
			permission.Rule{Raw: "Agent(my-key:v)", ToolName: "agent", Specifier: "my-key:v", Kind: permission.KindLiteral}},
		{"literal only matchers leaves no specifier", "Skill(skill:pdf)",
			permission.Rule{Raw: "Skill(skill:pdf)", ToolName: "skill", Kind: permission.KindLiteral,
				ParamMatchers: []permission.ParamMatcher{{Key: "skill", ValuePattern: "pdf"}}}},
		{"mcp specifier parses, no param matchers", "mcp__srv__tool(a:b)",
			permission.Rule{Raw: "mcp__srv__tool(a:b)", ToolName: "mcp__srv__tool", Specifier: "a:b", Kind: permission.KindLiteral}},
		{"empty parens = no specifier", "mcp__srv__tool()",
			permission.Rule{Raw: "mcp__srv__tool()", ToolName: "mcp__srv__tool"}},
		{"colon star outside command specifier is literal", "mcp__foo:bar_*",
			permission.Rule{Raw: "mcp__foo:bar_*", ToolName: "mcp__foo:bar_*"}},
		{"unclosed paren is invalid", "mcp__srv__tool(x",
			permission.Rule{Raw: "mcp__srv__tool(x", ToolName: "mcp__srv__tool", Invalid: true}},
		{"unclosed paren resolves alias", "Bash(ls",
			permission.Rule{Raw: "Bash(ls", ToolName: "run_shell_command", Invalid: true}},
		{"specifier runs to the last paren", "mcp__a(b)c)",
			permission.Rule{Raw: "mcp__a(b)c)", ToolName: "mcp__a", Specifier: "b)c", Kind: permission.KindLiteral}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, permission.ParseRule(tt.input))
		})
	}
}

// TestParseRulesDropsBlank checks that parseRules drops empty and whitespace-only entries and
// keeps invalid ones.
func TestParseRulesDropsBlank(t *testing.T) {
	got := permission.ParseRules([]string{"", "  ", "mcp__a", "mcp__b(", "\u00a0"})
	assert.Equal(t, []permission.Rule{
		{Raw: "mcp__a", ToolName: "mcp__a"},
		{Raw: "mcp__b(", ToolName: "mcp__b", Invalid: true},
	}, got)
}
