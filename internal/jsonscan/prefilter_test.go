package jsonscan

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// prefilterPatterns mirror the Qwen profiles of engine/jsonl (session content parts, telemetry,
// usage keys) and their needles.
var (
	prefilterPatterns = MustCompile(
		"message.parts[*].functionCall.name", "message.parts[*].functionCall.id", "message.parts[*].functionCall.args.name",
		"message.parts[*].functionResponse.name", "message.parts[*].functionResponse.id",
		"systemPayload.compressedHistory[*].parts[*].functionCall.name",
		"systemPayload.history[*].parts[*].functionResponse.name",
		"systemPayload.uiEvent.function_name", "systemPayload.uiEvent.mcp_server_name",
		"tools.byName.{}",
	)
	prefilterNeedles = []string{`"function`, `"uiEvent"`, `"byName"`}
)

// scanBoth scans in byte by byte (the careful reference: no prefilter, no classify, no skipped
// values), with every shortcut (the whole-record lexer, and the full lexer's), with the full
// lexer's shortcuts alone, and with the prefilter before the full lexer (whole, and in chunks
// of chunk bytes), and requires the same records; it returns the prefiltered scan's counts and
// those of the scan with every shortcut.
func scanBoth(t testing.TB, in []byte, chunk int) (pf, fast PrefilterStats) {
	t.Helper()
	ref := scanCareful(t, in, chunk)
	var sc *Scanner
	full := scanAllWith(t, prefilterPatterns, Lines, in, chunk, func(s *Scanner) { sc = s })
	require.Equal(t, ref, full, "scan with every shortcut differs from the careful scan (chunk %d)", chunk)
	lexer := scanAllWith(t, prefilterPatterns, Lines, in, chunk, func(s *Scanner) { s.noFastRecord = true })
	require.Equal(t, ref, lexer, "full lexer without the whole-record lexer differs from the careful scan (chunk %d)", chunk)
	noIndex := scanAllWith(t, prefilterPatterns, Lines, in, chunk, func(s *Scanner) { s.noIndex = true })
	require.Equal(t, ref, noIndex, "whole-record lexer without the string index differs from the careful scan (chunk %d)", chunk)
	got, st := scanPrefiltered(t, in, chunk)
	require.Equal(t, ref, got, "prefiltered scan differs from the careful scan (chunk %d)", chunk)
	return st, sc.PrefilterStats()
}

func scanCareful(t testing.TB, in []byte, chunk int) []gotRecord {
	t.Helper()
	return scanAllWith(t, prefilterPatterns, Lines, in, chunk, func(s *Scanner) { s.careful = true })
}

func scanPrefiltered(t testing.TB, in []byte, chunk int) ([]gotRecord, PrefilterStats) {
	t.Helper()
	var sc *Scanner
	out := scanAllWith(t, prefilterPatterns, Lines, in, chunk, func(s *Scanner) {
		require.NoError(t, s.SetPrefilter(prefilterNeedles...))
		s.noFastRecord = true // the prefilter runs where the whole-record lexer is off
		sc = s
	})
	return out, sc.PrefilterStats()
}

func TestSetPrefilterNeedsEveryPatternCovered(t *testing.T) {
	s := New(prefilterPatterns, Lines, nil)
	err := s.SetPrefilter(`"function`, `"byName"`)
	require.Error(t, err, "the uiEvent patterns have no needle")
	assert.Contains(t, err.Error(), "uiEvent")
	require.NoError(t, s.SetPrefilter(prefilterNeedles...))
	// A needle inside a key that a non-\u escape could spell differently does not count.
	p := MustCompile("a/b.name")
	require.Error(t, New(p, Lines, nil).SetPrefilter(`"a/b"`))
	require.Error(t, New(MustCompile("*.{}"), Lines, nil).SetPrefilter(`"name"`), "a pattern without a literal key cannot be prefiltered")
	require.NoError(t, New(MustCompile("*.name"), Lines, nil).SetPrefilter(`"na`))
}

// TestPrefilterSameRecords compares prefiltered and full scans on hand-made records: escapes,
// invalid lines, needles hidden behind \u escapes, control bytes, deep nesting, blank lines.
func TestPrefilterSameRecords(t *testing.T) {
	lines := []string{
		`{"message":{"parts":[{"text":"plain"}]}}`,
		`{"message":{"parts":[{"functionCall":{"id":"c1","name":"mcp__a__b.c"}}]}}`,
		`{"message":{"parts":[{"\u0066unctionCall":{"name":"mcp__hidden__x.y"}}]}}`,
		`{"message":{"parts":[{"function\u0043all":{"name":"mcp__hidden__x.y"}}]}}`,
		`{"tools":{"by\u004eame":{"mcp__k.k__v":{}}}}`,
		`{"systemPayload":{"uiEvent":{"function_name":"mcp__t__u.v"}}}`,
		`{"text":"a \"quoted\" \\ back\/slash \n\t\r\b\f"}`,
		`{"text":"unterminated}`,
		`{"a":1,}`, `{"a" 1}`, `[1,2`, `{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":tru}`, `{"a":nulll}`,
		`{"a":"\x"}`, `{"a":"x"} x`, `"just a string"`, `12.5e-3`, `true`, `[]`, `{}`, `[ ]`, `{ }`, ` { "a" : [ 1 , 2 ] } `,
		"{\"a\":\"tab\tinside\"}", "{\"a\":1}\r", "\t{\"a\":1}", "{\"a\":\"bell\x07\"}",
		"   ", "", `{"a":"é"}`, "{\"a\":\"\xff\xfe\"}", `{"a":"\ud800"}`,
		strings.Repeat("[", 100) + strings.Repeat("]", 100),
		strings.Repeat("[", 70000) + strings.Repeat("]", 70000),
		`{"k":"` + strings.Repeat(`x\n`, 5000) + `"}`,
		// values no pattern reaches into (skipped by the fast validator, or read by the full
		// lexer when the skip gives up), in records the full lexer reads (they hold a needle)
		`{"message":{"parts":[{"functionResponse":{"name":"mcp__a__b.c","response":{"output":"` + strings.Repeat("long text ", 100) + `","n":[1,2.5e3,true,null,{}]}}}]},"usage":{"a":1}}`,
		`{"message":{"parts":[{"functionResponse":{"name":"mcp__a__b.c","response":{"output":"\u0041 hidden"}}}]},"x":[{"y":{"z":"\ud800"}}]}`,
		"{\"message\":{\"parts\":[{\"functionCall\":{\"name\":\"x\",\"args\":{\"o\":{\"t\":\"tab\tin\"}}}}]}}",
		`{"message":{"parts":[{"functionCall":{"name":"x"}}]},"bad":{"a":[1,2,}}`,
		`{"message":{"parts":[{"functionCall":{"name":"x"}}]},"bad":{"a":"\q"}}`,
		`{"message":{"parts":[{"functionCall":{"name":"x"}}]},"bad":{"a":01}}`,
		`{"message":{"parts":[{"functionCall":{"name":"x"}}]},"open":{"a":[1,2`,
		`{"message":{"parts":[{"functionCall":{"name":"x"}}]},"deep":` + strings.Repeat("[", 70000) + strings.Repeat("]", 70000) + `}`,
		`{"message":{"parts":[{"functionCall":{"name":"x"}}]},"deep":` + strings.Repeat(`[{"a":`, 300) + `"\u0041"` + strings.Repeat("}]", 300) + `}`,
		`{"message":{"parts":[{"functionCall":{"name":"x"}}]},"sp":{ "a" : [ 1 , "b" ] , "c" : { } }}`,
		"{\"message\":{\"parts\":[{\"functionCall\":{\"name\":\"x\"}}]},\"u\":{\"a\":\"\xff\xfe\"}}",
		// a control byte followed by a letter that would make a valid escape after '\\'
		"{\"a\":\"x\tn\"}", "{\"a\":\"x\x07t\"}",
		"{\"message\":{\"parts\":[{\"functionCall\":{\"name\":\"x\"}}]},\"o\":{\"t\":\"x\tn\"}}",
		"{\"message\":{\"parts\":[{\"functionCall\":{\"name\":\"x\"}}]},\"o\":{\"t\":\"" + strings.Repeat("y", 40) + "\tn\"}}",
		"{\"message\":{\"parts\":[{\"functionCall\":{\"name\":\"x\"}}]},\"o\":{\"t\":\"" + strings.Repeat("y", 40) + "\x01\"}}",
		// strings and skipped values that run into the end of the line (the next record follows)
		`{"text":"` + strings.Repeat("unterminated ", 10),
		`{"message":{"parts":[{"functionCall":{"name":"x"}}]},"o":{"t":"` + strings.Repeat("open ", 10),
		`{"message":{"parts":[{"functionCall":{"name":"` + strings.Repeat("open ", 10),
	}
	// Each line alone too: a chunk's control bytes (classify) are then those of the line.
	for _, l := range lines {
		for _, chunk := range []int{0, 1, 7, 64} {
			scanBoth(t, []byte(l+"\n"), chunk)
		}
	}
	// The lines without a control byte together: classify's list of newlines is used.
	var plain []string
	for _, l := range lines {
		if !strings.ContainsFunc(l, func(r rune) bool { return r < 0x20 }) {
			plain = append(plain, l)
		}
	}
	for _, chunk := range []int{0, 1, 7, 64, 4096} {
		st, fast := scanBoth(t, []byte(strings.Join(plain, "\n")+"\n"), chunk)
		if chunk == 0 {
			assert.Equal(t, PrefilterStats{Fast: 16, Full: 32, Skipped: 14, SkipFailed: 20, FastKeys: 93}, st, "records of the plain lines through the fast validator / the full lexer; values skipped / skips given up")
			assert.Equal(t, PrefilterStats{Skipped: 6, SkipFailed: 20, FastKeys: 57, FastRecords: 24, FastRecordsFailed: 24}, fast, "records of the plain lines the whole-record lexer read / gave up; in those given up, values skipped / skips given up")
		}
	}
	in := []byte(strings.Join(lines, "\n") + "\n" + `{"last":"no newline"}`)
	for _, chunk := range []int{0, 1, 7, 64, 4096} {
		st, fast := scanBoth(t, in, chunk)
		if chunk == 0 {
			assert.Equal(t, PrefilterStats{Fast: 16, Full: 42, Skipped: 17, SkipFailed: 32, FastKeys: 0}, st,
				"records through the fast validator / the full lexer; values skipped / skips given up")
			assert.Equal(t, PrefilterStats{Skipped: 7, SkipFailed: 32, FastRecords: 26, FastRecordsFailed: 32}, fast,
				"records the whole-record lexer read / gave up; in those given up, values skipped / skips given up")
		}
	}
}

// TestFastKeySameRecords: keys read in one step (fastKey) give the records and captures of the
// careful scan, and every case fastKey must leave to the string states does: escaped keys at
// nodes that want keys, captured keys, spaces or another byte before the colon, a key running
// into the end of the line or of the chunk, a chunk with a control byte, a node with many
// literal keys (a map) and with a wildcard key.
func TestFastKeySameRecords(t *testing.T) {
	lines := []string{
		`{"message":{"parts":[{"functionCall":{"id":"c1","name":"mcp__a__b.c","args":{"name":"n"}}}]}}`,
		`{"message" :{"parts" :[{"functionCall"   :{"name"  : "x"}}]}}`,
		`{"mess\u0061ge":{"parts":[{"functionCall":{"name":"escaped key above"}}]}}`,
		`{"message":{"parts":[{"function\u0043all":{"name":"hidden"}},{"functionCall":{"n\u0061me":"y"}}]}}`,
		`{"message":{"parts":[{"functionCall":{"na\"me":"z","name":"w"}}]}}`,
		`{"tools":{"byName":{"mcp__k.k__v":{},"b\u0062":1,"plain":{"x":1}}}}`,
		`{"systemPayload":{"uiEvent":{"function_name":"f","mcp_server_name":"s"},"history":[{"parts":[{"functionResponse":{"name":"r"}}]}]}}`,
		`{"message" x:1}`, `{"message"}`, `{"message"`, `{"mess`, `{"message":{"parts":[{"functionCall":{"name" `,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"message":{"parts":[]}}`,
		`{"":1,"message":{"":{"parts":2},"parts":[{"":0,"functionCall":{"":"","name":"e"}}]}}`,
		`{"message":{"parts":[{"functionCall":{"name":"é"},"clé":"ü"}]}}`,
		"{\"message\":{\"parts\":[{\"functionCall\":{\"name\"\t:\"tab before colon\"}}]}}",
		"{\"message\":{\"parts\":[{\"functionCall\":{\"name\":\"x\"}}]},\"k\xff\":1}",
		"{\"message\":{\"pa\x01rts\":[{\"functionCall\":{\"name\":\"x\"}}]}}",
	}
	var total PrefilterStats
	for _, chunk := range []int{0, 1, 5, 16, 4096} {
		for _, l := range lines {
			scanBoth(t, []byte(l+"\n"), chunk)
		}
		st, _ := scanBoth(t, []byte(strings.Join(lines, "\n")+"\n"), chunk)
		if chunk == 0 {
			total = st
		}
	}
	plain := strings.Join(lines[:len(lines)-3], "\n") + "\n"
	_, st := scanPrefiltered(t, []byte(plain), 0)
	t.Logf("plain lines: %d keys read in one step", st.FastKeys)
	assert.Positive(t, st.FastKeys, "the plain lines are read with fastKey")
	assert.Zero(t, total.FastKeys, "a chunk with a tab has no fast keys")

	// A key longer than the capture limit is not decoded: nothing below it matches, with or
	// without fastKey ("functionCall" is 14 bytes with its quotes).
	in := []byte(`{"message":{"parts":[{"functionCall":{"name":"x"}}]}}` + "\n")
	small := func(s *Scanner) { s.SetMaxCapture(10) }
	ref := scanAllWith(t, prefilterPatterns, Lines, in, 0, func(s *Scanner) { small(s); s.careful = true })
	require.Len(t, ref, 1)
	assert.Empty(t, ref[0].Captures, "a key over the limit leads nowhere")
	assert.Equal(t, ref, scanAllWith(t, prefilterPatterns, Lines, in, 0, small))
	assert.Len(t, scanAll(t, prefilterPatterns, Lines, in, 0)[0].Captures, 1, "with the default limit the name is captured")
}

// TestPrefilterFixtures compares prefiltered and full scans on every JSON Lines and JSON file
// of fixtures/ (real sessions, rollouts, vectors), whole and in chunks.
func TestPrefilterFixtures(t *testing.T) {
	var files []string
	require.NoError(t, filepath.WalkDir("../../fixtures", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".json")) {
			files = append(files, p)
		}
		return err
	}))
	require.GreaterOrEqual(t, len(files), 20)
	var total PrefilterStats
	var captures, docs int
	for _, f := range files {
		in, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, chunk := range []int{0, 13, 4096} {
			if strings.HasSuffix(f, ".json") {
				// Documents (settings, checkpoints): the full lexer's shortcuts against careful.
				ref := scanAllWith(t, prefilterPatterns, Document, in, chunk, func(s *Scanner) { s.careful = true })
				require.Equal(t, ref, scanAll(t, prefilterPatterns, Document, in, chunk), "%s as a document (chunk %d)", f, chunk)
				docs++
			}
			st, fast := scanBoth(t, in, chunk)
			if chunk == 0 {
				total.FastRecords += fast.FastRecords
				total.FastRecordsFailed += fast.FastRecordsFailed
				total.Fast += st.Fast
				total.Full += st.Full
				total.Skipped += st.Skipped
				total.SkipFailed += st.SkipFailed
				total.FastKeys += st.FastKeys
				for _, r := range scanAll(t, prefilterPatterns, Lines, in, 0) {
					captures += len(r.Captures)
				}
			}
		}
	}
	t.Logf("%d documents × 3 chunkings equal to the careful scan", docs/3)
	t.Logf("%d fixture files: %d records fast-validated, %d through the full lexer (%d values skipped, %d skips given up, %d keys read in one step); %d records read by the whole-record lexer, %d left to the full lexer; %d captures, all equal to the careful scan",
		len(files), total.Fast, total.Full, total.Skipped, total.SkipFailed, total.FastKeys, total.FastRecords, total.FastRecordsFailed, captures)
	assert.Positive(t, total.FastRecords)
	assert.Positive(t, total.Fast)
	assert.Positive(t, total.Full)
	assert.Positive(t, total.FastKeys)
	assert.Positive(t, captures)
}

// FuzzPrefilterAgreesWithFullScan: for any input (several records) and chunking, the
// prefiltered scan reports exactly the records and captures of the full scan.
func FuzzPrefilterAgreesWithFullScan(f *testing.F) {
	for _, s := range []string{
		`{"message":{"parts":[{"functionCall":{"name":"x"}}]}}` + "\n" + `{"a":"b"}`,
		`{"message":{"parts":[{"\u0066unctionCall":{"name":"x"}}]}}`,
		`{"tools":{"byName":{"k":1}}}` + "\n\n" + `[1,2,{"a":"\"b\\"}]`,
		`{"systemPayload":{"uiEvent":{"function_name":"mcp__a__b"}}}`,
		"{\"a\":\"\t\"}\n{\"a\":1}\r\n \n",
		`{"a":1}x` + "\n" + `01` + "\n" + `"\ud800"` + "\n" + `-0.5e+10`,
	} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(5))
	}
	f.Fuzz(func(t *testing.T, s string, chunk uint8) {
		in := []byte(s)
		ref := scanCareful(t, in, int(chunk))
		full := scanAll(t, prefilterPatterns, Lines, in, int(chunk))
		if !assert.Equal(t, ref, full, "full scan (classify, skipped values) vs careful") {
			t.FailNow()
		}
		got, _ := scanPrefiltered(t, in, int(chunk))
		if !assert.Equal(t, ref, got, "prefiltered vs careful") {
			t.FailNow()
		}
		lexer := scanAllWith(t, prefilterPatterns, Lines, in, int(chunk), func(s *Scanner) { s.noFastRecord = true })
		if !assert.Equal(t, ref, lexer, "full lexer without the whole-record lexer vs careful") {
			t.FailNow()
		}
		noIndex := scanAllWith(t, prefilterPatterns, Lines, in, int(chunk), func(s *Scanner) { s.noIndex = true })
		if !assert.Equal(t, ref, noIndex, "whole-record lexer without the string index vs careful") {
			t.FailNow()
		}
	})
}

// TestClassify compares classify with a byte loop for a control byte, '\n' and a high byte at
// every offset of inputs of every length up to 100 (the 32-byte blocks and the tail): the two
// flags, and the list of newlines when there is no other control byte.
func TestClassify(t *testing.T) {
	naive := classifyNaive
	checks := 0
	for n := 0; n <= 100; n++ {
		base := bytes.Repeat([]byte("a"), n)
		h, c, nls := classify(base, nil)
		assert.False(t, h)
		assert.False(t, c)
		assert.Empty(t, nls)
		for i := 0; i < n; i++ {
			for _, x := range []byte{0, '\t', '\n', '\r', 0x1f, 0x20, 0x7f, 0x80, 0xff} {
				for _, second := range []int{-1, 0, n - 1} { // a second byte: '\n' at the start/end
					b := bytes.Clone(base)
					if second >= 0 {
						b[second] = '\n'
					}
					b[i] = x
					wh, wc, wn := naive(b)
					for _, f := range []func([]byte, []int) (bool, bool, []int){classify, classifyGo} {
						gh, gc, gn := f(b, nil)
						require.Equal(t, [2]bool{wh, wc}, [2]bool{gh, gc}, "byte %#x at %d of %d", x, i, n)
						if !wc {
							require.Equal(t, wn, gn, "newlines of %q", b)
						}
					}
					checks++
				}
			}
		}
	}
	assert.Equal(t, 136350, checks)
	// Long inputs (several 128-block groups of the vector version, a tail): newlines every
	// 37 bytes, then a high byte, then a control byte at a few offsets.
	long := bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyz0123456789\n"), 401)[:14801]
	for _, at := range []int{0, 31, 4095, 4096, 8191, 14790, 14800} {
		for _, x := range []byte{'a', 0xc3, '\t', 0x01} {
			b := bytes.Clone(long)
			b[at] = x
			wh, wc, wn := naive(b)
			for _, f := range []func([]byte, []int) (bool, bool, []int){classify, classifyGo} {
				gh, gc, gn := f(b, nil)
				require.Equal(t, [2]bool{wh, wc}, [2]bool{gh, gc}, "byte %#x at %d", x, at)
				if !wc {
					require.Equal(t, wn, gn, "newlines with %#x at %d", x, at)
				}
			}
		}
	}
}

func TestAnyCtl(t *testing.T) {
	base := bytes.Repeat([]byte("a"), 100)
	assert.False(t, anyCtl(base))
	for i := 0; i < len(base); i++ {
		for _, c := range []byte{0, 0x1f, '\n', '\t'} {
			b := bytes.Clone(base)
			b[i] = c
			assert.True(t, anyCtl(b), "byte %#x at %d", c, i)
		}
		b := bytes.Clone(base)
		b[i] = 0x20
		assert.False(t, anyCtl(b))
		b[i] = 0x80
		assert.False(t, anyCtl(b))
	}
}

// TestLineEndSearchedOncePerLine: in a chunk with a control byte (no newline list), a long line
// of many values no pattern reaches into is searched for its end once, not once per value.
func TestLineEndSearchedOncePerLine(t *testing.T) {
	var b strings.Builder
	b.WriteString("{\"message\":{\"parts\":[{\"functionCall\":{\"name\":\"x\"}}]},\"t\":\t1")
	for k := range 20000 {
		fmt.Fprintf(&b, `,"o%d":{"a":[1]}`, k)
	}
	line := b.String() + "}\n"
	in := []byte(line + line)
	var sc *Scanner
	got := scanAllWith(t, prefilterPatterns, Lines, in, 0, func(s *Scanner) { sc, s.noFastRecord = s, true })
	require.Len(t, got, 2)
	assert.Equal(t, scanCareful(t, in, 0), got)
	assert.Positive(t, sc.pstats.Skipped)
	assert.LessOrEqual(t, sc.searched, int64(len(in)), "bytes searched for line ends")
}
