package main

import (
	"github.com/sessionfix/sessionfix/internal/usage"
	"io"
	"sync"

	"github.com/urfave/cli/v2"
)

// quietUsage is -q/--quiet's usage on every command (fix adds what it leaves out besides).
const quietUsage = "print nothing when the run succeeds (exit 0), so cron mails nothing when all is clean; " +
	"otherwise print what the run printed, problems first in order (files named by --out and the like are still written)"

// quietFlag is the -q/--quiet flag every command has (issue 23 item 11).
func quietFlag(usage string) cli.Flag {
	return &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: usage}
}

// withQuiet gives command c -q/--quiet (unless it declares its own) and runs its action
// through quietAction.
func withQuiet(env *Env, c *cli.Command) {
	if findFlag(c.Flags, "quiet") == nil {
		c.Flags = append(c.Flags, quietFlag(quietUsage))
	}
	c.Action = quietAction(env, c.Action)
}

// quietAction runs act; with --quiet, what it writes to env.Out and env.Err is recorded in the
// order written and dropped when it returns no error (exit 0), or written out when it fails
// (any other exit status: a finding, a problem, a refusal), before the error itself. A prompt
// ends the quiet: when the run reads standard input at a terminal (a [y/N] question), what
// was recorded is written out first and the rest of the run goes straight through. --quiet
// with --verbose is a usage error.
func quietAction(env *Env, act cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if !c.Bool("quiet") {
			return act(c)
		}
		if err := usage.QuietVerbose(true, findFlag(c.Command.Flags, "verbose") != nil && c.Bool("verbose")); err != nil {
			return err
		}
		q := &quietRecorder{out: env.Out, err: env.Err}
		in, out, errw := env.In, env.Out, env.Err
		env.Out, env.Err = q.writer(false), q.writer(true)
		if env.InTerminal && in != nil {
			env.In = &releaseOnRead{r: in, release: q.release}
		}
		err := act(c)
		env.In, env.Out, env.Err = in, out, errw
		if err != nil {
			q.release()
		}
		return err
	}
}

// quietRecorder holds what a quiet run wrote, stream by stream in order, until release writes
// it out (and lets later writes through) or it is dropped.
type quietRecorder struct {
	mu       sync.Mutex
	out, err io.Writer
	chunks   []quietChunk
	released bool
}

type quietChunk struct {
	toErr bool
	b     []byte
}

func (q *quietRecorder) writer(toErr bool) io.Writer { return &quietWriter{q: q, toErr: toErr} }

// release writes out what was recorded, in order, and makes later writes go straight through.
func (q *quietRecorder) release() {
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

type quietWriter struct {
	q     *quietRecorder
	toErr bool
}

func (w *quietWriter) Write(b []byte) (int, error) {
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
		q.chunks = append(q.chunks, quietChunk{toErr: w.toErr, b: append([]byte(nil), b...)})
	}
	return len(b), nil
}

// Flush flushes standard output once released (flushOut before a prompt); a recording needs
// none.
func (w *quietWriter) Flush() error {
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

// releaseOnRead is standard input at a terminal during a quiet run: the first read (a
// question is being asked) releases what was recorded, so the person sees what is asked.
type releaseOnRead struct {
	r       io.Reader
	release func()
}

func (r *releaseOnRead) Read(b []byte) (int, error) {
	r.release()
	return r.r.Read(b)
}
