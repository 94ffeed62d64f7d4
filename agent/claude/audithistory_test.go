package claude

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
)

// TestAuditHistory: the audit's re-dispatch check asks the engine for this agent's stores
// under the home, at the release given, with the audit's tool list as the lookup's policy;
// a home without projects/ is not checked at all.
func TestAuditHistory(t *testing.T) {
	tools := []mcpname.ClaudeTool{{Server: "lit", Tool: "search"}}
	var got []agent.HistoryInput
	findings := []naming.Redispatch{{Store: "s.jsonl", Stored: "mcp__lit__search", Class: "redispatch"}}
	check := func(_ context.Context, in agent.HistoryInput) ([]naming.Redispatch, []error, error) {
		got = append(got, in)
		return findings, nil, nil
	}
	home := t.TempDir()
	f, errs, err := AuditHistory(context.Background(), check, home, tools, "file tools.json (1 tool)", "2.1.332")
	require.NoError(t, err)
	assert.Nil(t, f)
	assert.Nil(t, errs)
	assert.Empty(t, got, "no projects/: no check")

	require.NoError(t, os.Mkdir(filepath.Join(home, "projects"), 0o755))
	f, _, err = AuditHistory(context.Background(), check, home, tools, "file tools.json (1 tool)", "2.1.332")
	require.NoError(t, err)
	assert.Equal(t, findings, f)
	require.Len(t, got, 1)
	in := got[0]
	assert.Equal(t, ID, in.Agent)
	assert.Equal(t, []string{home}, in.Roots)
	assert.Equal(t, agent.Values{VersionOption: {"2.1.332"}}, in.Options)
	assert.Nil(t, in.Policy)
	assert.Nil(t, in.Servers)
	require.NotNil(t, in.Lookup)
	var p naming.Policy
	in.Lookup(&p)
	pp := naming.AgentOf[naming.PathPolicy[ClaudePolicy]](p, ID)
	require.NotNil(t, pp)
	assert.Equal(t, ClaudePolicy{Tools: tools, ToolsSource: "file tools.json (1 tool)", Version: "2.1.332"}, pp.Default)

	got = nil
	_, _, err = AuditHistory(context.Background(), check, home, nil, "", "2.1.332")
	require.NoError(t, err)
	assert.Empty(t, got, "no tools: no check")
}
