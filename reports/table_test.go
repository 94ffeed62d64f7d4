package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestDocumentWritesTheValuesBytes: a value handed on as Document is written byte for byte as
// WriteJSON writes the value itself (no HTML escaping of < > &, the same indentation, nested
// in another document too); json.Marshal of it escapes as json.Marshal of the value does.
func TestDocumentWritesTheValuesBytes(t *testing.T) {
	type row struct {
		Name  string   `json:"name"`
		Tags  []string `json:"tags"`
		Empty []int    `json:"empty"`
		N     float64  `json:"n"`
	}
	v := struct {
		Rows []row  `json:"rows"`
		Note string `json:"note,omitempty"`
	}{Rows: []row{{Name: "mcp__a<b__c&d>", Tags: []string{"é", "\u2028"}, Empty: []int{}, N: 1.5}}, Note: "x"}
	var want, got bytes.Buffer
	require.NoError(t, WriteJSON(&want, v))
	require.NoError(t, WriteJSON(&got, Document(v)))
	assert.Equal(t, want.String(), got.String())
	assert.Contains(t, got.String(), "mcp__a<b__c&d>")
	want.Reset()
	got.Reset()
	require.NoError(t, WriteJSON(&want, map[string]any{"report": v}))
	require.NoError(t, WriteJSON(&got, map[string]any{"report": Document(v)}))
	assert.Equal(t, want.String(), got.String())
	a, err := json.Marshal(v)
	require.NoError(t, err)
	b, err := json.Marshal(Document(v))
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b))
}
