package jsonl

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
)

// Slot.Keep keeps a Stable capture as it is (its Raw and Path shared, not copied), copies any
// other into the slot's own buffers, and never writes into a Stable capture's bytes when the
// same slot later keeps a capture that is not Stable.
func TestSlotKeepSharesStableCaptures(t *testing.T) {
	line := []byte(`{"functionCall":{"name":"mcp__a__b"}}`)
	path := jsonscan.Path{{Key: "functionCall", Index: -1}, {Key: "name", Index: -1}}
	stable := &jsonscan.Capture{Pattern: 3, Offset: 24, Len: 11, Line: 7, Raw: line[24:35], Path: path, Starts: []int64{0, 16}, Stable: true}
	var sl Slot
	k := sl.Keep(stable)
	assert.Equal(t, `"mcp__a__b"`, string(k.Raw))
	assert.Same(t, &line[24], &k.Raw[0], "a Stable capture's Raw is shared")
	assert.Same(t, &path[0], &k.Path[0], "a Stable capture's Path is shared")
	assert.Nil(t, k.Starts)
	assert.Equal(t, int64(24), k.Offset)
	assert.Equal(t, 3, k.Pattern)

	buf := []byte(`"mcp__other__tool_with_a_longer_name"`)
	other := &jsonscan.Capture{Pattern: 1, Raw: buf, Path: jsonscan.Path{{Key: "x", Index: -1}}, Starts: []int64{0}}
	k = sl.Keep(other)
	require.Equal(t, string(buf), string(k.Raw))
	assert.NotEqual(t, unsafe.Pointer(&buf[0]), unsafe.Pointer(&k.Raw[0]), "a capture that is not Stable is copied")
	assert.NotEqual(t, unsafe.Pointer(&other.Path[0]), unsafe.Pointer(&k.Path[0]))
	assert.Nil(t, k.Starts)
	assert.Equal(t, `{"functionCall":{"name":"mcp__a__b"}}`, string(line), "the Stable capture's bytes are unchanged")
	assert.Equal(t, "name", path[1].Key)
	buf[1] = 'X' // the scanner reuses its buffer
	assert.Equal(t, `"mcp__other__tool_with_a_longer_name"`, string(k.Raw))

	allocs := testing.AllocsPerRun(100, func() {
		sl.Keep(stable)
		sl.Keep(other)
	})
	assert.Zero(t, allocs, "the slot's buffers are reused")
}
