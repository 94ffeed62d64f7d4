package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type gotRecord struct {
	Line     int64
	Start    int64
	End      int64
	Newline  bool
	Blank    bool
	Err      string
	BadUTF8  int64
	Captures []string // "pattern@offset path=value"
}

// scanAll feeds input in chunks of size chunk (0 = all at once) and returns the records.
func scanAll(t testing.TB, p *Patterns, mode Mode, input []byte, chunk int) []gotRecord {
	t.Helper()
	return scanAllWith(t, p, mode, input, chunk, nil)
}

// scanAllWith is scanAll with setup run on the Scanner before the first Write.
func scanAllWith(t testing.TB, p *Patterns, mode Mode, input []byte, chunk int, setup func(*Scanner)) []gotRecord {
	t.Helper()
	var out []gotRecord
	s := New(p, mode, func(r *Record) error {
		g := gotRecord{Line: r.Line, Start: r.Start, End: r.End, Newline: r.Newline, Blank: r.Blank, BadUTF8: r.BadUTF8}
		if r.Err != nil {
			g.Err = r.Err.Error()
		}
		for _, c := range r.Captures {
			require.Equal(t, string(c.Raw), string(input[c.Offset:c.Offset+c.Len]), "capture bytes at offset")
			v, err := c.Value()
			require.NoError(t, err)
			g.Captures = append(g.Captures, fmt.Sprintf("%d@%d:%d %s=%s", c.Pattern, c.Offset, c.Line, c.Path, v.Str))
		}
		out = append(out, g)
		return nil
	})
	if setup != nil {
		setup(s)
	}
	if chunk <= 0 {
		chunk = len(input) + 1
	}
	for i := 0; i < len(input); i += chunk {
		_, err := s.Write(input[i:min(len(input), i+chunk)])
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	return out
}

var qwenPatterns = MustCompile(
	"message.parts[*].functionCall.name",
	"message.parts[*].functionResponse.name",
	"tools.byName.{}",
	"[*].parts[*].functionCall.name",
)

func TestCapturesAndOffsets(t *testing.T) {
	in := []byte(`{"message":{"parts":[{"text":"x"},{"functionCall":{"id":"c1","name":"mcp__a__b.c","args":{"name":"no"}}}]}}` + "\n" +
		`{"tools":{"byName":{"mcp__x.y__z":{"count":1},"read_file":{"count":2}}}}` + "\r\n" +
		"\n" +
		`{"message":{"parts":[{"functionResponse":{"name":"mcp__lit__literature\u002esearch","response":{}}}]}}`)
	at := func(tok string) int64 { return int64(bytes.Index(in, []byte(tok))) }
	l2 := at(`{"tools"`)
	l3 := at("\n\n") + 1
	want := []gotRecord{
		{Line: 1, Start: 0, End: l2 - 1, Newline: true, BadUTF8: -1, Captures: []string{
			fmt.Sprintf("0@%d:1 message.parts[1].functionCall.name=mcp__a__b.c", at(`"mcp__a__b.c"`))}},
		{Line: 2, Start: l2, End: l3 - 1, Newline: true, BadUTF8: -1, Captures: []string{
			fmt.Sprintf(`2@%d:2 tools.byName["mcp__x.y__z"]=mcp__x.y__z`, at(`"mcp__x.y__z"`)),
			fmt.Sprintf("2@%d:2 tools.byName.read_file=read_file", at(`"read_file"`))}},
		{Line: 3, Start: l3, End: l3, Newline: true, Blank: true, BadUTF8: -1},
		{Line: 4, Start: l3 + 1, End: int64(len(in)), BadUTF8: -1, Captures: []string{
			fmt.Sprintf("1@%d:4 message.parts[0].functionResponse.name=mcp__lit__literature.search", at(`"mcp__lit__literature\u002esearch"`))}},
	}
	require.Equal(t, byte('\r'), in[l3-2], "line 2 ends in CRLF; the CR belongs to the record")
	for _, chunk := range []int{0, 1, 2, 3, 7, 64} {
		t.Run(fmt.Sprintf("chunk %d", chunk), func(t *testing.T) {
			got := scanAll(t, qwenPatterns, Lines, in, chunk)
			assert.Equal(t, want, got)
		})
	}
}

func TestInvalidLinesReportedAndSkipped(t *testing.T) {
	lines := []string{
		`{"message":{"parts":[{"functionCall":{"name":"mcp__a.b__c"}}]}}`,
		`{"message":{"parts":[{"functionCall":{"name":"mcp__torn`, // torn line
		`<<<<<<< HEAD`,
		`{"a":1}{"b":2}`,
		`{"a":01}`,
		`{"a":"\x"}`,
		`{"a":tru}`,
		`[1,]`,
		`{"a" 1}`,
		"{\"a\":\"tab\there\"}",
		`{"message":{"parts":[{"functionCall":{"name":"mcp__ok__x"}}]}}`,
	}
	in := []byte(strings.Join(lines, "\n") + "\n")
	got := scanAll(t, qwenPatterns, Lines, in, 5)
	require.Len(t, got, len(lines))
	for i, g := range got {
		valid := json.Valid([]byte(lines[i]))
		assert.Equal(t, valid, g.Err == "", "line %d %q: err=%q", i+1, lines[i], g.Err)
		assert.Equal(t, int64(i+1), g.Line)
		if !valid {
			assert.Empty(t, g.Captures, "an invalid line yields no captures")
		}
	}
	assert.Equal(t, []string{"0@45:1 message.parts[0].functionCall.name=mcp__a.b__c"}, got[0].Captures)
	assert.Contains(t, got[1].Err, "line 2")
	assert.Len(t, got[10].Captures, 1)
}

func TestBOMAndFinalLineWithoutNewline(t *testing.T) {
	in := []byte("\xEF\xBB\xBF" + `{"message":{"parts":[{"functionCall":{"name":"mcp__a.b__c"}}]}}` + "\r\n" + `{"x":1}`)
	got := scanAll(t, qwenPatterns, Lines, in, 2)
	require.Len(t, got, 2)
	assert.Equal(t, "", got[0].Err)
	assert.Equal(t, int64(3), got[0].Start)
	assert.Equal(t, []string{"0@48:1 message.parts[0].functionCall.name=mcp__a.b__c"}, got[0].Captures)
	assert.Equal(t, "", got[1].Err)
	assert.False(t, got[1].Newline)
	assert.Equal(t, int64(len(in)), got[1].End)
}

func TestInvalidUTF8IsLocated(t *testing.T) {
	in := []byte("{\"a\":\"ok é\"}\n{\"a\":\"bad \xff\"}\n{\"a\":\"split \xe6\x90\x9c\"}\n{\"a\":\"cut \xe6\x90\"}")
	for _, chunk := range []int{0, 1, 2, 5, 13} {
		got := scanAll(t, nil, Lines, in, chunk)
		require.Len(t, got, 4)
		assert.Equal(t, int64(-1), got[0].BadUTF8, "chunk %d", chunk)
		assert.Equal(t, int64(bytes.IndexByte(in, 0xff)), got[1].BadUTF8, "chunk %d", chunk)
		assert.Equal(t, int64(-1), got[2].BadUTF8, "chunk %d: a valid rune split across chunks", chunk)
		assert.Equal(t, int64(bytes.LastIndex(in, []byte("\xe6\x90"))), got[3].BadUTF8, "chunk %d", chunk)
	}
}

func TestDocumentMode(t *testing.T) {
	in := []byte("[\n  {\"role\": \"model\", \"parts\": [{\"functionCall\": {\"name\": \"mcp__z.db__q\"}}]}\n]\n")
	got := scanAll(t, qwenPatterns, Document, in, 3)
	require.Len(t, got, 1)
	assert.Equal(t, "", got[0].Err)
	assert.Equal(t, []string{"3@58:2 [0].parts[0].functionCall.name=mcp__z.db__q"}, got[0].Captures)

	bad := scanAll(t, qwenPatterns, Document, []byte("{\n  \"a\": 1,\n}"), 0)
	require.Len(t, bad, 1)
	assert.Equal(t, "line 3, column 1: expected string key", bad[0].Err)
	empty := scanAll(t, nil, Document, []byte("  \n"), 0)
	assert.Equal(t, "line 2, column 1: empty document", empty[0].Err)
}

func TestTooLongCapture(t *testing.T) {
	long := strings.Repeat("x", 100)
	in := []byte(`{"message":{"parts":[{"functionCall":{"name":"` + long + `"}}]}}`)
	var caps []Capture
	s := New(qwenPatterns, Lines, func(r *Record) error { caps = append(caps, r.Captures...); return nil })
	s.SetMaxCapture(50)
	_, err := s.Write(in)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Len(t, caps, 1)
	assert.True(t, caps[0].TooLong)
	assert.Nil(t, caps[0].Raw)
	_, err = caps[0].Value()
	assert.EqualError(t, err, "string of 102 bytes is longer than the 50-byte limit")
	assert.Equal(t, int64(102), caps[0].Len, "the token's length, quotes included, even when not kept")

	// Fed in pieces (the length spans Writes), at the default limit: 40 MiB.
	huge := strings.Repeat("y", 40<<20)
	in = []byte(`{"message":{"parts":[{"functionCall":{"name":"` + huge + `"}}]}}`)
	caps = nil
	s = New(qwenPatterns, Lines, func(r *Record) error { caps = append(caps, r.Captures...); return nil })
	for i := 0; i < len(in); i += 256 << 10 {
		_, err = s.Write(in[i:min(len(in), i+256<<10)])
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	require.Len(t, caps, 1)
	_, err = caps[0].Value()
	assert.EqualError(t, err, "string of 41943042 bytes is longer than the 1048576-byte limit")
}

func TestUnquote(t *testing.T) {
	tests := []struct {
		name, tok, want string
		lone            bool
	}{
		{"plain", `"mcp__a__b"`, "mcp__a__b", false},
		{"escaped dot", `"mcp__lit__literature\u002esearch"`, "mcp__lit__literature.search", false},
		{"escapes", `"a\"b\\c\/d\n"`, "a\"b\\c/d\n", false},
		{"pair", `"\ud83c\udf89"`, "🎉", false},
		{"raw non-ascii", `"搜索"`, "搜索", false},
		{"lone high", `"a\ud800b"`, "a\ufffdb", true},
		{"lone low", `"\udc00"`, "\ufffd", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Unquote([]byte(tt.tok))
			require.NoError(t, err)
			assert.Equal(t, tt.want, v.Str)
			assert.Equal(t, tt.lone, v.Lone())
			// Round trip through AppendQuoteUnits keeps the exact units.
			if tt.lone {
				back, err := Unquote(AppendQuoteUnits(nil, v.Units))
				require.NoError(t, err)
				assert.Equal(t, v.Units, back.Units)
			}
		})
	}
	_, err := Unquote([]byte(`"\q"`))
	assert.ErrorIs(t, err, ErrBadString)
}

func TestAppendQuoteMatchesJSONStringify(t *testing.T) {
	// JSON.stringify does not escape <, >, & or non-ASCII.
	assert.Equal(t, `"<a&b> é \"q\" \\ \n \u0001"`, string(AppendQuote(nil, "<a&b> é \"q\" \\ \n \x01")))
}

// FuzzScannerAgreesWithEncodingJSON checks the validator against encoding/json (same grammar
// as JSON.parse for valid UTF-8) and that chunking never changes the result.
func FuzzScannerAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[1,2,{"a":"b"}]`, `{"message":{"parts":[{"functionCall":{"name":"x"}}]}}`,
		`-0.5e+10`, `"\u00e9"`, `{"a":[true,false,null]}`, `{"a":1}x`, `01`, `"\ud800"`} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, chunk uint8) {
		if strings.ContainsAny(s, "\n") {
			return
		}
		in := []byte(s)
		whole := scanAll(t, qwenPatterns, Lines, in, 0)
		parts := scanAll(t, qwenPatterns, Lines, in, int(chunk%16)+1)
		if !assert.Equal(t, whole, parts) {
			t.FailNow()
		}
		if len(whole) != 1 {
			if strings.TrimSpace(s) == "" && len(whole) <= 1 {
				return
			}
			t.Fatalf("%q gave %d records", s, len(whole))
		}
		if whole[0].Blank {
			return
		}
		want := json.Valid(in)
		if got := whole[0].Err == ""; got != want {
			t.Fatalf("%q: scanner valid=%v, encoding/json valid=%v (%s)", s, got, want, whole[0].Err)
		}
	})
}

// TestAppendQuoteRunsAsBytes: AppendQuote appending runs of plain ASCII at once writes what
// writing each byte on its own (quoteByByte, the loop it had before) writes, for strings of
// every kind of byte: plain runs, escapes, controls, DEL, non-ASCII and invalid UTF-8.
func TestAppendQuoteRunsAsBytes(t *testing.T) {
	quoteByByte := func(s string) []byte {
		dst := []byte{'"'}
		for i := 0; i < len(s); {
			if c := s[i]; c >= utf8.RuneSelf {
				r, size := utf8.DecodeRuneInString(s[i:])
				dst = utf8.AppendRune(dst, r)
				i += size
				continue
			}
			dst = appendASCII(dst, s[i])
			i++
		}
		return append(dst, '"')
	}
	alphabet := []string{"a", "mcp__x_y__z", "\"", "\\", "\n", "\x01", "\x1f", "\x7f", " ", "é", "\xff", "\xe2\x82", "€", "<&>/"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		require.Equal(t, string(quoteByByte(s)), string(AppendQuote([]byte("x"), s))[1:], "%q", s)
	}
}
