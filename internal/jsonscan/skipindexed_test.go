package jsonscan

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkSkipIndexed puts line into a clean chunk at offset len(pre) and requires, for every
// start i in line and the depth limits 0–3 and 64, that skipIndexed answers as valueEnd does
// for a value no pattern reaches into (lenient, no needles) with the string index and without
// it: the same end, or a refusal where valueEnd refuses. It returns how many (start, depth)
// pairs were valid values.
func checkSkipIndexed(t testing.TB, pre, line, post []byte) int {
	t.Helper()
	x, ok := lineIndex(t, pre, line, post)
	if !ok {
		return 0 // no AVX2: skipIndexed is never called
	}
	valid := 0
	var st []byte
	for i := 0; i < len(line); i++ {
		if line[i] == ' ' {
			continue // (valueEnd and skipIndexed are called at a value's first byte)
		}
		for _, depth := range []int{0, 1, 2, 3, 64} {
			wend, _, wok, _ := valueEnd(line, i, nil, depth, nil, true, true, nil)
			xend, _, xok, _ := valueEnd(line, i, nil, depth, nil, true, true, x)
			require.Equal(t, [2]any{wend, wok}, [2]any{xend, xok}, "valueEnd with and without the index at line[%d] of %q", i, line)
			var end int
			var ok bool
			end, ok, st = skipIndexed(line, i, depth, st, x)
			if !wok {
				require.False(t, ok, "skipIndexed accepts line[%d:] of %q (depth %d) where valueEnd refuses it; end %d", i, line, depth, end)
				continue
			}
			require.True(t, ok, "skipIndexed refuses line[%d:] of %q (depth %d); valueEnd ends it at %d", i, line, depth, wend)
			require.Equal(t, wend, end, "end of the value at line[%d] of %q (depth %d)", i, line, depth)
			valid++
		}
	}
	return valid
}

// genSkipLine makes a JSON-ish line: mostly valid values (objects, arrays, strings with
// escapes, numbers, literals, spaces between tokens) with now and then a byte out of place.
func genSkipLine(r *rand.Rand, budget int) []byte {
	var b bytes.Buffer
	var value func(depth int)
	ws := func() {
		if r.IntN(4) == 0 {
			b.WriteString(strings.Repeat(" ", 1+r.IntN(2)))
		}
	}
	str := func() {
		b.WriteByte('"')
		for range r.IntN(90) {
			switch r.IntN(12) {
			case 0:
				b.WriteString([]string{`\"`, `\\`, `\n`, `\/`, `\u00e9`, `\uD83D`, `\x`, `\u12`, `\`}[r.IntN(9)])
			case 1:
				b.WriteString([]string{"é", "{", "}", "[", "]", ",", ":"}[r.IntN(7)])
			default:
				b.WriteByte(byte('a' + r.IntN(26)))
			}
		}
		if r.IntN(30) != 0 {
			b.WriteByte('"')
		}
	}
	value = func(depth int) {
		if b.Len() > budget {
			b.WriteString("0")
			return
		}
		switch k := r.IntN(10); {
		case k < 3 && depth < 5:
			b.WriteByte('{')
			ws()
			for m := range r.IntN(4) {
				if m > 0 {
					b.WriteByte(',')
					ws()
				}
				str()
				ws()
				b.WriteByte(':')
				ws()
				value(depth + 1)
				ws()
			}
			b.WriteByte('}')
		case k < 5 && depth < 5:
			b.WriteByte('[')
			ws()
			for m := range r.IntN(4) {
				if m > 0 {
					b.WriteByte(',')
					ws()
				}
				value(depth + 1)
				ws()
			}
			b.WriteByte(']')
		case k < 7:
			str()
		case k < 8:
			b.WriteString([]string{"0", "-1", "12.5e+3", "1.", "-", "01", "3e"}[r.IntN(7)])
		default:
			b.WriteString([]string{"true", "false", "null", "tru", "nul"}[r.IntN(5)])
		}
		if r.IntN(40) == 0 {
			b.WriteString([]string{",", "}", "]", ":", "x", `"`}[r.IntN(6)]) // out of place
		}
	}
	value(0)
	return b.Bytes()
}

// TestSkipIndexedAgreesWithValueEnd: skipIndexed, which skips the values no pattern reaches
// into in a clean chunk, answers as valueEnd on generated lines at every start, at offsets of
// the chunk around its 64-byte words, and on lines made to trip it: spaces around every
// token, an unterminated string, a backslash before the end, nesting at the depth limit.
// Seeded: the same inputs on every run.
func TestSkipIndexedAgreesWithValueEnd(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 29))
	valid := 0
	for n := range 400 {
		pre := bytes.Repeat([]byte(`"\a`), 22)[:[]int{0, 1, 31, 63, 64, 65}[n%6]]
		valid += checkSkipIndexed(t, pre, genSkipLine(r, 40+r.IntN(400)), []byte(`"x"`))
	}
	for _, line := range []string{
		`{ "a" : [ 1 , "b" , { } , [ ] , null ] , "c" : { "d" : "e" } }`, `{"a":"b\"","c":"\\"}`,
		`[[[["x"]]]]`, `{"a":{"b":{"c":{}}}}`, `{"a" "b"}`, `{"a":1,}`, `[1,]`, `["abc`, `"abc\`, `{"k\u0041":1}`,
		`{"a":1}}`, `[1 2]`, `{"a":1 "b":2}`, `{,}`, `{"a"}`, `"` + strings.Repeat("long ", 40) + `"`,
	} {
		valid += checkSkipIndexed(t, []byte("xx"), []byte(line), nil)
	}
	if hasAVX2 {
		require.Greater(t, valid, 10000, "too few valid values: the test would not see a wrong end")
	}
}

// FuzzSkipIndexed: for any clean line at any offset of its chunk, skipIndexed answers as
// valueEnd at every start and depth limit.
func FuzzSkipIndexed(f *testing.F) {
	f.Add([]byte(`{"a":[1,"b\"",{"c":null}]}`), uint8(3))
	f.Add([]byte(`[ {"x" : "\u00e9" } , true ]`), uint8(63))
	f.Fuzz(func(t *testing.T, line []byte, at uint8) {
		if bytes.ContainsFunc(line, func(r rune) bool { return r < 0x20 }) {
			t.Skip()
		}
		checkSkipIndexed(t, bytes.Repeat([]byte(`\"`), int(at))[:at], line, []byte(`"`))
	})
}

// TestFastMembersSameRecords: the whole-record lexer reads the members no pattern reaches into
// in its member loop (fastMembers) — whitespace around keys, colons and commas, values of
// every kind, objects nested to the depth limit, a long key, keys with escapes where keys are
// wanted or not — and reports the careful scan's records (captures, errors, their offsets),
// whole and in chunks; every valid record of the first group is read by it.
func TestFastMembersSameRecords(t *testing.T) {
	deep := strings.Repeat(`{"d":`, maxDepth-2) + "1" + strings.Repeat("}", maxDepth-2)
	deeper := strings.Repeat(`{"d":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1)
	valid := []string{
		`{"uuid":"u1","n":12,"f":-1.5e3,"t":true,"z":null,"o":{"a":[1,{"b":"c"}]},"message":{"role":"m","parts":[{"functionCall":{"id":"i","name":"mcp__a__b","args":{"q":"x","name":"n"}}}]},"e":{}}`,
		`{ "uuid" : "u2" , "message" : { "parts" : [ { "functionCall" : { "name" : "mcp__a__c" , "x" : [ ] } } ] } , "tail" : "t" }`,
		`{"systemPayload":{"uiEvent":{"a":1,"function_name":"mcp__s__t","b":{"c":[true,false]},"mcp_server_name":"s"}},"k":"v"}`,
		`{"x":"a\"b\\c\u00e9","message":{"parts":[{"text":"t\n"},{"functionResponse":{"name":"mcp__r__s","response":{"output":"\"q\""}}}]}}`,
		`{"d":` + deep + `,"message":{"parts":[{"functionCall":{"name":"mcp__deep__x"}}]}}`,
		`{"` + strings.Repeat("k", 300) + `":1,"message":{"parts":[{"functionCall":{"name":"mcp__long__key"}}]}}`,
		`{"a\"b":1,"message":{"parts":[{"functionCall":{"n\u0061me":"mcp__esc__key","name":"mcp__e__k"}}]}}`,
	}
	invalid := []string{
		`{"a":1 "message":{}}`, `{"a":1,}`, `{"a":[1,]}`, `{"a" 1}`, `{"a":}`, `{"a":1}}`, `{"a":01}`, `{"a":tru}`,
		`{"a":"x\q","message":{"parts":[{"functionCall":{"name":"mcp__a__b"}}]}}`, `{"a":"unterminated}`,
		`{"d":` + deeper + `}`, `{"message":{"parts":[{"functionCall":{"name":"mcp__a__b","x":{"y":[1 2]}}}]}}`,
	}
	in := []byte(strings.Join(valid, "\n") + "\n" + strings.Join(invalid, "\n") + "\n")
	for _, chunk := range []int{0, 7, 64, 1000} {
		scanBoth(t, in, chunk)
	}
	_, st := scanBoth(t, in, 0)
	require.GreaterOrEqual(t, st.FastRecords, int64(len(valid)-1), "the valid records were read by the whole-record lexer: %+v", st)
	ref := scanCareful(t, in, 0)
	require.Len(t, ref, len(valid)+len(invalid))
	for k := range valid {
		require.Empty(t, ref[k].Err, "record %d is valid", k)
	}
	for k := range invalid {
		require.NotEmpty(t, ref[len(valid)+k].Err, "record %d is invalid: %s", k, invalid[k])
	}
}

// TestStreamedCapturesEqualCollected: captures handed to a capture function (the whole-record
// lexer's, written into one reused Capture, and the full lexer's, key captures among them)
// carry the fields the same scan collects in Record.Captures: a key capture streamed before a
// value capture leaves no Key or TooLong behind.
func TestStreamedCapturesEqualCollected(t *testing.T) {
	in := []byte(strings.Join([]string{
		`{"tools":{"byName":{"mcp__k__one":{"c":1}}}}`,
		`{"message":{"parts":[{"functionCall":{"id":"i1","name":"mcp__a__b"}},{"functionResponse":{"name":"mcp__r__s","id":"i2"}}]}}`,
		`{"tools":{"byName":{"mcp__k__two":1}},"message":{"parts":[{"functionCall":{"name":"` + strings.Repeat("n", 80) + `"}}]}}`,
		`{"systemPayload":{"uiEvent":{"function_name":"mcp__t__u","mcp_server_name":"t"}}}`,
	}, "\n") + "\n")
	type got struct {
		Pattern     int
		Path        string
		Offset, Len int64
		Raw         string
		Key         bool
		Line        int64
		TooLong     bool
		Starts      []int64
	}
	conv := func(c *Capture) got {
		return got{c.Pattern, c.Path.String(), c.Offset, c.Len, string(c.Raw), c.Key, c.Line, c.TooLong, append([]int64(nil), c.Starts...)}
	}
	for _, chunk := range []int{0, 5, 64} {
		var collected, streamed []got
		for _, stream := range []bool{false, true} {
			s := New(prefilterPatterns, Lines, func(r *Record) error {
				require.Nil(t, r.Err)
				for k := range r.Captures {
					collected = append(collected, conv(&r.Captures[k]))
				}
				return nil
			})
			s.SetMaxCapture(64)
			if stream {
				s.SetCaptureFunc(func(c *Capture) { streamed = append(streamed, conv(c)) })
			}
			c := chunk
			if c == 0 {
				c = len(in)
			}
			for off := 0; off < len(in); off += c {
				_, err := s.Write(in[off:min(len(in), off+c)])
				require.NoError(t, err)
			}
			require.NoError(t, s.Close())
		}
		require.Len(t, collected, 9, "chunk %d", chunk)
		require.Equal(t, collected, streamed, "chunk %d", chunk)
		require.True(t, collected[0].Key)
		require.True(t, collected[6].TooLong, "%+v", collected[6])
	}
}

// A streamed capture of a record the whole-record lexer read is Stable: its Raw and Path are
// still what they were during its callback when the record's callback runs (a streaming
// resolver keeps them until then without copying). The full lexer's captures (careful mode, or
// a record not whole in one Write) are not Stable.
func TestStreamedCapturesStableUntilRecordEnd(t *testing.T) {
	in := []byte(strings.Join([]string{
		`{"message":{"parts":[{"functionCall":{"id":"i1","name":"mcp__a__b"}},{"functionResponse":{"name":"mcp__r__s","id":"i2"}}]}}`,
		`{"systemPayload":{"uiEvent":{"function_name":"mcp__t__u","mcp_server_name":"t"}}}`,
		`{"message":{"parts":[{"functionCall":{"name":"mcp__c__d","args":{"name":"x"}}}]}}`,
	}, "\n") + "\n")
	type seen struct {
		c         *Capture // the scanner's own capture (its Raw and Path as handed out)
		raw, path string   // copies taken during the callback
		stable    bool
	}
	for _, tc := range []struct {
		name    string
		careful bool
		chunk   int
		stable  bool
	}{
		{"whole records", false, len(in), true},
		{"careful", true, len(in), false},
		{"records split across writes", false, 7, false},
	} {
		var cur []seen
		records, captures := 0, 0
		s := New(prefilterPatterns, Lines, func(r *Record) error {
			require.Nil(t, r.Err)
			records++
			for _, c := range cur {
				if c.stable {
					// still what the callback saw: the scanner wrote nothing over it since
					require.Equal(t, c.raw, string(c.c.Raw), tc.name)
					require.Equal(t, c.path, c.c.Path.String(), tc.name)
				}
			}
			cur = cur[:0]
			return nil
		})
		s.SetCareful(tc.careful)
		s.SetCaptureFunc(func(c *Capture) {
			captures++
			require.Equal(t, tc.stable, c.Stable, "%s: %s", tc.name, c.Path)
			// a shallow copy: Raw and Path still point where the scanner put them
			cur = append(cur, seen{c: &Capture{Raw: c.Raw, Path: c.Path}, raw: string(c.Raw), path: c.Path.String(), stable: c.Stable})
		})
		for off := 0; off < len(in); off += tc.chunk {
			_, err := s.Write(in[off:min(len(in), off+tc.chunk)])
			require.NoError(t, err)
		}
		require.NoError(t, s.Close())
		require.Equal(t, 3, records, tc.name)
		require.Equal(t, 8, captures, tc.name)
	}
}
