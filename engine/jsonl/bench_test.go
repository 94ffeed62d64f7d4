package jsonl_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/agent/qwen/qwenbench"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/store"
)

// benchFiles generates a 64 MiB corpus of session files once per benchmark, or uses the one in
// SESSIONFIX_BENCH_CORPUS (a directory `sessionfix-bench -generate DIR` wrote).
func benchFiles(b *testing.B) ([]string, int64) {
	b.Helper()
	dir := os.Getenv("SESSIONFIX_BENCH_CORPUS")
	if dir == "" {
		recs, err := qwenbench.LoadRecords("../../fixtures/qwen-real/dot-qwen")
		if err != nil {
			b.Fatal(err)
		}
		dir = b.TempDir()
		if _, err := qwenbench.Generate(dir, recs, qwenbench.Options{Bytes: 64 << 20, Seed: 7}); err != nil {
			b.Fatal(err)
		}
	}
	var files []string
	var size int64
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".jsonl" {
			files = append(files, p)
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
			}
		}
		return err
	})
	return files, size
}

// BenchmarkStoreScan is one core scanning the generated corpus (the mix make bench uses).
func BenchmarkStoreScan(b *testing.B) {
	files, size := benchFiles(b)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, f := range files {
			if _, err := jsonl.Open(f, qwen.Session).Scan(context.Background(), store.ScanOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkStoreScanHash is the scan fix does before rewriting (with SHA-256).
func BenchmarkStoreScanHash(b *testing.B) {
	files, size := benchFiles(b)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, f := range files {
			if _, err := jsonl.Open(f, qwen.Session).Scan(context.Background(), store.ScanOptions{Hash: true}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
