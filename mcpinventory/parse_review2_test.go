package mcpinventory

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpconfig"
)

// TestParseErrorNeverQuotesTheFile: an inventory with a bad literal was reported with the
// parser's message, which quotes the text ("invalid literal: sk-TOKEN-123"), unlike settings
// (issue 9 item 9); inventories are written by hand or by scripts from a config, and the same
// secret-safe wording applies.
func TestParseErrorNeverQuotesTheFile(t *testing.T) {
	for in, want := range map[string]string{
		`{"servers": {"lit": {"tools": [sk-TOKEN-123]}}}`:   "inv.json:1:32: invalid value starting here (not a string, number, true, false or null); its text is not shown",
		`{"servers": {"lit": {"tools": ["sk-TOKEN-1\q"]}}}`: `inv.json:1:32: invalid string starting here (a bad escape such as \q, or a control character such as a tab); its text is not shown`,
		// A raw line break in a string: the parser's message quotes the text across the line
		// end; it was shown whole, at 1:1.
		"{\"servers\": {\"lit\": {\"tools\": [\"sk-TOKEN-1\n\", \"x\"]}}}": `inv.json:1:32: invalid string starting here (a bad escape such as \q, or a control character such as a tab); its text is not shown`,
	} {
		_, err := Parse("inv.json", []byte(in))
		require.Error(t, err)
		assert.Equal(t, want, err.Error())
		assert.False(t, strings.Contains(err.Error(), "TOKEN"), err.Error())
		assert.True(t, errors.Is(err, mcpconfig.ErrSyntax))
		var pe *mcpconfig.ParseError
		require.True(t, errors.As(err, &pe))
	}
}
