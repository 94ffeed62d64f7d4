package naming

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

// TestNormalizeMcpIsShared: the normalizeMcp rule is a Namer of naming itself, so any room can
// set it as its Agent.Namer (rooms never import each other): a dotted name is rewritten to
// normalizeMcp's name, a provider-safe one is left alone, a middle-truncated dotted one is kept
// with KeepTruncated.
func TestNormalizeMcpIsShared(t *testing.T) {
	var n Namer = NormalizeMcp{}
	trunc := "mcp__com.example.enterprise-___documents_by_semantic_similarity"
	snap := &store.Snapshot{Sites: []store.Site{{Name: "mcp__srv__tool.x"}, {Name: "mcp__srv__tool_y"}, {Name: trunc}}}
	ds := n.Decide(snap, Policy{})
	require.Len(t, ds, 3)
	assert.Equal(t, mcpname.ClassLegacyDotted, ds[0].Class)
	assert.Equal(t, ActRewrite, ds[0].Action)
	assert.Equal(t, "mcp__srv__tool_x_03uldg8", ds[0].New)
	assert.Equal(t, "normalizeMcp", ds[0].Source)
	assert.Equal(t, ActNone, ds[1].Action)
	assert.Equal(t, ActRewrite, ds[2].Action)
	ds = n.Decide(snap, Policy{KeepTruncated: true})
	assert.Equal(t, ActKeep, ds[2].Action)
	assert.Equal(t, ActRewrite, ds[0].Action)
}
