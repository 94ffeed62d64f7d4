package qwen

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/naming"
)

// TestAuditHistory: the audit's re-dispatch check asks the engine for Qwen Code's stores under
// the roots with the inventory as today's tools (every server, also one without tools) and its
// Index in the run's policy; no roots or no inventory: no check.
func TestAuditHistory(t *testing.T) {
	inv, err := mcpinventory.Parse("inv.json", []byte(`{"servers": {"lit": {"tools": ["search", "fetch"]}, "empty": {"tools": []}}}`))
	require.NoError(t, err)
	var got []agent.HistoryInput
	findings := []naming.Redispatch{{Store: "s.jsonl", Stored: "mcp__lit__search", Class: "redispatch"}}
	check := func(_ context.Context, in agent.HistoryInput) ([]naming.Redispatch, []error, error) {
		got = append(got, in)
		return findings, nil, nil
	}
	f, _, err := AuditHistory(context.Background(), check, nil, inv, "file inv.json")
	require.NoError(t, err)
	assert.Nil(t, f)
	_, _, err = AuditHistory(context.Background(), check, []string{"h"}, nil, "")
	require.NoError(t, err)
	assert.Empty(t, got)

	f, _, err = AuditHistory(context.Background(), check, []string{"h"}, inv, "file inv.json")
	require.NoError(t, err)
	assert.Equal(t, findings, f)
	require.Len(t, got, 1)
	in := got[0]
	assert.Equal(t, ID, in.Agent)
	assert.Equal(t, []string{"h"}, in.Roots)
	assert.Equal(t, map[string][]string{"lit": {"fetch", "search"}, "empty": {}}, in.Servers)
	assert.Equal(t, "file inv.json", in.Source)
	assert.Nil(t, in.Lookup)
	require.NotNil(t, in.Policy)
	var p naming.Policy
	in.Policy(&p)
	assert.Equal(t, inv.Index(), p.Index)
}
