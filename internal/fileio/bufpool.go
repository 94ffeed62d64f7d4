package fileio

import (
	"bufio"
	"io"
)

// writers keeps the copyBufSize write buffers of finished rewrites for the next ones: a
// rewrite needs two (the temp's, and the backup's when the backup is a copy), and allocating
// 256 KiB afresh per store was about a third of the bytes an apply allocated (1 GiB corpus, 382
// files), each one zeroed and then scanned for by the collector. A free list of writersKept,
// not a sync.Pool: a garbage collection empties a sync.Pool (in two), and fix --apply on make
// bench's dense corpus, held to cmd/sessionfix's memory limit, collects every few MB, so most
// rewrites allocated their buffers again.
var writers = make(chan *bufio.Writer, writersKept)

// writersKept is how many idle write buffers writers keeps (1 MiB): a rewrite holds its
// buffers only while it copies (copyAndTransform), so about one per worker is in use.
const writersKept = 4

// getWriter returns a buffered writer of copyBufSize bytes writing to w.
func getWriter(w io.Writer) *bufio.Writer {
	select {
	case b := <-writers:
		b.Reset(w)
		return b
	default:
		return bufio.NewWriterSize(w, copyBufSize)
	}
}

// putWriter gives b back for reuse (what it still buffers is dropped); b must not be used
// after.
func putWriter(b *bufio.Writer) {
	if b == nil {
		return
	}
	b.Reset(nil)
	select {
	case writers <- b:
	default:
	}
}
