package jsonscan

import (
	"bytes"
	"os"
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
