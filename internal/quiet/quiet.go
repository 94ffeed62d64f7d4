// Package quiet is the recording behind every command's -q/--quiet (issue 23 item 11): what a
// run writes to standard output and standard error is kept in the order written, then
// dropped when the run succeeds, or written out (Release) when it fails or asks a question.
package quiet

import (
	"io"
	"sync"
)

// New records what is written to out and err until Release.
func New(out, err io.Writer) *Recorder { return &Recorder{out: out, err: err} }

// Recorder holds what a quiet run wrote, stream by stream in order, until Release writes
// it out (and lets later writes through) or it is dropped. New makes one.
type Recorder struct {
	mu       sync.Mutex
	out, err io.Writer
	chunks   []chunk
	released bool
}

type chunk struct {
	toErr bool
	b     []byte
}

// Out is the writer of standard output during the recording.
func (q *Recorder) Out() io.Writer { return &writer{q: q} }

// Err is the writer of standard error during the recording.
func (q *Recorder) Err() io.Writer { return &writer{q: q, toErr: true} }

// Release writes out what was recorded, in order, and makes later writes go straight through.
func (q *Recorder) Release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.released {
		return
	}
	q.released = true
	for _, c := range q.chunks {
		w := q.out
		if c.toErr {
			flushWriter(q.out) // what stdout holds first, as flushOut does before stderr
			w = q.err
		}
		_, _ = w.Write(c.b)
	}
	q.chunks = nil
}

type writer struct {
	q     *Recorder
	toErr bool
}

func (w *writer) Write(b []byte) (int, error) {
	q := w.q
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.released {
		if w.toErr {
			flushWriter(q.out)
			return q.err.Write(b)
		}
		return q.out.Write(b)
	}
	if n := len(q.chunks); n > 0 && q.chunks[n-1].toErr == w.toErr {
		q.chunks[n-1].b = append(q.chunks[n-1].b, b...)
	} else {
		q.chunks = append(q.chunks, chunk{toErr: w.toErr, b: append([]byte(nil), b...)})
	}
	return len(b), nil
}

// Flush flushes standard output once released (flushOut before a prompt); a recording needs
// none.
func (w *writer) Flush() error {
	w.q.mu.Lock()
	defer w.q.mu.Unlock()
	if w.q.released {
		flushWriter(w.q.out)
	}
	return nil
}

func flushWriter(w io.Writer) {
	if f, ok := w.(interface{ Flush() error }); ok {
		_ = f.Flush()
	}
}

// Input is standard input r at a terminal during a quiet run: the first read (a question is
// being asked) releases what q recorded, so the person sees what is asked.
func (q *Recorder) Input(r io.Reader) io.Reader { return &releaseOnRead{r: r, q: q} }

type releaseOnRead struct {
	r io.Reader
	q *Recorder
}

func (r *releaseOnRead) Read(b []byte) (int, error) {
	r.q.Release()
	return r.r.Read(b)
}
