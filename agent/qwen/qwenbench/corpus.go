// Package qwenbench builds a large corpus of Qwen Code session files from real fixture
// records, for benchmarks: the records of fixtures/qwen-real (legacy names from 0.12.0 and
// registered names from 0.24.4) are repeated with fresh ids, interleaved with assistant text and
// tool outputs of realistic sizes, in a runtime tree of many projects and sessions.
package qwenbench

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Fixture is the Qwen Code runtime dir, relative to the repository's fixtures/, whose session
// records seed the corpora (LoadRecords).
const Fixture = "qwen-real/dot-qwen"

// Store labels a corpus's rows in make bench's table: the storage engine and the agent.
const Store = "JSONL (Qwen)"

// Options sizes a corpus.
type Options struct {
	// Bytes is the total size to write (approximately, whole records).
	Bytes int64
	// FileBytes is the average session file size (default 4 MiB; files vary from 1/8 to 2×;
	// make bench uses 2.56 MiB: 200 sessions in 512 MiB).
	FileBytes int64
	// Seed makes the corpus reproducible.
	Seed uint64
	// Dense makes every record one of the fixture's that carry names (function calls and
	// responses, telemetry), none of the text and tool-output filler: a home whose sessions are
	// mostly tool calls (issue 29).
	Dense bool
}

// Stats describes a generated corpus.
type Stats struct {
	Files   int
	Bytes   int64
	Records int64
	Names   int64 // legacy dotted name occurrences written (each is one rewrite)
}

// LoadRecords reads the fixture session lines (every *.jsonl under dir's projects/ tree).
func LoadRecords(dir string) ([][]byte, error) {
	var recs [][]byte
	err := filepath.WalkDir(filepath.Join(dir, "projects"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			recs = append(recs, append([]byte(nil), sc.Bytes()...))
		}
		return sc.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("load fixture records: %w", err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("load fixture records: no session lines under %s", dir)
	}
	return recs, nil
}

const lorem = "The kinase inhibitor results were summarised from the search output; each entry lists the title, authors, year and a short abstract. "

// Generate writes the corpus under root (root/projects/<project>/chats/<uuid>.jsonl).
func Generate(root string, recs [][]byte, opt Options) (Stats, error) {
	if opt.FileBytes <= 0 {
		opt.FileBytes = 4 << 20
	}
	rng := rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15))
	var st Stats
	if opt.Dense {
		recs = named(recs)
		if len(recs) == 0 {
			return st, fmt.Errorf("generate a dense corpus: no fixture record carries a name")
		}
	}
	dotted := [][]byte{[]byte("mcp__lit__literature.search_pubmed"), []byte("mcp__foo.bar__deploy.prod"), []byte("mcp__foo.bar__get_data"), []byte("mcp__com.example.enterprise-search__list")}
	for st.Bytes < opt.Bytes {
		project := fmt.Sprintf("-home-bench-src-p%03d", st.Files%97)
		dir := filepath.Join(root, "projects", project, "chats")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return st, err
		}
		name := fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x.jsonl", rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xfff, rng.Uint32()&0xfff, rng.Uint64()&0xffffffffffff)
		target := opt.FileBytes/8 + rng.Int64N(opt.FileBytes*2-opt.FileBytes/8)
		target = min(target, opt.Bytes-st.Bytes)
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return st, err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		var written int64
		var buf []byte
		for written < target {
			var line []byte
			switch k := rng.IntN(10); {
			case k < 6 || opt.Dense:
				line = recs[rng.IntN(len(recs))]
			case k < 8:
				buf = textRecord(buf, rng, 2<<10+rng.IntN(6<<10))
				line = buf
			default:
				buf = toolOutput(buf, rng, 8<<10+rng.IntN(24<<10))
				line = buf
			}
			for _, d := range dotted {
				st.Names += int64(bytes.Count(line, d))
			}
			if _, err := w.Write(line); err != nil {
				f.Close()
				return st, err
			}
			if err := w.WriteByte('\n'); err != nil {
				f.Close()
				return st, err
			}
			written += int64(len(line) + 1)
			st.Records++
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return st, err
		}
		if err := f.Close(); err != nil {
			return st, err
		}
		st.Files++
		st.Bytes += written
	}
	return st, nil
}

// named returns the records that carry a name: a function call or response, or a telemetry
// record's function_name.
func named(recs [][]byte) [][]byte {
	var out [][]byte
	for _, r := range recs {
		if bytes.Contains(r, []byte(`"functionCall"`)) || bytes.Contains(r, []byte(`"functionResponse"`)) || bytes.Contains(r, []byte(`"function_name"`)) {
			out = append(out, r)
		}
	}
	return out
}

// fillerText is lorem repeated past the longest filler (plain ASCII: no JSON escapes needed).
var fillerText = strings.Repeat(lorem, (64<<10)/len(lorem)+2)

// filler is n bytes of fillerText from a random start (a slice: no copy).
func filler(rng *rand.Rand, n int) string {
	n = min(n, len(fillerText)-len(lorem))
	off := rng.IntN(len(lorem))
	return fillerText[off : off+n]
}

// appendHex appends v in lower-case hex, zero-padded to width digits.
func appendHex(b []byte, v uint64, width int) []byte {
	s := strconv.FormatUint(v, 16)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// textRecord is an assistant record with one text part of n bytes. The records are built in
// buf (reused): the line is valid until the next call.
func textRecord(buf []byte, rng *rand.Rand, n int) []byte {
	b := append(buf[:0], `{"uuid":"`...)
	b = appendHex(b, rng.Uint64(), 16)
	b = append(b, `","parentUuid":null,"sessionId":"bench","timestamp":"2026-11-30T18:37:17.776Z","type":"assistant","cwd":"/home/bench","version":"0.12.0","message":{"role":"model","parts":[{"text":"`...)
	b = append(b, filler(rng, n)...)
	return append(b, `"}]}}`...)
}

// toolOutput is a tool result record of a legacy dotted name with an output of n bytes.
func toolOutput(buf []byte, rng *rand.Rand, n int) []byte {
	uuid, id := rng.Uint64(), rng.Uint64()
	b := append(buf[:0], `{"uuid":"`...)
	b = appendHex(b, uuid, 16)
	b = append(b, `","type":"tool_result","cwd":"/home/bench","version":"0.12.0","message":{"role":"user","parts":[{"functionResponse":{"id":"call_`...)
	b = appendHex(b, id, 0)
	b = append(b, `","name":"mcp__lit__literature.search_pubmed","response":{"output":"`...)
	b = append(b, filler(rng, n)...)
	b = append(b, `"}}}]},"toolCallResult":{"callId":"call_`...)
	b = appendHex(b, id, 0)
	return append(b, `","status":"success"}}`...)
}
