package rewrite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// Process (the one worker pool) emits every store in the order given, whatever order the
// workers finish in; a store that cannot be read is a result with ScanErr, never fatal; the
// progress callback sees every byte read (moved from scan.Run's test when that pool went).
func TestProcessOrdersAndRecordsFailures(t *testing.T) {
	dir := t.TempDir()
	var stores []store.Store
	for _, n := range []string{"a", "b", "c"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, n), 0o755))
		p := writeSession(t, filepath.Join(dir, n), "s.jsonl", call("1", "mcp__a.b__c"))
		stores = append(stores, jsonl.Open(p, qwen.Session))
	}
	size, err := os.Stat(stores[0].Ref().Path)
	require.NoError(t, err)
	require.NoError(t, os.Remove(stores[1].Ref().Path)) // vanishes after discovery
	var seen int64
	var got []*StoreResult
	var rewrites []int // each result's, counted during emit (its plan is valid only then)
	_, err = Process(context.Background(), stores, naming.Policy{}, ProcessOptions{ApplyOptions: ApplyOptions{Workers: 2}, Progress: func(n int64) { seen += n }},
		func(r *StoreResult) error {
			got = append(got, r)
			n := -1
			if r.Plan != nil {
				n = r.Plan.Count(naming.ActRewrite)
			}
			rewrites = append(rewrites, n)
			return nil
		})
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, r := range got {
		assert.Equal(t, stores[i].Ref().Path, r.Store.Ref().Path, "emitted in order")
	}
	assert.NoError(t, got[0].ScanErr)
	assert.ErrorIs(t, got[1].ScanErr, os.ErrNotExist)
	assert.Equal(t, []int{1, -1, 1}, rewrites)
	assert.Equal(t, 2*size.Size(), seen)
}

// slowStore is a store whose Scan takes a second of a synctest bubble's clock and counts the
// stores between their scan and their emit (in, at most maxIn).
type slowStore struct {
	store.Store
	mu        *sync.Mutex
	in, maxIn *int
}

func (s slowStore) Scan(ctx context.Context, opt store.ScanOptions) (*store.Snapshot, error) {
	s.mu.Lock()
	*s.in++
	*s.maxIn = max(*s.maxIn, *s.in)
	s.mu.Unlock()
	time.Sleep(time.Second)
	return s.Store.Scan(ctx, opt)
}

// Process bounds the stores in memory by their sites (WindowSites), not only by their count:
// with a budget of 1 site, sessions of a few hundred bytes (estimated at 1 site or more before
// their scan) are processed one at a time, where 2 workers scan 2 at once without the bound
// (2 to 4 in memory: Process's own bound, 2 × Workers; the third and fourth stores' scans may
// both start before the first is emitted — the scheduler decides, so 4 is seen about 1 run in
// 100 under load, and the old bound of 3 made the test flaky).
func TestProcessWindowBoundsSites(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 4 {
		lines := make([]string, 8)
		for k := range lines {
			lines[k] = call(fmt.Sprint(k), "mcp__a.b__c")
		}
		paths = append(paths, writeSession(t, dir, fmt.Sprintf("s%d.jsonl", i), lines...))
	}
	for _, tc := range []struct {
		sites         int64
		maxIn, maxIn2 int
	}{{1, 1, 1}, {1 << 40, 2, 4}} {
		synctest.Test(t, func(t *testing.T) {
			defer func(v int64) { WindowSites = v }(WindowSites)
			WindowSites = tc.sites
			var mu sync.Mutex
			var in, maxIn int
			var stores []store.Store
			for _, p := range paths {
				stores = append(stores, slowStore{jsonl.Open(p, qwen.Session), &mu, &in, &maxIn})
			}
			var got int
			_, err := Process(context.Background(), stores, naming.Policy{}, ProcessOptions{ApplyOptions: ApplyOptions{Workers: 2}},
				func(r *StoreResult) error {
					require.NoError(t, r.ScanErr)
					assert.Equal(t, 8, r.Plan.Count(naming.ActRewrite))
					got++
					mu.Lock()
					in--
					mu.Unlock()
					return nil
				})
			require.NoError(t, err)
			assert.Equal(t, 4, got)
			assert.GreaterOrEqual(t, maxIn, tc.maxIn, "stores in memory at once with WindowSites %d", tc.sites)
			assert.LessOrEqual(t, maxIn, tc.maxIn2, "stores in memory at once with WindowSites %d", tc.sites)
		})
	}
}

// slowBatchStore is a store.BatchScanner (a Qwen session: jsonl, Batched) whose scan takes a
// second of a synctest bubble's clock and counts the stores between their scan and their
// emit (in, at most maxIn).
type slowBatchStore struct {
	*jsonl.Store
	mu        *sync.Mutex
	in, maxIn *int
}

func (s slowBatchStore) ScanBatches(ctx context.Context, opt store.ScanOptions, fn func(*store.Snapshot, []store.Site) error) (*store.Snapshot, error) {
	s.mu.Lock()
	*s.in++
	*s.maxIn = max(*s.maxIn, *s.in)
	s.mu.Unlock()
	time.Sleep(time.Second)
	return s.Store.ScanBatches(ctx, opt, fn)
}

// A store.BatchScanner whose sites came in one batch weighs its sites once read, and every
// store read counts into the density the next ones are estimated with: sessions of 1 MiB
// holding 8 names each (4096 sites at the prior density, over a budget of 1,000: one at a
// time) are held two or more at once once the first was read. Before, a BatchScanner
// weighed its estimate at the prior density until emitted, and the stores went one by one.
func TestProcessWeighsBatchedStoresBySites(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	pad := `{"message":{"parts":[{"text":"` + strings.Repeat("x", 1<<20) + `"}]}}`
	for i := range 4 {
		lines := []string{pad}
		for k := range 8 {
			lines = append(lines, call(fmt.Sprint(k), "mcp__a.b__c"))
		}
		paths = append(paths, writeSession(t, dir, fmt.Sprintf("s%d.jsonl", i), lines...))
	}
	synctest.Test(t, func(t *testing.T) {
		defer func(v int64) { WindowSites = v }(WindowSites)
		WindowSites = 1000
		var mu sync.Mutex
		var in, maxIn int
		var stores []store.Store
		for _, p := range paths {
			st := jsonl.Open(p, qwen.Session)
			_, ok := store.Batches(st)
			require.True(t, ok, "a Qwen session is read in batches")
			stores = append(stores, slowBatchStore{st, &mu, &in, &maxIn})
		}
		var got int
		_, err := Process(context.Background(), stores, naming.Policy{}, ProcessOptions{ApplyOptions: ApplyOptions{Workers: 2}},
			func(r *StoreResult) error {
				require.NoError(t, r.ScanErr)
				assert.Nil(t, r.Batch, "one batch: one result")
				assert.Equal(t, 8, r.Plan.Count(naming.ActRewrite))
				got++
				mu.Lock()
				in--
				mu.Unlock()
				return nil
			})
		require.NoError(t, err)
		assert.Equal(t, 4, got)
		assert.GreaterOrEqual(t, maxIn, 2, "stores in memory at once")
	})
}

// storeWeights estimates a store before its scan from its size and the density of the stores
// scanned before (starting at one site per 256 bytes), and weighs it by its sites after; a
// store.BatchScanner's estimate stops at BatchSites; a store that cannot be stat'ed weighs 0.
func TestStoreWeights(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, make([]byte, 1<<20), 0o600))
	var w storeWeights
	st := jsonl.Open(p, qwen.Session)
	assert.Equal(t, int64(4096), w.estimate(st), "1 MiB at the prior density")
	assert.Equal(t, int64(10), w.scanned(&store.Snapshot{State: store.FileState{Size: 3 << 20}}, 10))
	// (1024 + 10) sites per (256 KiB + 3 MiB): 1 MiB is 318 of them.
	assert.Equal(t, int64(318), w.estimate(st))
	assert.Equal(t, int64(0), w.estimate(jsonl.Open(filepath.Join(dir, "gone.jsonl"), qwen.Session)))
	defer func(v int) { BatchSites = v }(BatchSites)
	BatchSites = 100
	assert.Equal(t, int64(100), w.estimate(batchStore{st}))
}

// batchStore is a store.BatchScanner (its batches are never asked for here).
type batchStore struct{ store.Store }

func (batchStore) ScanBatches(context.Context, store.ScanOptions, func(*store.Snapshot, []store.Site) error) (*store.Snapshot, error) {
	return nil, nil
}

// slowApplyStore is a Qwen session (a store.BatchScanner and store.SpliceWriter) whose
// rewrite takes a second of a synctest bubble's clock before it starts, then says when it
// ended (applied).
type slowApplyStore struct {
	*jsonl.Store
	applied *time.Time
}

func (s slowApplyStore) ApplyBatches(ctx context.Context, snap *store.Snapshot, next func() ([]store.Edit, error), opt store.ApplyOptions) (*store.Change, error) {
	time.Sleep(time.Second)
	ch, err := s.Store.ApplyBatches(ctx, snap, next, opt)
	*s.applied = time.Now()
	return ch, err
}

// startStore is a Qwen session that says when its scan started (started).
type startStore struct {
	*jsonl.Store
	started *time.Time
}

func (s startStore) ScanBatches(ctx context.Context, opt store.ScanOptions, fn func(*store.Snapshot, []store.Site) error) (*store.Snapshot, error) {
	*s.started = time.Now()
	return s.Store.ScanBatches(ctx, opt, fn)
}

// A store.SpliceWriter planned in parts weighs, once read to its end, only the sites of its
// parts not yet emitted: its rewrite (from the spool) and its fsyncs hold no weight, and the
// next store's scan starts meanwhile. The first session (8 names, more than BatchSites 4, and
// 64 KiB of text: estimated over the whole budget of 4 sites) is rewritten for a second; the
// second session (4 KiB: estimated at 4 sites too) starts its scan before that rewrite ended. Before, the first held BatchSites
// until its last result was emitted, after its rewrite: the second waited for it.
func TestProcessLightensBatchedStoreAfterItsScan(t *testing.T) {
	dir := t.TempDir()
	lines := []string{`{"message":{"parts":[{"text":"` + strings.Repeat("x", 64<<10) + `"}]}}`}
	for k := range 8 {
		lines = append(lines, call(fmt.Sprint(k), "mcp__a.b__c"))
	}
	first := writeSession(t, dir, "s0.jsonl", lines...)
	second := writeSession(t, dir, "s1.jsonl", `{"message":{"parts":[{"text":"`+strings.Repeat("x", 4<<10)+`"}]}}`, call("1", "mcp__a.b__c"))
	synctest.Test(t, func(t *testing.T) {
		defer func(w int64, b int) { WindowSites, BatchSites = w, b }(WindowSites, BatchSites)
		WindowSites, BatchSites = 4, 4
		var applied, started time.Time
		a := slowApplyStore{jsonl.Open(first, qwen.Session), &applied}
		_, ok := store.Batches(a)
		require.True(t, ok, "a Qwen session is read in batches")
		_, ok = store.Store(a).(store.SpliceWriter)
		require.True(t, ok)
		var results []*StoreResult
		var rewrote []int
		_, err := Process(context.Background(), []store.Store{a, startStore{jsonl.Open(second, qwen.Session), &started}}, naming.Policy{},
			ProcessOptions{Apply: true, ApplyOptions: ApplyOptions{Workers: 2, StateDir: filepath.Join(dir, "state")}},
			func(r *StoreResult) error {
				require.NoError(t, r.ScanErr)
				results = append(results, r)
				rewrote = append(rewrote, r.Plan.Count(naming.ActRewrite))
				return nil
			})
		require.NoError(t, err)
		require.Len(t, results, 3, "the first session's part and last result, then the second")
		assert.Equal(t, []int{8, 0, 1}, rewrote)
		require.NotNil(t, results[1].Outcome)
		require.NoError(t, results[1].Outcome.Err)
		assert.Equal(t, 8, results[1].Outcome.Edits)
		require.False(t, applied.IsZero())
		assert.True(t, started.Before(applied), "the second session's scan started at %v, the first's rewrite ended at %v", started, applied)
	})
}
