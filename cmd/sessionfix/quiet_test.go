package main

import (
	"bytes"
	"context"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuietRecorderKeepsOrder: what a quiet run wrote to its two streams comes out in the order
// written when it is released, and later writes go straight through; unreleased, nothing.
func TestQuietRecorderKeepsOrder(t *testing.T) {
	var both bytes.Buffer
	q := &quietRecorder{out: &both, err: &both}
	out, errw := q.writer(false), q.writer(true)
	for _, w := range []struct {
		to interface{ Write([]byte) (int, error) }
		s  string
	}{{out, "plan\n"}, {errw, "problem\n"}, {out, "summary\n"}} {
		_, err := w.to.Write([]byte(w.s))
		require.NoError(t, err)
	}
	assert.Empty(t, both.String(), "nothing before release")
	q.release()
	assert.Equal(t, "plan\nproblem\nsummary\n", both.String())
	_, _ = errw.Write([]byte("late\n"))
	assert.Equal(t, "plan\nproblem\nsummary\nlate\n", both.String())
}

// TestQuietPromptShowsWhatIsAsked: fix -q --apply at a terminal still asks, and the person
// sees the plan and the question before answering (the first read of standard input
// releases the recording); the answer no exits 6.
func TestQuietPromptShowsWhatIsAsked(t *testing.T) {
	dir := fixtureCopy(t)
	e := *testEnv(t)
	e.InTerminal = true
	var out, errb bytes.Buffer
	var seenOut, seenErr string
	e.Out, e.Err = &out, &errb
	e.In = readerFunc(func(b []byte) (int, error) {
		if seenErr == "" {
			seenOut, seenErr = out.String(), errb.String()
		}
		return copy(b, "n\n"), nil
	})
	code := run(context.Background(), []string{"sessionfix", "fix", "-q", "--apply", dir}, &e)
	assert.Equal(t, exitcode.Declined, code, errb.String())
	assert.Contains(t, seenOut, "planned changes:", "the plan was shown before the answer was read")
	assert.Contains(t, seenErr, "[y/N]", "the question was shown before the answer was read")
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(b []byte) (int, error) { return f(b) }
