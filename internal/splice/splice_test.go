package splice

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// Both forms write the same bytes: a replaced token (UTF-8 kept, no HTML escaping), an inserted
// absent member, everything else untouched.
func TestBytesAndCopyWriteTheSameEdits(t *testing.T) {
	val := `{"name":"mcp__a.b__c","x":"<>","call":{"name":"f"}}`
	edits := []store.Edit{
		{Site: store.Site{Loc: store.Loc{Offset: 8}, Raw: []byte(`"mcp__a.b__c"`)}, New: "mcp__a_b__c_é<"},
		{Site: store.Site{Loc: store.Loc{Offset: int64(strings.Index(val, `"f"`) + 3)}, Field: "namespace"}, New: "mcp__s__"},
	}
	want := `{"name":"mcp__a_b__c_é<","x":"<>","call":{"name":"f","namespace":"mcp__s__"}}`
	got, err := Bytes([]byte(val), edits)
	require.NoError(t, err)
	assert.Equal(t, want, string(got))
	var out bytes.Buffer
	require.NoError(t, Copy(&out, strings.NewReader(val), edits, 16))
	assert.Equal(t, want, out.String())
	app, err := Append([]byte("prefix|"), []byte(val), edits)
	require.NoError(t, err)
	assert.Equal(t, "prefix|"+want, string(app), "Append keeps what the buffer held")
}

// A token that is not at its offset (or edits out of order) is a *MismatchError naming the
// offset; errors.Is finds store.ErrTokenMismatch.
func TestMismatchWrapsErrTokenMismatch(t *testing.T) {
	val := `{"name":"mcp__a__b"}`
	for _, edits := range [][]store.Edit{
		{{Site: store.Site{Loc: store.Loc{Offset: 8}, Raw: []byte(`"mcp__a__c"`)}, New: "x"}},
		{{Site: store.Site{Loc: store.Loc{Offset: 15}, Raw: []byte(`"mcp__a__b"`)}, New: "x"}}, // past the end
		{
			{Site: store.Site{Loc: store.Loc{Offset: 8}, Raw: []byte(`"mcp__a__b"`)}, New: "x"},
			{Site: store.Site{Loc: store.Loc{Offset: 9}, Raw: []byte(`m`)}, New: "y"}, // overlaps
		},
	} {
		_, err := Bytes([]byte(val), edits)
		require.ErrorIs(t, err, store.ErrTokenMismatch)
		var me *MismatchError
		require.True(t, errors.As(err, &me))
		assert.Equal(t, edits[len(edits)-1].Site.Loc.Offset, me.Site.Loc.Offset)
		err = Copy(&bytes.Buffer{}, strings.NewReader(val), edits, 16)
		require.ErrorIs(t, err, store.ErrTokenMismatch, "%v", edits)
	}
	_, err := Bytes([]byte(val), []store.Edit{{Site: store.Site{Loc: store.Loc{Offset: 8}, Raw: []byte(`"mcp__a__c"`)}}})
	assert.EqualError(t, err, "name token not found at its offset (offset 8)")
}

// A caller's own buffered reader passed as src stays the caller's: Copy reads through it (as
// bufio.NewReaderSize does when it is large enough) but never resets it or gives it to its
// buffer pool, where the next Copy would take it over while the caller still holds it.
func TestCopyLeavesACallersBufferedReaderItsOwn(t *testing.T) {
	const size = 4099 // no other test's buffer size: the pool holds none of it yet
	val := `{"name":"mcp__a.b__c"}` + "\n"
	edits := []store.Edit{{Site: store.Site{Loc: store.Loc{Offset: 8}, Raw: []byte(`"mcp__a.b__c"`)}, New: "mcp__a_b__c"}}
	src := bufio.NewReaderSize(strings.NewReader(val), size)
	var out bytes.Buffer
	require.NoError(t, Copy(&out, src, edits, size))
	assert.Equal(t, `{"name":"mcp__a_b__c"}`+"\n", out.String())

	// The next copy, of another source, must not read through src.
	var out2 bytes.Buffer
	require.NoError(t, Copy(&out2, strings.NewReader(val), edits, size))
	assert.Equal(t, out.String(), out2.String())
	assert.NotPanics(t, func() {
		n, err := src.Read(make([]byte, 8))
		assert.Equal(t, 0, n)
		assert.ErrorIs(t, err, io.EOF, "src is still the caller's reader, at the end of its source")
	})
}

// The read buffers of finished copies outlive garbage collections (red before: a sync.Pool,
// empty after two: under cmd/sessionfix's memory limit most rewrites allocated their 256 KiB
// again).
func TestReadBuffersOutliveCollections(t *testing.T) {
	for len(readers) > 0 {
		<-readers
	}
	r, pooled := getReader(strings.NewReader("x"), 1<<10)
	require.True(t, pooled)
	putReader(r)
	runtime.GC()
	runtime.GC()
	again, _ := getReader(strings.NewReader("y"), 1<<10)
	assert.Same(t, r, again, "the buffer given back is handed out again")
}
