package freelist

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
