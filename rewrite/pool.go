package rewrite

import (
	"context"
	"sync"
)

// weights bounds the items ordered holds in memory by what they hold, not only by their count:
// each item weighs something (a store: its name sites) and the items started and not yet
// emitted weigh at most limit together. Item i takes of(i) (an estimate made before it
// starts) before it starts; its work may correct it once it knows (runSlot.Reweigh: a store's
// site count after its scan); it is given back when the item's last result was emitted. An
// item that weighs more than limit counts as limit: it runs once no other item holds any
// weight, alone. A correction never waits (a store found heavier than estimated is over the
// budget until it is emitted: the items after it wait meanwhile), so no started item ever waits
// for weight. The zero value (limit 0) bounds nothing.
type weights struct {
	limit int64
	of    func(i int) int64
}

// ordered is sessionfix's one worker pool (Process and Apply use it; scan has none): it runs
// work for the items 0…n-1, at most workers at once, and calls emit with each item's results
// in item order. work may hand out leading results of its item with part (a store planned
// batch by batch gives several); its return value is the item's last. A run slot is held while
// work runs; a window slot from the start of work until the item's last result was emitted,
// so at most window items are in memory (running, or done and waiting for an earlier item)
// whatever n is, and a long item does not leave the other workers idle while the
// items after it wait to be emitted. With wt, the items in memory also weigh at most wt.limit
// together (see weights; one item heavier than that runs alone): a few large stores do not
// fill the window. When ctx ends, the items not started are given
// cancelled(i) (they hold no slot); an emit error calls cancel, no later result is emitted,
// and the error is returned once every started item has finished.
//
// Items take their window slot, weight and run slot in item order (the goroutine that starts
// them waits for each in turn): the weight an item waits for is held only by earlier items,
// which need nothing later items hold to be emitted, so waiting cannot deadlock.
//
// A part handed out while an earlier result of its item still waits to be emitted (the item's
// scan runs ahead of the items before it: a store planned batch by batch) waits for that result
// to be emitted, unless the weights have room for w, what the part holds (a batch's sites):
// then it is queued (at most partQueue results of an item wait at once) and its work goes on
// without waiting; w is given back once the part was emitted. Without weights a part waits. (A
// dense session of 12,000 sites, planned in two parts, waited in its second part for every
// session before it to be emitted, its rewrite not started, holding BatchSites of weight.)
//
// work may give its run slot back while it waits for the disk (slot.Release: a rewrite's
// fsyncs) and take it again (slot.Acquire), so the next item's scan uses the CPU meanwhile;
// the slot is given back when work returns, and while a part waits for the items before it
// to be emitted (taken again after). The item keeps its window slot and weight: at most window
// items are in memory still, at most workers of them holding a run slot.
// An item's results channel exists from when the starting goroutine reaches the item until
// its last result was emitted: memory for about window items, whatever n is.
//
// window must be at least workers (Process and Apply give 2 × workers, or 4 × workers when
// stores are rewritten: the rewrites waiting for the disk).
func ordered[T any](ctx context.Context, cancel context.CancelFunc, n, workers, window int, wt weights,
	work func(i int, part func(res T, w int64), slot *runSlot) T, cancelled func(i int) T, emit func(T) error) error {
	running := make(chan struct{}, workers)
	windowSlots := make(chan struct{}, max(window, workers))
	var bud *budget
	if wt.limit > 0 {
		bud = &budget{limit: wt.limit, wake: make(chan struct{}, 1)}
	}
	type item struct {
		res  T
		slot *runSlot      // set on the item's last result: its window slot and weight are given back once it is emitted
		more bool          // more results of the same item follow
		w    int64         // weight a queued part took (given back once it is emitted)
		ack  chan struct{} // a part's: closed once it was received (its turn to be emitted came)
	}
	// Each item's results go through its own channel, made when the item is reached (made
	// counts them, guarded by dmu) and dropped once its last result was emitted: at most
	// about window of them exist at once, whatever n is.
	done := make([]chan item, n)
	var dmu sync.Mutex
	made := 0
	dmade := sync.NewCond(&dmu)
	chanOf := func(i int) chan item {
		ch := make(chan item, partQueue)
		dmu.Lock()
		done[i], made = ch, i+1
		dmu.Unlock()
		dmade.Broadcast()
		return ch
	}
	go func() {
		for i := 0; i < n; i++ {
			ch := chanOf(i)
			slot := &runSlot{running: running, held: true, bud: bud}
			acquired := false
			select {
			case windowSlots <- struct{}{}:
				if bud != nil && !bud.take(ctx, slot, func() int64 { return wt.of(i) }) {
					<-windowSlots
					break
				}
				select {
				case running <- struct{}{}:
					acquired = true
				case <-ctx.Done():
					bud.giveBack(slot)
					<-windowSlots
				}
			case <-ctx.Done():
			}
			if !acquired {
				ch <- item{res: cancelled(i)}
				for i++; i < n; i++ {
					chanOf(i) <- item{res: cancelled(i)}
				}
				return
			}
			go func() {
				// A part that must wait for the earlier items to be emitted waits without its
				// run slot: an earlier item may need one to finish (a rewrite taking its slot
				// again after a wait for the disk), else both would wait for ever.
				var prev chan struct{} // the ack of the item's last part handed out
				part := func(res T, w int64) {
					it := item{res: res, more: true, ack: make(chan struct{})}
					// The item's first waiting part may wait; another only with weight to spare.
					waiting := false
					if prev != nil {
						select {
						case <-prev:
						default:
							waiting = true
						}
					}
					queue := !waiting
					if waiting && bud != nil && bud.tryTake(w) {
						queue, it.w = true, w
					}
					if queue {
						select {
						case ch <- it:
							prev = it.ack
							return
						default: // partQueue results wait already
							bud.give(it.w)
							it.w = 0
						}
					}
					held := slot.giveBack()
					<-prev // every earlier result of the item was received: there is room
					ch <- it
					prev = it.ack
					if held {
						slot.Acquire()
					}
				}
				res := work(i, part, slot)
				slot.Release()
				ch <- item{res: res, slot: slot}
			}()
		}
	}()
	var emitErr error
	for i := range n {
		dmu.Lock()
		for made <= i {
			dmade.Wait()
		}
		ch := done[i]
		done[i] = nil
		dmu.Unlock()
		for {
			it := <-ch
			if it.ack != nil {
				close(it.ack)
			}
			if emitErr == nil {
				emitErr = emit(it.res)
				if emitErr != nil {
					cancel()
				}
			}
			if it.w > 0 {
				bud.give(it.w)
			}
			if it.slot != nil {
				bud.giveBack(it.slot)
				<-windowSlots
			}
			if !it.more {
				break
			}
		}
	}
	return emitErr
}

// budget is the weight ordered's items hold (see weights): used of limit. One goroutine
// waits in take (the one starting items, in order); wake tells it weight was given back.
type budget struct {
	mu    sync.Mutex
	limit int64
	used  int64
	wake  chan struct{} // capacity 1
}

// clamp is w as counted: at least 0, at most the whole budget.
func (b *budget) clamp(w int64) int64 { return min(max(w, 0), b.limit) }

// take waits until the item's weight fits (or no item holds any weight) and gives it to slot;
// false when ctx ended first (nothing taken). The weight is of() asked again each time take
// wakes: an estimate gets better as the stores before the item are scanned (storeWeights), so
// a store first guessed heavier than the budget need not wait for the whole run before it.
func (b *budget) take(ctx context.Context, slot *runSlot, of func() int64) bool {
	for {
		if ctx.Err() != nil {
			return false
		}
		w := b.clamp(of())
		b.mu.Lock()
		if b.used == 0 || b.used+w <= b.limit {
			b.used += w
			slot.weight = w
			b.mu.Unlock()
			return true
		}
		b.mu.Unlock()
		select {
		case <-b.wake:
		case <-ctx.Done():
			return false
		}
	}
}

// set makes slot weigh w (clamped), waking take when that gives weight back. It never waits.
func (b *budget) set(slot *runSlot, w int64) {
	w = b.clamp(w)
	b.mu.Lock()
	old := slot.weight
	b.used += w - old
	slot.weight = w
	b.mu.Unlock()
	if w < old {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
}

// partQueue is how many results of one item may wait to be emitted at once (ordered): the
// first is always let wait, the others only with weight to spare.
const partQueue = 4

// tryTake takes w if it fits now (never waits); false when it does not (nothing taken).
func (b *budget) tryTake(w int64) bool {
	w = max(w, 0)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+w > b.limit {
		return false
	}
	b.used += w
	return true
}

// give gives back w that tryTake took, waking take; b may be nil (then w is 0).
func (b *budget) give(w int64) {
	if b == nil || w <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= w
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// giveBack gives slot's weight back; b may be nil (no budget).
func (b *budget) giveBack(slot *runSlot) {
	if b != nil {
		b.set(slot, 0)
	}
}

// runSlot is an item's run slot in ordered (a fileio.CPUSlot): Release gives it back, Acquire
// waits for a free one; each does nothing when the slot is already given back or held. It also
// carries the item's weight (Reweigh).
type runSlot struct {
	mu      sync.Mutex
	running chan struct{}
	held    bool
	bud     *budget // nil: ordered bounds no weight
	weight  int64   // guarded by bud.mu
}

// Reweigh sets the weight the item holds until it is emitted to w (see weights: a store's
// site count once it is scanned); it never waits. It does nothing when ordered bounds no weight.
func (s *runSlot) Reweigh(w int64) {
	if s != nil && s.bud != nil {
		s.bud.set(s, w)
	}
}

// Lighten lowers the weight the item holds until it is emitted to w when w is less (never
// raises it; w below 0 counts as 0), waking an item waiting for weight; it never waits. It does
// nothing when ordered bounds no weight. Safe to call from any goroutine, also once the item's
// weight was given back (it holds 0 then: nothing changes).
func (s *runSlot) Lighten(w int64) {
	if s == nil || s.bud == nil {
		return
	}
	b := s.bud
	w = b.clamp(w)
	b.mu.Lock()
	old := s.weight
	if w >= old {
		b.mu.Unlock()
		return
	}
	b.used += w - old
	s.weight = w
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
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
