package reports

import (
	"fmt"
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
