package mcpname

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestClaudeName is the vector table of schemes.md §C.1 (#1–#13) with the stated lengths.
func TestClaudeName(t *testing.T) {
	tests := []struct {
		name, server, tool, want string
		units                    int
	}{
		{"#1", "github", "create_issue", "mcp__github__create_issue", 25},
		{"#2", "my-server", "get-user", "mcp__my-server__get-user", 24},
		{"#3", "fs", "read.file", "mcp__fs__read_file", 18},
		{"#4", "srv", "tool name with spaces", "mcp__srv__tool_name_with_spaces", 31},
		{"#5", "srv", "héllo", "mcp__srv__h_llo", 15},
		{"#6 emoji is two units", "srv", "🚀launch", "mcp__srv____launch", 18},
		{"#7 claude.ai server", "claude.ai Google Drive", "search", "mcp__claude_ai_Google_Drive__search", 35},
		{"#8 claude.ai collapse", "claude.ai  Slack!!", "post.message", "mcp__claude_ai_Slack__post_message", 34},
		{"#9 plugin", "plugin:chrome-devtools-mcp:chrome-devtools", "get_console_message",
			"mcp__plugin_chrome-devtools-mcp_chrome-devtools__get_console_message", 68},
		{"#10 plugin", "plugin:oh-my-claudecode:omc-tools", "lsp_diagnostics_directory",
			"mcp__plugin_oh-my-claudecode_omc-tools__lsp_diagnostics_directory", 65},
		{"#11 claude.ai long", "claude.ai Cloudflare Developer Platform", "search_cloudflare_documentation",
			"mcp__claude_ai_Cloudflare_Developer_Platform__search_cloudflare_documentation", 77},
		{"#12 ambiguous", "my..server", "a..b", "mcp__my__server__a__b", 21},
		{"#13 no truncation", "a", strings.Repeat("x", 60), "mcp__a__" + strings.Repeat("x", 60), 68},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ClaudeName(tt.server, tt.tool)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.units, Len(got))
			assert.Equal(t, tt.units <= 64, CodexNameAccepted(got, ChatCompletionsNameMax), "64 rule")
		})
	}
}

func TestClaudeNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain kept", "my-server_1", "my-server_1"},
		{"runs kept without the claude.ai prefix", "a..b", "a__b"},
		{"claude.ai edges dropped", "claude.ai !x!", "claude_ai_x"},
		{"claude.ai one trailing dropped", "claude.ai x  ", "claude_ai_x"},
		{"prefix needs the space", "claude.aiX..y", "claude_aiX__y"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ClaudeNormalize(tt.in))
		})
	}
	assert.Equal(t, "mcp__claude_ai_Slack__", ClaudePrefix("claude.ai  Slack!!"))
}
