package jsonscan

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// genIndexCorpus makes JSON Lines records shaped like the Qwen sessions prefilterPatterns
// read, whose string values are drawn to trip the string index: runs of backslashes ending
// before a quote, escaped quotes, \u escapes (a name written as "\u006dcp__…"), two-, three-
// and four-byte UTF-8 (and invalid bytes), the padding before each name chosen so that
// strings start and end at every offset of the 64-byte words; now and then CRLF, a NUL or a
// tab in a string (an unclean chunk), an unterminated record, a blank line, a BOM.
func genIndexCorpus(r *rand.Rand, nrec int) []byte {
	pieces := []string{`\\`, `\"`, `\\\"`, `\\\\`, `\u0041`, `\/`, `\n`, `é`, `€`, `𝄞`, "\xff", "\xc3", ` `, `{`, `}`, `[`, `]`, `:`, `,`, `x`, `name`}
	str := func(n int) string {
		var b strings.Builder
		if r.IntN(2) == 0 { // no escape: the strings the index settles
			for b.Len() < n {
				b.WriteString([]string{"a", "b", " ", "é", "€", "𝄞", "{", ":", ","}[r.IntN(9)])
			}
			return b.String()
		}
		for b.Len() < n {
			if r.IntN(400) == 0 {
				b.WriteString([]string{`"`, `\`}[r.IntN(2)]) // ends the string early, or escapes its quote
			} else if r.IntN(3) == 0 {
				b.WriteString(pieces[r.IntN(len(pieces))])
			} else {
				b.WriteByte(byte('a' + r.IntN(26)))
			}
		}
		return b.String()
	}
	plain := func(n int) string { return strings.Repeat("p", n) }
	names := []string{"mcp__a__b.c", `mcp__x\u002ey__z`, `\u006dcp__lit__s`, "read_file", `mcp__q\"uote`, `mcp__b\\s`, "mcp__é__ü"}
	var out bytes.Buffer
	if r.IntN(8) == 0 {
		out.WriteString("\xef\xbb\xbf")
	}
	for range nrec {
		var rec string
		pad := plain(r.IntN(130))
		name := names[r.IntN(len(names))]
		switch r.IntN(7) {
		case 0:
			rec = fmt.Sprintf(`{"pad":"%s","message":{"parts":[{"text":"%s"},{"functionCall":{"id":"%s","name":"%s","args":{"name":"%s","q":"%s"}}}]},"t":"%s"}`,
				pad, str(r.IntN(200)), str(r.IntN(10)), name, name, str(r.IntN(80)), str(r.IntN(70)))
		case 1:
			rec = fmt.Sprintf(`{"message":{"parts":[{"functionResponse":{"name":"%s","id":"%s","response":{"output":"%s"}}}]},"%s":"%s"}`,
				name, pad, str(r.IntN(3000)), str(r.IntN(20)), str(r.IntN(64)))
		case 2:
			rec = fmt.Sprintf(`{"tools":{"byName":{"%s":{"count":1},"%s":{"c":2},"%s":[]}},"x":"%s"}`, name, str(r.IntN(40)), pad, str(r.IntN(100)))
		case 3:
			rec = fmt.Sprintf(`{"systemPayload":{"uiEvent":{"function_name":"%s","mcp_server_name":"%s","args":"%s"}},"p":"%s"}`, name, str(r.IntN(30)), str(r.IntN(500)), pad)
		case 4:
			rec = fmt.Sprintf(`{"a":"%s", "b" : [ "%s" , {"%s":"%s"} ] , "message":{"parts":[{"functionCall":{"name":"%s"}}]}}`, pad, str(r.IntN(64)), str(r.IntN(64)), str(r.IntN(64)), name)
		case 5:
			rec = fmt.Sprintf(`{"k":"%s%s"}`, pad, strings.Repeat(`\`, r.IntN(9))) // maybe unterminated
		default:
			rec = fmt.Sprintf(`["%s",{"parts":[{"functionCall":{"name":"%s"}}]}]`, str(r.IntN(300)), name)
		}
		switch r.IntN(40) {
		case 0:
			rec = strings.Replace(rec, "p", "\x00", 1)
		case 1:
			rec = strings.Replace(rec, "p", "\t", 1)
		case 2:
			rec = rec[:r.IntN(len(rec)+1)]
		case 3:
			out.WriteString("\n")
		}
		out.WriteString(rec)
		if r.IntN(10) == 0 {
			out.WriteString("\r\n")
		} else {
			out.WriteString("\n")
		}
	}
	if r.IntN(3) == 0 {
		out.Truncate(out.Len() - 1) // the last record without its newline
	}
	return out.Bytes()
}

// indexChunks are the Write sizes the differential scans use: whole, around the 64-byte
// words and the classify groups (64 blocks: 4 KiB), and odd sizes.
var indexChunks = []int{0, 1, 63, 64, 65, 127, 4095, 4096, 4097, 8191, 777}

// checkIndexScans requires that the scan with every shortcut, the scan without the string
// index and the scan without the whole-record lexer report the careful scan's records.
// It returns how many captures there were and how many records the whole-record lexer read.
func checkIndexScans(t testing.TB, in []byte, chunk int) (captures int, fast int) {
	t.Helper()
	ref := scanCareful(t, in, chunk)
	var sc *Scanner
	full := scanAllWith(t, prefilterPatterns, Lines, in, chunk, func(s *Scanner) { sc = s })
	require.Equal(t, ref, full, "every shortcut vs careful (chunk %d, %d bytes)", chunk, len(in))
	noIndex := scanAllWith(t, prefilterPatterns, Lines, in, chunk, func(s *Scanner) { s.noIndex = true })
	require.Equal(t, ref, noIndex, "without the string index vs careful (chunk %d, %d bytes)", chunk, len(in))
	for _, r := range ref {
		captures += len(r.Captures)
	}
	return captures, int(sc.PrefilterStats().FastRecords)
}

// TestStringIndexScanDifferential: whole scans of generated corpora (genIndexCorpus), written
// in chunks of every size of indexChunks, report the careful scan's records and captures
// (offsets and values) with the string index, without it and without the whole-record lexer.
// Seeded: the same corpora on every run.
func TestStringIndexScanDifferential(t *testing.T) {
	cases, captures, fast := 0, 0, 0
	for seed := range uint64(24) {
		r := rand.New(rand.NewPCG(seed, 29))
		in := genIndexCorpus(r, 5+r.IntN(40))
		for _, chunk := range indexChunks {
			if chunk == 1 && len(in) > 20000 {
				continue
			}
			c, f := checkIndexScans(t, in, chunk)
			cases, captures, fast = cases+1, captures+c, fast+f
		}
	}
	t.Logf("%d scans: %d captures, %d records read by the whole-record lexer", cases, captures, fast)
	require.Greater(t, cases, 250)
	require.Greater(t, captures, 5000, "the corpora hold too few names for the test to see a wrong one")
	require.Greater(t, fast, 1500, "the whole-record lexer (and so the string index) read too few records")
}

// FuzzStringIndexScan: the scan of a generated corpus (the seed picks it) in chunks of any
// size reports the careful scan's records, with and without the string index.
func FuzzStringIndexScan(f *testing.F) {
	f.Add(uint64(1), uint16(0), uint8(10))
	f.Add(uint64(2), uint16(4096), uint8(30))
	f.Add(uint64(3), uint16(63), uint8(5))
	f.Fuzz(func(t *testing.T, seed uint64, chunk uint16, nrec uint8) {
		r := rand.New(rand.NewPCG(seed, 29))
		in := genIndexCorpus(r, int(nrec%60)+1)
		c := int(chunk)
		if c > 0 && c < 16 && len(in) > 4096 {
			c += 16 // byte-sized chunks of a long input take too long to fuzz
		}
		checkIndexScans(t, in, c)
	})
}

// TestStringIndexPoolConcurrent: Scanners made, written and closed at once in several
// goroutines (as the pipeline's workers scan several files), whose bitmaps go round through
// the pool, each read the careful scan's records of their own input; also Scanners abandoned
// without Close and written again after Close. Meant for -race, and red if two Scanners
// shared a bitmap.
func TestStringIndexPoolConcurrent(t *testing.T) {
	const n = 6
	ins := make([][]byte, n)
	refs := make([][]gotRecord, n)
	for k := range ins {
		r := rand.New(rand.NewPCG(uint64(k), 7))
		// each input differs in length, so the bitmaps' sizes differ too
		ins[k] = genIndexCorpus(r, 20+40*k)
		refs[k] = scanCareful(t, ins[k], 0)
	}
	var wg sync.WaitGroup
	errs := make(chan string, n*10)
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 8 {
				k := (g + round) % n
				var out []gotRecord
				s := New(prefilterPatterns, Lines, func(r *Record) error {
					gr := gotRecord{Line: r.Line, Start: r.Start, End: r.End, Newline: r.Newline, Blank: r.Blank, BadUTF8: r.BadUTF8}
					if r.Err != nil {
						gr.Err = r.Err.Error()
					}
					for _, c := range r.Captures {
						v, err := c.Value()
						if err != nil {
							return err
						}
						gr.Captures = append(gr.Captures, fmt.Sprintf("%d@%d:%d %s=%s", c.Pattern, c.Offset, c.Line, c.Path, v.Str))
					}
					out = append(out, gr)
					return nil
				})
				chunk := []int{0, 4096, 65, 100000}[round%4]
				if chunk == 0 {
					chunk = len(ins[k]) + 1
				}
				for i := 0; i < len(ins[k]); i += chunk {
					if _, err := s.Write(ins[k][i:min(len(ins[k]), i+chunk)]); err != nil {
						errs <- err.Error()
						return
					}
				}
				if round%3 == 2 {
					continue // abandoned without Close: its bitmaps are never handed on
				}
				if err := s.Close(); err != nil {
					errs <- err.Error()
					return
				}
				if !equalRecords(refs[k], out) {
					errs <- fmt.Sprintf("goroutine %d round %d input %d chunk %d: records differ from the careful scan", g, round, k, chunk)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func equalRecords(a, b []gotRecord) bool { return fmt.Sprint(a) == fmt.Sprint(b) }
