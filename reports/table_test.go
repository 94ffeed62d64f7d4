package reports

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPrintableEscapesInvisibleCharacters(t *testing.T) {
	for _, r := range []rune{0x200b, 0x200d, 0x2060, 0x00ad, 0xfeff, 0x034f, 0x180e, 0x2028, 0x2029, 0x202e, 0x2066} {
		got := Printable("a" + string(r) + "b")
		assert.Equal(t, fmt.Sprintf(`a\u%04xb`, r), got)
	}
	assert.Equal(t, "搜索文献 🎉 é", Printable("搜索文献 🎉 é"), "visible text is left alone")
}

// TestWriteTextAlignsWideCharacters: a CJK character takes two terminal cells, so padding by
// runes put the next column one cell too far left for each CJK character (issue 8, item 16).
func TestWriteTextAlignsWideCharacters(t *testing.T) {
	tb := &Table{Columns: []string{"old", "count"}}
	tb.Add("mcp__文献__搜索", "3")
	tb.Add("mcp__lit__search", "12")
	tb.Add("mcp__cafe\u0301__x", "1") // e + combining acute: one cell
	var b strings.Builder
	assert.NoError(t, WriteText(&b, tb))
	assert.Equal(t, ""+
		"OLD               COUNT\n"+
		"mcp__文献__搜索   3\n"+
		"mcp__lit__search  12\n"+
		"mcp__cafe\u0301__x      1\n", b.String())
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		assert.Equal(t, 18, DisplayWidth(line[:strings.LastIndex(line, "  ")+2]), "count column starts at cell 18: %q", line)
	}
	assert.Equal(t, 4, DisplayWidth("搜索"))
	assert.Equal(t, 2, DisplayWidth("🎉"))
}
