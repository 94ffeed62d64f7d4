package fileio

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionfix/sessionfix/store"
)

// BenchmarkRewriteFile is one whole crash-safe replace of a 4 MiB session (the engine behind
// fix --apply: hard-linked backup, temp, both hashes, fsyncs, in-use checks, rename, directory
// fsync) with a copying transform; MB/s of file. Each iteration replaces a fresh file (the
// backup of the last one takes its name in the run's backup directory).
func BenchmarkRewriteFile(b *testing.B) {
	dir := b.TempDir()
	line := []byte(`{"message":{"parts":[{"functionResponse":{"name":"mcp__a.b__c","response":{"output":"` + string(bytes.Repeat([]byte("x"), 900)) + `"}}}]}}` + "\n")
	content := bytes.Repeat(line, (4<<20)/len(line))
	copyAll := func(dst io.Writer, src io.Reader) error { _, err := io.Copy(dst, src); return err }
	b.SetBytes(int64(len(content)))
	for i := range b.N {
		b.StopTimer()
		p := filepath.Join(dir, "s.jsonl")
		if err := os.WriteFile(p, content, 0o600); err != nil {
			b.Fatal(err)
		}
		st, err := StatFile(p)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := RewriteFile(context.Background(), p, st, copyAll, store.ApplyOptions{BackupPath: filepath.Join(dir, "backups", fmt.Sprint(i))}); err != nil {
			b.Fatal(err)
		}
	}
}
