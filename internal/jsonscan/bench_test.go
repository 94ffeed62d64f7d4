package jsonscan

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchInput is the real fixture session repeated to about 8 MiB.
func benchInput(b *testing.B) []byte {
	b.Helper()
	one, err := os.ReadFile("../../fixtures/qwen-real/dot-qwen/projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	return bytes.Repeat(one, (8<<20)/len(one)+1)
}

// BenchmarkScanSession measures the scanner on real session records (MB/s is the number to
// watch: scan must stay within 2× of cat | wc -l).
func BenchmarkScanSession(b *testing.B) {
	in := benchInput(b)
	pat := MustCompile("message.parts[*].functionCall.name", "message.parts[*].functionResponse.name",
		"message.parts[*].functionCall.id", "systemPayload.uiEvent.function_name")
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		s := New(pat, Lines, func(r *Record) error { n += len(r.Captures); return nil })
		for off := 0; off < len(in); off += 256 << 10 {
			_, _ = s.Write(in[off:min(len(in), off+256<<10)])
		}
		_ = s.Close()
		if n == 0 {
			b.Fatal("no captures")
		}
	}
}

// BenchmarkScanText measures the string fast path on long plain text values.
func BenchmarkScanText(b *testing.B) {
	line := append([]byte(`{"message":{"parts":[{"text":"`), bytes.Repeat([]byte("The kinase inhibitor results were summarised. "), 200)...)
	line = append(line, []byte(`"}]}}`+"\n")...)
	in := bytes.Repeat(line, (8<<20)/len(line))
	pat := MustCompile("message.parts[*].functionCall.name")
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := New(pat, Lines, nil)
		_, _ = s.Write(in)
		_ = s.Close()
	}
}

// BenchmarkClassify measures the one pass over each chunk (UTF-8 need, control bytes,
// newlines) on 1 MiB of real session records; the Go fallback alongside.
func BenchmarkClassify(b *testing.B) {
	in := benchInput(b)[:1<<20]
	for _, c := range []struct {
		name string
		f    func([]byte, []int) (bool, bool, []int)
	}{{"vector", classify}, {"go", classifyGo}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			var nls []int
			for range b.N {
				_, _, nls = c.f(in, nls[:0])
			}
		})
	}
}

// BenchmarkScanDense is the whole-record lexer alone on make bench's dense Qwen corpus (every
// record holds names), with Qwen Code's session patterns: the first 64 MiB of the files under
// SESSIONFIX_BENCH_CORPUS (`sessionfix-bench -generate DIR -corpus qwen-dense`), in 1 MiB
// chunks cut at line ends as engine/jsonl writes them. Skipped without the variable.
func BenchmarkScanDense(b *testing.B) {
	dir := os.Getenv("SESSIONFIX_BENCH_CORPUS")
	if dir == "" {
		b.Skip("SESSIONFIX_BENCH_CORPUS not set")
	}
	var in []byte
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && len(in) < 64<<20 {
			data, rerr := os.ReadFile(p)
			if rerr != nil {
				return rerr
			}
			in = append(in, data...)
		}
		return err
	})
	var pats []string
	for _, pre := range []string{"message", "systemPayload.compressedHistory[*]", "systemPayload.history[*]"} {
		for _, f := range []string{"functionCall.name", "functionCall.id", "functionCall.args.name", "functionResponse.name", "functionResponse.id"} {
			pats = append(pats, pre+".parts[*]."+f)
		}
	}
	pats = append(pats, "systemPayload.uiEvent.function_name", "systemPayload.uiEvent.mcp_server_name", "systemPayload.uiEvent.call_id")
	pat := MustCompile(pats...)
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for range b.N {
		n := 0
		s := New(pat, Lines, func(r *Record) error { return nil })
		s.SetCaptureFunc(func(*Capture) { n++ })
		if err := s.SetPrefilter(`"function`, `"uiEvent"`); err != nil {
			b.Fatal(err)
		}
		for off := 0; off < len(in); {
			end := min(len(in), off+1<<20)
			if end < len(in) {
				end = off + bytes.LastIndexByte(in[off:end], '\n') + 1
			}
			_, _ = s.Write(in[off:end])
			off = end
		}
		_ = s.Close()
		if n == 0 {
			b.Fatal("no captures")
		}
	}
}
