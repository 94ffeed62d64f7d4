package rewrite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOrderedLongItemDoesNotIdleWorkers: with 2 workers, while item 0 runs, items 1 and 2 both
// run to the end (item 1's finished result waits to be emitted without holding a worker), and
// no more than 2 × workers items are started before item 0 is emitted. Results stay in order.
func TestOrderedLongItemDoesNotIdleWorkers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	item2Done := make(chan struct{})
	var started atomic.Int32
	var startedBeforeFirstEmit int32 = -1
	var got []int
	err := ordered(ctx, cancel, 8, 2, 4, weights{},
		func(i int, _ func(int, int64), _ *runSlot) int {
			started.Add(1)
			switch i {
			case 0:
				select {
				case <-item2Done:
				case <-time.After(20 * time.Second): // a deadlock guard, not a timing assertion
					t.Error("item 2 never ran while item 0 was running: a worker sat idle")
				}
			case 2:
				close(item2Done)
			}
			return i
		},
		func(i int) int { return -1 },
		func(i int) error {
			if startedBeforeFirstEmit < 0 {
				startedBeforeFirstEmit = started.Load()
			}
			got = append(got, i)
			return nil
		})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, got)
	assert.LessOrEqual(t, startedBeforeFirstEmit, int32(4), "at most 2 × workers items in memory")
}

// An item that gives its run slot back (a rewrite waiting for the disk) lets the next item
// start while it still runs: with one worker, item 0 waits for item 1 after its release.
func TestOrderedReleaseLetsTheNextItemRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	item1Started := make(chan struct{})
	var got []int
	err := ordered(ctx, cancel, 3, 1, 2, weights{},
		func(i int, _ func(int, int64), slot *runSlot) int {
			switch i {
			case 0:
				slot.Release()
				slot.Release() // idempotent
				select {
				case <-item1Started:
				case <-time.After(20 * time.Second): // a deadlock guard, not a timing assertion
					t.Error("item 1 did not start while the released item 0 waited")
				}
				slot.Acquire() // item 1 has given its slot back (or item 2 holds it)
				slot.Acquire() // idempotent
			case 1:
				close(item1Started)
			}
			return i
		},
		func(i int) int { return -1 },
		func(i int) error { got = append(got, i); return nil })
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2}, got)
}

// An item that gave its run slot back while it waited for the disk can take one again when the
// items holding every slot are blocked handing out parts (a store planned batch by batch whose
// second part waits for the earlier items to be emitted): the blocked hand-out gives its slot
// back. (fix --apply --workers 1 hung with a JSONL session rewritten before a SQLite store of
// more than BatchSites sites: item 0 waited for the slot, item 1 for item 0's emit.)
func TestOrderedPartBlockedDoesNotHoldTheSlot(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	item1Started := make(chan struct{})
	var got []int
	finished := make(chan error, 1)
	go func() {
		finished <- ordered(ctx, cancel, 2, 1, 4, weights{},
			func(i int, part func(int, int64), slot *runSlot) int {
				switch i {
				case 0:
					slot.Release() // the temp's announcement is fsynced
					<-item1Started // item 1 holds the only run slot
					slot.Acquire() // the copy
					return 0
				default:
					close(item1Started)
					part(10, 0) // buffered
					part(11, 0) // waits for item 0's emit (no weights: a part never queues)
					return 12
				}
			},
			func(i int) int { return -1 },
			func(i int) error { got = append(got, i); return nil })
	}()
	select {
	case err := <-finished:
		require.NoError(t, err)
	case <-time.After(20 * time.Second): // a deadlock guard, not a timing assertion
		t.Fatal("deadlock: item 0 waits for the run slot item 1 holds while item 1 waits for item 0's emit")
	}
	assert.Equal(t, []int{0, 10, 11, 12}, got)
}

// poolLog records, in a synctest bubble, what ordered's items do: how many are in memory
// (started and not yet emitted) at most, and the order of starts and emits (start
// sleeps i ms of the bubble's clock first).
type poolLog struct {
	mu     sync.Mutex
	in     int
	maxIn  int
	events []string
}

func (l *poolLog) start(i int) {
	time.Sleep(time.Duration(i) * time.Millisecond) // items started together log in item order
	l.mu.Lock()
	defer l.mu.Unlock()
	l.in++
	l.maxIn = max(l.maxIn, l.in)
	l.events = append(l.events, fmt.Sprintf("start %d", i))
}

func (l *poolLog) emit(i int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.in--
	l.events = append(l.events, fmt.Sprintf("emit %d", i))
	return nil
}

// With weights, the items in memory weigh at most the limit together: 8 items of weight 4
// under a limit of 10 are at most 2 in memory, though 4 workers and a window of 8 would let 4
// run at once (each sleeps a second of the bubble's clock, so all admitted run together).
// Without weights, 4 are. Results stay in item order.
func TestOrderedWeightBoundsItemsInMemory(t *testing.T) {
	for _, tc := range []struct {
		wt    weights
		maxIn int
	}{
		{weights{limit: 10, of: func(int) int64 { return 4 }}, 2},
		{weights{}, 4},
	} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var l poolLog
			var got []int
			err := ordered(ctx, cancel, 8, 4, 8, tc.wt,
				func(i int, _ func(int, int64), _ *runSlot) int {
					l.start(i)
					time.Sleep(time.Second)
					return i
				},
				func(i int) int { return -1 },
				func(i int) error { got = append(got, i); return l.emit(i) })
			require.NoError(t, err)
			assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, got)
			assert.Equal(t, tc.maxIn, l.maxIn, "items in memory at once, limit %d", tc.wt.limit)
		})
	}
}

// An item heavier than the whole limit still runs, alone: it starts once the items before it
// are emitted, and the next starts once it is emitted.
func TestOrderedOverBudgetItemRunsAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := []int64{3, 3, 50, 3, 3}
		var l poolLog
		err := ordered(ctx, cancel, len(w), 2, 8, weights{limit: 10, of: func(i int) int64 { return w[i] }},
			func(i int, _ func(int, int64), _ *runSlot) int {
				l.start(i)
				time.Sleep(time.Second)
				return i
			},
			func(i int) int { return -1 },
			l.emit)
		require.NoError(t, err)
		assert.Equal(t, []string{"start 0", "start 1", "emit 0", "emit 1", "start 2", "emit 2", "start 3", "start 4", "emit 3", "emit 4"}, l.events)
	})
}

// Reweigh corrects an item's estimate once it knows its weight (a store's sites after its
// scan): an item estimated at the whole limit that turns out light lets the next start while
// it still runs (item 0 waits for item 1 to start: a deadlock, reported by synctest, if it
// could not); one estimated light that turns out heavy keeps the items after it waiting until
// it is emitted, without waiting itself.
func TestOrderedReweigh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		item1Started := make(chan struct{})
		var l poolLog
		err := ordered(ctx, cancel, 4, 2, 8, weights{limit: 10, of: func(i int) int64 { return []int64{10, 1, 1, 1}[i] }},
			func(i int, _ func(int, int64), slot *runSlot) int {
				l.start(i)
				switch i {
				case 0:
					slot.Reweigh(2)
					<-item1Started
				case 1:
					close(item1Started)
					slot.Reweigh(40) // over the limit: counts as 10; never waits
				}
				time.Sleep(time.Second)
				return i
			},
			func(i int) int { return -1 },
			l.emit)
		require.NoError(t, err)
		assert.Equal(t, []string{"start 0", "start 1", "emit 0", "emit 1", "start 2", "start 3", "emit 2", "emit 3"}, l.events)
	})
}

// When ctx ends while the next item waits for weight, it and the items after it are given
// cancelled: the item holding the weight cancels, and item 1 (which would fit once item 0 is
// emitted) never runs.
func TestOrderedCancelWhileWaitingForWeight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var got []int
		err := ordered(ctx, cancel, 3, 2, 8, weights{limit: 5, of: func(i int) int64 { return []int64{9, 1, 1}[i] }},
			func(i int, _ func(int, int64), _ *runSlot) int {
				time.Sleep(time.Second) // the next item is waiting for weight
				cancel()
				return i
			},
			func(i int) int { return -1 },
			func(i int) error { got = append(got, i); return nil })
		require.NoError(t, err)
		assert.Equal(t, []int{0, -1, -1}, got)
	})
}

// The deadlocks ordered avoids stay avoided with weights: a rewrite giving its run slot back
// for the disk and taking it again while the only other slot's holder waits to hand out a
// part, and a long first item while the later ones wait for its weight; synctest reports a
// deadlock as a failure.
func TestOrderedWeightsNoDeadlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		item1Started := make(chan struct{})
		var got []int
		err := ordered(ctx, cancel, 4, 1, 4, weights{limit: 10, of: func(i int) int64 { return []int64{4, 4, 4, 20}[i] }},
			func(i int, part func(int, int64), slot *runSlot) int {
				switch i {
				case 0:
					slot.Release() // the temp's announcement is fsynced
					<-item1Started // item 1 holds the only run slot
					slot.Acquire() // the copy
					time.Sleep(time.Hour)
				case 1:
					close(item1Started)
					part(10, 0) // buffered
					part(11, 3) // waits for item 0's emit: 4 + 4 + 3 is more than the limit
					return 12
				}
				return i
			},
			func(i int) int { return -1 },
			func(i int) error { got = append(got, i); return nil })
		require.NoError(t, err)
		assert.Equal(t, []int{0, 10, 11, 12, 2, 3}, got)
	})
}

// A part handed out while an earlier part of its item still waits to be emitted is queued
// when the weights have room for it (its work goes on: a store planned in parts is rewritten
// while the stores before it finish), and waits when they have not; what a queued part took is
// given back once it is emitted. Here item 0 waits for item 1 to end: before, item 1 waited in
// its second part for item 0's emit, a deadlock (synctest reports it).
func TestOrderedPartQueuedWithWeightToSpare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		item1Done := make(chan struct{})
		var got []int
		var started []int
		var mu sync.Mutex
		err := ordered(ctx, cancel, 4, 2, 8, weights{limit: 10, of: func(i int) int64 { return []int64{2, 2, 7, 1}[i] }},
			func(i int, part func(int, int64), slot *runSlot) int {
				mu.Lock()
				started = append(started, i)
				mu.Unlock()
				switch i {
				case 0:
					slot.Release() // waiting for the disk
					<-item1Done
				case 1:
					part(10, 3) // the first waits without weight
					part(11, 3) // 2 + 2 + 3: queued
					part(12, 3) // 2 + 2 + 3 + 3: queued, the weights are full
					close(item1Done)
					return 13
				}
				return i
			},
			func(i int) int { return -1 },
			func(i int) error {
				if i == 0 {
					mu.Lock()
					assert.ElementsMatch(t, []int{0, 1}, started, "item 2 (7) waits while the queued parts hold the weight")
					mu.Unlock()
				}
				got = append(got, i)
				return nil
			})
		require.NoError(t, err)
		assert.Equal(t, []int{0, 10, 11, 12, 13, 2, 3}, got)
	})
}

// An emit error while the next item waits for weight ends the run: the error is returned, the
// waiting item and those after it are never started (cancelled, not emitted), and nothing
// hangs (synctest reports a deadlock). A weight corrected below zero counts as 0 (it gives
// the whole estimate back: the next item, which needs all of the limit, starts while the
// first still runs); no items with weights returns at once.
func TestOrderedWeightsEmitErrorNegativeReweighNoItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var started, got []int
		var mu sync.Mutex
		boom := errors.New("stdout closed")
		err := ordered(ctx, cancel, 4, 2, 8, weights{limit: 10, of: func(i int) int64 { return []int64{8, 8, 1, 1}[i] }},
			func(i int, _ func(int, int64), _ *runSlot) int {
				mu.Lock()
				started = append(started, i)
				mu.Unlock()
				time.Sleep(time.Second)
				return i
			},
			func(i int) int { return -1 },
			func(i int) error { got = append(got, i); return boom })
		require.ErrorIs(t, err, boom)
		assert.Equal(t, []int{0}, started, "item 1 waited for item 0's weight and never started")
		assert.Equal(t, []int{0}, got, "nothing is emitted after the error")
	})
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		item1Started := make(chan struct{})
		var got []int
		err := ordered(ctx, cancel, 2, 2, 8, weights{limit: 10, of: func(i int) int64 { return 10 }},
			func(i int, _ func(int, int64), slot *runSlot) int {
				if i == 0 {
					slot.Reweigh(-5)
					<-item1Started // a deadlock if item 0 still held weight
				} else {
					close(item1Started)
				}
				return i
			},
			func(i int) int { return -1 },
			func(i int) error { got = append(got, i); return nil })
		require.NoError(t, err)
		assert.Equal(t, []int{0, 1}, got)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := ordered(ctx, cancel, 0, 2, 4, weights{limit: 10, of: func(int) int64 { panic("no item to weigh") }},
		func(i int, _ func(int, int64), _ *runSlot) int { panic("no item to run") },
		func(i int) int { panic("no item to cancel") },
		func(int) error { panic("nothing to emit") })
	assert.NoError(t, err)
}

// An item's weight is asked again whenever it waits and weight is given back: item 1, first
// estimated over the budget (20 of 10), is estimated lighter (3) once item 0 corrected its own
// weight (what storeWeights does when a scan shows the stores sparser than the prior): it starts
// beside item 0, not after item 0 is emitted.
func TestOrderedWeightAskedAgainWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var mu sync.Mutex
		est := []int64{8, 20}
		of := func(i int) int64 { mu.Lock(); defer mu.Unlock(); return est[i] }
		var l poolLog
		err := ordered(ctx, cancel, 2, 2, 4, weights{limit: 10, of: of},
			func(i int, _ func(int, int64), slot *runSlot) int {
				l.start(i)
				if i == 0 {
					time.Sleep(time.Second) // its scan
					mu.Lock()
					est[1] = 3
					mu.Unlock()
					slot.Reweigh(5) // found lighter than estimated: weight given back
				}
				time.Sleep(time.Second)
				return i
			},
			func(i int) int { return -1 },
			l.emit)
		require.NoError(t, err)
		assert.Equal(t, []string{"start 0", "start 1", "emit 0", "emit 1"}, l.events)
	})
}

// ordered holds the results channel of an item only from when the item is reached until its
// last result was emitted, not one for every item for the whole run: halfway through 100,000
// items the heap holds a few channels, not 100,000 (each with room for partQueue results:
// ~29 MB live before; a home or fleet run can have that many stores).
func TestOrderedChannelsLiveOnlyWhileInFlight(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 100_000
	var live uint64
	err := ordered(ctx, cancel, n, 2, 8, weights{},
		func(i int, _ func(int, int64), _ *runSlot) int { return i },
		func(i int) int { return -1 },
		func(i int) error {
			if i == n/2 {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				live = ms.HeapAlloc
			}
			return nil
		})
	require.NoError(t, err)
	assert.Less(t, live, uint64(8<<20), "heap in use halfway through %d items", n)
	t.Logf("heap in use halfway: %d bytes", live)
}
