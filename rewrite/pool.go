package rewrite

import (
	"context"
	"sync"
)

// ordered is sessionfix's one worker pool (Process and Apply use it; scan has none): it runs
// work for the items 0…n-1, at most workers at once, and calls emit with each item's results
// in item order. work may hand out leading results of its item with part (a store planned
// batch by batch gives several); its return value is the item's last. A run slot is held while
// work runs; a window slot from the start of work until the item's last result was emitted,
// so at most window items are in memory (running, or done and waiting for an earlier item)
// whatever n is, and a long item does not leave the other workers idle while the
// items after it wait to be emitted. When ctx ends, the items not started are given
// cancelled(i) (they hold no slot); an emit error calls cancel, no later result is emitted,
// and the error is returned once every started item has finished.
//
// work may give its run slot back while it waits for the disk (slot.Release: a rewrite's
// fsyncs) and take it again (slot.Acquire), so the next item's scan uses the CPU meanwhile;
// the slot is given back when work returns, and while a part waits for the items before it
// to be emitted (taken again after). The item keeps its window slot: at most window
// items are in memory still, at most workers of them holding a run slot.
// window must be at least workers (Process and Apply give 2 × workers, or 4 × workers when
// stores are rewritten: the rewrites waiting for the disk).
func ordered[T any](ctx context.Context, cancel context.CancelFunc, n, workers, window int,
	work func(i int, part func(T), slot *runSlot) T, cancelled func(i int) T, emit func(T) error) error {
	running := make(chan struct{}, workers)
	windowSlots := make(chan struct{}, max(window, workers))
	type item struct {
		res  T
		slot bool // the item holds a window slot, released once it is emitted
		more bool // more results of the same item follow
	}
	done := make([]chan item, n) // per item, in order
	for i := range done {
		done[i] = make(chan item, 1)
	}
	go func() {
		for i := 0; i < n; i++ {
			acquired := false
			select {
			case windowSlots <- struct{}{}:
				select {
				case running <- struct{}{}:
					acquired = true
				case <-ctx.Done():
					<-windowSlots
				}
			case <-ctx.Done():
			}
			if !acquired {
				for ; i < n; i++ {
					done[i] <- item{res: cancelled(i)}
				}
				return
			}
			go func() {
				slot := &runSlot{running: running, held: true}
				// A part that must wait for the earlier items to be emitted waits without its
				// run slot: an earlier item may need one to finish (a rewrite taking its slot
				// again after a wait for the disk), else both would wait for ever.
				part := func(res T) {
					it := item{res: res, more: true}
					select {
					case done[i] <- it:
						return
					default:
					}
					held := slot.giveBack()
					done[i] <- it
					if held {
						slot.Acquire()
					}
				}
				res := work(i, part, slot)
				slot.Release()
				done[i] <- item{res: res, slot: true}
			}()
		}
	}()
	var emitErr error
	for i := range n {
		for {
			it := <-done[i]
			if emitErr == nil {
				emitErr = emit(it.res)
				if emitErr != nil {
					cancel()
				}
			}
			if it.slot {
				<-windowSlots
			}
			if !it.more {
				break
			}
		}
	}
	return emitErr
}

// runSlot is an item's run slot in ordered (a fileio.CPUSlot): Release gives it back, Acquire
// waits for a free one; each does nothing when the slot is already given back or held.
type runSlot struct {
	mu      sync.Mutex
	running chan struct{}
	held    bool
}

// Release gives the slot back.
func (s *runSlot) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		<-s.running
		s.held = false
	}
}

// giveBack is Release, reporting whether the slot was held.
func (s *runSlot) giveBack() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held {
		return false
	}
	<-s.running
	s.held = false
	return true
}

// Acquire takes a run slot again, waiting for one.
func (s *runSlot) Acquire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held {
		s.running <- struct{}{}
		s.held = true
	}
}
