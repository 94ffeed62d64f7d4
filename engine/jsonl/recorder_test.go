package jsonl

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// A rewrite's site recorder (its encoder with its buffer and table, its memory buffer) is
// reused by the next rewrite: recording a session's 6,300 edits allocates only the change's
// copy of the encoding and the table's key of each distinct pair (red before: a new recorder,
// encoder, 16 KiB buffer and a memory buffer grown to the encoding, per store).
func TestSiteRecorderIsReused(t *testing.T) {
	for len(recorders) > 0 {
		<-recorders
	}
	old, new := []byte(`"mcp__lit__literature.search"`), []byte(`"mcp__lit__literature_search_0xybsnb"`)
	var data []byte
	record := func() {
		r := newSiteRecorder("")
		for i := range 6300 {
			if err := r.add(int64(300*i), old, new); err != nil {
				t.Fatal(err)
			}
		}
		var ch store.Change
		if err := r.finish(&ch); err != nil {
			t.Fatal(err)
		}
		data = ch.SiteData
		r.release()
	}
	record()
	first := data
	assert.LessOrEqual(t, testing.AllocsPerRun(10, record), 2.0, "allocations per recorded change")
	require.Equal(t, first, data, "the same encoding each time")
	got, err := store.DecodeSites(data)
	require.NoError(t, err)
	assert.Len(t, got, 6300)
}
