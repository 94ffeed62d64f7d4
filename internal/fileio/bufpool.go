package fileio

import (
	"bufio"
	"io"
	"sync"
)

// writers keeps the copyBufSize write buffers of finished rewrites for the next ones: a
// rewrite needs two (the temp's, and the backup's when the backup is a copy), and allocating
// 256 KiB afresh per store was about a third of the bytes an apply allocated (1 GiB corpus, 382
// files), each one zeroed and then scanned for by the collector.
var writers sync.Pool

// getWriter returns a buffered writer of copyBufSize bytes writing to w.
func getWriter(w io.Writer) *bufio.Writer {
	if b, ok := writers.Get().(*bufio.Writer); ok {
		b.Reset(w)
		return b
	}
	return bufio.NewWriterSize(w, copyBufSize)
}

// putWriter gives b back for reuse (what it still buffers is dropped); b must not be used
// after.
func putWriter(b *bufio.Writer) {
	if b == nil {
		return
	}
	b.Reset(nil)
	writers.Put(b)
}
