package rewrite

import (
	"context"
	"sync/atomic"
	"testing"
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
	err := ordered(ctx, cancel, 8, 2, 4,
		func(i int, _ func(int), _ *runSlot) int {
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
	err := ordered(ctx, cancel, 3, 1, 2,
		func(i int, _ func(int), slot *runSlot) int {
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
		finished <- ordered(ctx, cancel, 2, 1, 4,
			func(i int, part func(int), slot *runSlot) int {
				switch i {
				case 0:
					slot.Release() // the temp's announcement is fsynced
					<-item1Started // item 1 holds the only run slot
					slot.Acquire() // the copy
					return 0
				default:
					close(item1Started)
					part(10) // buffered
					part(11) // waits for item 0's emit
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
