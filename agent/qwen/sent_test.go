package qwen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// From 0.24.0 on a resume sends normalizeMcp of a stored MCP call name (not to gemini); a
// name already provider-safe, or not an MCP name, is sent as stored; 0.12.0 sends the stored
// bytes; a release that does not parse is an error.
func TestSentAs(t *testing.T) {
	s, err := SentAs("0.24.4")
	require.NoError(t, err)
	require.NotNil(t, s)
	assert.Equal(t, []string{"gemini"}, s.Verbatim)
	got, ok := s.Sent("mcp__foo.bar__get_data", nil)
	assert.True(t, ok)
	assert.Equal(t, "mcp__foo_bar__get_data_0xybsnb", got)
	_, ok = s.Sent("mcp__lit__get_data", nil)
	assert.False(t, ok)
	_, ok = s.Sent("read_file", nil)
	assert.False(t, ok)

	old, err := SentAs("0.12.0")
	require.NoError(t, err)
	assert.Nil(t, old)
	_, err = SentAs("newest")
	assert.Error(t, err)
}
