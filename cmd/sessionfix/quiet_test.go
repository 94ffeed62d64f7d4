package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/sessionfix/sessionfix/internal/exitcode"

	"github.com/stretchr/testify/assert"
)

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
