package mcpname

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A --qwen-version that does not parse is named a Qwen Code version (review5: check
// --qwen-version bogus said "not a Claude Code version"); it still wraps ErrClaudeVersion, the
// shared version syntax.
func TestQwenSendsNormalizedErrorNamesQwenCode(t *testing.T) {
	_, err := QwenSendsNormalized("bogus")
	assert.EqualError(t, err, `"bogus": not a Qwen Code version (want MAJOR.MINOR.PATCH)`)
	assert.ErrorIs(t, err, ErrClaudeVersion)
}
