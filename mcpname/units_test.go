package mcpname

import (
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
)

// TestUnitsAsEncode: Units gives utf16.Encode([]rune(s)) for ASCII, BMP and astral text, invalid
// UTF-8 (U+FFFD per bad byte) and UTF-8-encoded surrogates (CESU bytes: U+FFFD each).
func TestUnitsAsEncode(t *testing.T) {
	for _, s := range []string{"", "mcp__a.b__c", "héllo", "日本語", "😀x😀", "\xff\xfe", "a\xc3", "\xed\xa0\x80",
		strings.Repeat("é", 300), "mcp__x__" + strings.Repeat("y", 200)} {
		assert.Equal(t, utf16.Encode([]rune(s)), Units(s), "%q", s)
		assert.Equal(t, RejectReasonsUnits(utf16.Encode([]rune(s))), RejectReasons(s), "%q", s)
	}
}

// TestRejectReasonsAllocations: a usual name's units stay on the stack (summaries ask per site);
// only the reasons slice is allocated.
func TestRejectReasonsAllocations(t *testing.T) {
	assert.Equal(t, []string{ReasonDot}, RejectReasons("mcp__server.name__tool"))
	allocs := testing.AllocsPerRun(100, func() { _ = RejectReasons("mcp__server.name__tool") })
	assert.LessOrEqual(t, allocs, 1.0)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = RejectReasons("mcp__server_name__tool") }), "safe name: nil")
}
