package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sessionfix/sessionfix/agent/qwen/qwenbench"
)

var (
	benchCorpusOnce sync.Once
	benchCorpusDir  string
	benchCorpusErr  error
)

// benchCorpus is the Qwen corpus the whole-command benchmarks read: SESSIONFIX_BENCH_CORPUS
// when set (a directory make bench's generator wrote: sessionfix-bench -generate DIR), else
// 64 MiB generated once per process from the real fixture records.
func benchCorpus(b *testing.B) string {
	b.Helper()
	if d := os.Getenv("SESSIONFIX_BENCH_CORPUS"); d != "" {
		return d
	}
	benchCorpusOnce.Do(func() {
		recs, err := qwenbench.LoadRecords("../../fixtures/qwen-real/dot-qwen")
		if err != nil {
			benchCorpusErr = err
			return
		}
		if benchCorpusDir, benchCorpusErr = os.MkdirTemp("", "sessionfix-benchcorpus-"); benchCorpusErr != nil {
			return
		}
		_, benchCorpusErr = qwenbench.Generate(benchCorpusDir, recs, qwenbench.Options{Bytes: 64 << 20, FileBytes: 512 << 20 / 200, Seed: 1})
	})
	if benchCorpusErr != nil {
		b.Fatal(benchCorpusErr)
	}
	return benchCorpusDir
}

func corpusBytes(b *testing.B, dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return err
	})
	return n
}

// BenchmarkScanCommand is the whole `sessionfix scan DIR` on the corpus (discovery, reading,
// planning, the summary); MB/s of corpus. Profile it with -cpuprofile.
func BenchmarkScanCommand(b *testing.B) {
	dir := benchCorpus(b)
	b.SetBytes(corpusBytes(b, dir))
	env := testEnv(b)
	env.In, env.Out, env.Err = nil, io.Discard, io.Discard
	b.ResetTimer()
	for range b.N {
		if code := run(context.Background(), []string{"sessionfix", "scan", dir}, env); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// BenchmarkFixApplyCommand is the whole `sessionfix fix --apply --yes DIR` on a fresh copy of
// the corpus each iteration (the copy is not timed); MB/s of corpus.
func BenchmarkFixApplyCommand(b *testing.B) {
	src := benchCorpus(b)
	b.SetBytes(corpusBytes(b, src))
	env := testEnv(b)
	env.In, env.Out, env.Err = nil, io.Discard, io.Discard
	for i := range b.N {
		b.StopTimer()
		dst := filepath.Join(b.TempDir(), "copy")
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			b.Fatal(err)
		}
		state := filepath.Join(b.TempDir(), "state")
		b.StartTimer()
		if code := run(context.Background(), []string{"sessionfix", "fix", "--apply", "--yes", "--state-dir", state, dst}, env); code != 0 {
			b.Fatalf("run %d: exit %d", i, code)
		}
	}
}
