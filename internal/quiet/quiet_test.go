package quiet

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuietRecorderKeepsOrder: what a quiet run wrote to its two streams comes out in the order
// written when it is released, and later writes go straight through; unreleased, nothing.
func TestQuietRecorderKeepsOrder(t *testing.T) {
	var both bytes.Buffer
	q := New(&both, &both)
	out, errw := q.Out(), q.Err()
	for _, w := range []struct {
		to interface{ Write([]byte) (int, error) }
		s  string
	}{{out, "plan\n"}, {errw, "problem\n"}, {out, "summary\n"}} {
		_, err := w.to.Write([]byte(w.s))
		require.NoError(t, err)
	}
	assert.Empty(t, both.String(), "nothing before release")
	q.Release()
	assert.Equal(t, "plan\nproblem\nsummary\n", both.String())
	_, _ = errw.Write([]byte("late\n"))
	assert.Equal(t, "plan\nproblem\nsummary\nlate\n", both.String())
}
