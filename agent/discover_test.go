package agent

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpinventory"
)

// DiscoveredInventory: the servers that answered make the inventory (source discovered), each
// server that did not is one problem; a discovery that cannot run is the error.
func TestDiscoveredInventory(t *testing.T) {
	discover := func(ctx context.Context, servers []Server) ([]Tool, []error, error) {
		return []Tool{{Server: "lit", Tool: "fetch"}, {Server: "lit", Tool: "literature.search_pubmed"}},
			[]error{errors.New(`discover MCP server "foo.bar": connect: refused`)}, nil
	}
	inv, problems, err := DiscoveredInventory(context.Background(), discover, nil)
	require.NoError(t, err)
	assert.Equal(t, []mcpinventory.ServerTool{{Server: "lit", Tool: "fetch"}, {Server: "lit", Tool: "literature.search_pubmed"}}, inv.InOrder(nil))
	assert.Equal(t, mcpinventory.SourceDiscovered, inv.Servers["lit"].Tools[0].Source)
	assert.Equal(t, []string{`discover MCP server "foo.bar": connect: refused; its tools are not audited`}, problems)

	_, _, err = DiscoveredInventory(context.Background(), func(context.Context, []Server) ([]Tool, []error, error) {
		return nil, nil, errors.New("none of the 2 MCP servers could be listed")
	}, nil)
	assert.EqualError(t, err, "none of the 2 MCP servers could be listed")
}
