package fileio

import (
	"runtime"
	"sync/atomic"
)

// YieldEvery is how many bytes a long CPU phase reads at least between two calls of Yield: a
// rewrite's copy pass (RewriteFile) reads 256 KiB at a time (a few tenths of a millisecond of
// CPU) and yields after each read; a scan (engine/jsonl) reads 1 MiB at a time, and yields
// after each.
const YieldEvery = 256 << 10

// Yield lets the goroutines that wait for a processor run before the caller goes on (a
// runtime.Gosched). A long CPU phase that reads a file (a store's scan, a rewrite's copy pass)
// calls it after each read once YieldEvery bytes were read since the last call.
//
// Why: a goroutine blocked in a system call keeps its processor (P) until the runtime's
// monitor takes it for another goroutine, and then finds none free when the call returns: it
// waits in the run queue until a running goroutine blocks, ends, or is preempted after 10 ms.
// A rewrite's commit is a chain of such calls (the temp file's fsync, the journal's, the
// rename, the directory's fsync) that each came back while GOMAXPROCS goroutines were
// scanning and copying the next stores (none of which blocks: their reads and writes are
// served by the page cache), so each step waited up to a scan's length for a P, and the store,
// its sites held in the pool's window until it is emitted, kept the next stores from starting.
func Yield() {
	if h := yieldHook.Load(); h != nil {
		(*h)()
		return
	}
	runtime.Gosched()
}

var yieldHook atomic.Pointer[func()]

// SetYieldHook makes Yield call h instead of runtime.Gosched (nil: Gosched again) and returns a
// function restoring the previous hook. For tests only (they count the calls).
func SetYieldHook(h func()) (restore func()) {
	var p *func()
	if h != nil {
		p = &h
	}
	old := yieldHook.Swap(p)
	return func() { yieldHook.Store(old) }
}

// yielder counts bytes read and calls Yield after a read once YieldEvery of them were read
// since the last call.
type yielder struct{ n int }

func (y *yielder) read(n int) {
	if y.n += n; y.n >= YieldEvery {
		y.n = 0
		Yield()
	}
}
