package jsonl_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionfix/sessionfix/internal/benchcorpus"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/jsonl"
	"github.com/sessionfix/sessionfix/store/qwen"
)

// benchFiles generates a 64 MiB corpus of session files once per benchmark.
func benchFiles(b *testing.B) ([]string, int64) {
	b.Helper()
	recs, err := benchcorpus.LoadRecords("../../fixtures/qwen-real/dot-qwen")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	st, err := benchcorpus.Generate(dir, recs, benchcorpus.Options{Bytes: 64 << 20, Seed: 7})
	if err != nil {
		b.Fatal(err)
	}
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	return files, st.Bytes
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
