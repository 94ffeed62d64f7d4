package claude

import (
	"context"
	"os"
	"path/filepath"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
)

// AuditHistory is the audit's re-dispatch check of a Claude Code config directory (home: its
// projects/ sessions) with tools (configuration order; from names it, as ClaudeToolList.From)
// as today's tool set under release version (the engine's check: agent.AuditEngine.History).
// Nothing when home is "", tools is empty or home has no projects/ directory (no session
// history: nothing to look up). Nothing is written, no MCP server is started.
func AuditHistory(ctx context.Context, check agent.HistoryCheck, home string, tools []mcpname.ClaudeTool, from, version string) ([]naming.Redispatch, []error, error) {
	if home == "" || len(tools) == 0 {
		return nil, nil, nil
	}
	if fi, err := os.Stat(filepath.Join(home, "projects")); err != nil || !fi.IsDir() {
		return nil, nil, nil
	}
	return check(ctx, agent.HistoryInput{Agent: ID, Roots: []string{home}, Options: agent.Values{VersionOption: {version}},
		Lookup: func(p *naming.Policy) {
			naming.SetAgent(p, ID, &naming.PathPolicy[ClaudePolicy]{Default: ClaudePolicy{Tools: tools, ToolsSource: from, Version: version}})
		}})
}
