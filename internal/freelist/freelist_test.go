package freelist

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGetReusesTheSmallestLargeEnough(t *testing.T) {
	l := List[*int]{Max: 2}
	x := 1
	a := make([]*int, 3, 10)
	a[0] = &x
	b := make([]*int, 0, 100)
	l.Put(a)
	l.Put(b)
	got := l.Get(5)
	assert.Equal(t, 0, len(got))
	assert.Equal(t, 10, cap(got), "the smallest slice large enough")
	assert.Nil(t, got[:1][0], "a kept slice is cleared in full")
	assert.Equal(t, 100, cap(l.Get(50)))
	assert.Equal(t, 200, cap(l.Get(200)), "nothing kept: a new slice")
}

func TestPutKeepsAtMostMaxTheLargest(t *testing.T) {
	l := List[int]{Max: 2}
	l.Put(make([]int, 0, 10))
	l.Put(make([]int, 0, 20))
	l.Put(make([]int, 0, 5))  // smaller than both: dropped
	l.Put(make([]int, 0, 30)) // replaces the 10
	l.Put(nil)
	assert.Equal(t, 30, cap(l.Get(25)))
	assert.Equal(t, 20, cap(l.Get(15)))
	assert.Equal(t, 8, cap(l.Get(8)), "the 10 and the 5 were not kept")

	var zero List[int]
	zero.Put(make([]int, 0, 10))
	assert.Equal(t, 4, cap(zero.Get(4)), "the zero List keeps nothing")
}

// TestPutUsedClearsItsLengthOnly: PutUsed clears what the slice holds (nothing kept alive) and
// leaves the capacity past its length as it is, unread and unwritten (zero by the rule of its
// callers; a sentinel here shows it is not touched); Put clears the whole capacity.
func TestPutUsedClearsItsLengthOnly(t *testing.T) {
	x, y := 1, 2
	l := List[*int]{Max: 2}
	s := make([]*int, 3, 10)
	s[0], s[2] = &x, &x
	s[:5][4] = &y // past len: the rule says zero; a sentinel to see whether it is written
	l.PutUsed(s)
	got := l.Get(10)
	require.Equal(t, 10, cap(got))
	assert.Equal(t, []*int{nil, nil, nil}, got[:3], "the used length is cleared")
	assert.Same(t, &y, got[:5][4], "past the length nothing is written")

	l.Put(got[:3])
	got = l.Get(10)
	assert.Nil(t, got[:5][4], "Put clears the whole capacity")
}
