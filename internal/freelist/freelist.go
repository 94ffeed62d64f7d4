// Package freelist keeps a few large slices for reuse: a scan hands a slice back once nothing
// refers to it any more, and the next store's scan or plan starts from it instead of
// allocating its own (issue 29: on make bench's dense corpus these slices were most of the
// bytes a scan allocated, and the collections they caused a fifth of its CPU).
package freelist

import "sync"

// List is a free list of at most Max slices of T, safe for concurrent use. Every slice in it
// is zero in full (cleared by Put), so it keeps nothing of an earlier store alive. The zero
// List keeps nothing; what it keeps is live heap, which the collector lets grow to a multiple
// of itself: keep Max small.
type List[T any] struct {
	mu   sync.Mutex
	list [][]T
	Max  int
}

// Get returns an empty slice with room for at least n elements: the smallest kept slice that
// is large enough (taken out of the list), else a new one of capacity n.
func (l *List[T]) Get(n int) []T {
	l.mu.Lock()
	best := -1
	for i, s := range l.list {
		if cap(s) >= n && (best < 0 || cap(s) < cap(l.list[best])) {
			best = i
		}
	}
	if best >= 0 {
		s := l.list[best]
		last := len(l.list) - 1
		l.list[best] = l.list[last]
		l.list[last] = nil
		l.list = l.list[:last]
		l.mu.Unlock()
		return s[:0]
	}
	l.mu.Unlock()
	return make([]T, 0, n)
}

// Put clears s in full and keeps it: in a free place, else instead of the smallest kept slice
// when s is larger; a slice of capacity 0 is dropped. The caller must not use s afterwards.
func (l *List[T]) Put(s []T) {
	clear(s[:cap(s)])
	l.keep(s)
}

// PutUsed is Put for a slice whose elements past len(s) are zero: it came from Get (or make)
// and was filled by appending or by writing below its length, and whatever its holder cut off
// the end was cleared then. It clears s[:len(s)] only: the capacity a slice was given to grow
// into and never used (a quarter more than a store's likely sites) is not written, so its
// pages are neither cleared twice nor touched at all. Elements past len(s) left non-zero by a
// caller that breaks the rule would only keep what they point to alive while the slice is kept.
func (l *List[T]) PutUsed(s []T) {
	clear(s)
	l.keep(s)
}

// keep keeps the cleared slice s (Put).
func (l *List[T]) keep(s []T) {
	if cap(s) == 0 {
		return
	}
	s = s[:0]
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.list) < l.Max {
		l.list = append(l.list, s)
		return
	}
	if len(l.list) == 0 {
		return
	}
	small := 0
	for i, f := range l.list {
		if cap(f) < cap(l.list[small]) {
			small = i
		}
	}
	if cap(s) > cap(l.list[small]) {
		l.list[small] = s
	}
}
