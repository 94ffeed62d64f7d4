package rewrite

import (
	"os"
	"runtime"
	"strings"
	"sync"
)

// spareProcs is how many processors (GOMAXPROCS) a rewriting Process or Apply adds to the
// runtime's while it runs (raiseProcs).
const spareProcs = 2

// procs counts the rewriting runs in progress (raiseProcs), what GOMAXPROCS was before the
// first and what the raise set it to.
var procs struct {
	mu     sync.Mutex
	users  int
	before int
	raised int // 0: not raised
}

// setDefaultProcs gives GOMAXPROCS back to the runtime's default (a variable for tests).
var setDefaultProcs = runtime.SetDefaultGOMAXPROCS

// raiseProcs raises GOMAXPROCS by spareProcs until restore is called (concurrent callers share
// one raise, given back after the last), unless the environment sets GOMAXPROCS (the user's
// choice stands).
//
// The raise is given back as the runtime's default (runtime.SetDefaultGOMAXPROCS), not as the
// number read before it: setting GOMAXPROCS to a number, even the one it was, turns off the
// runtime's automatic updates of it (a changed CPU affinity mask or cgroup CPU limit, since Go
// 1.25) for the rest of the process. Nothing else in sessionfix sets GOMAXPROCS, so what the
// raise found was the default; where GODEBUG turns the updates off (updatemaxprocs=0) the number
// read before is set back. A GOMAXPROCS someone else set while it was raised (it is no longer
// what the raise set) is left as they set it.
//
// Why: a goroutine blocked in a system call keeps its processor (P) until the runtime's
// monitor takes it for a runnable goroutine, 20 µs to 10 ms later. A rewrite's commit is a
// chain of fsyncs (the temp file's, the backups directory's, the journal's, the store
// directory's): with as many Ps as CPUs, a P held in one left a CPU idle while the next
// store's scan, or the pool's goroutine starting it, waited for a P. With one P more the
// scans and copies (Workers of them) keep the CPUs busy while commits wait for the disk.
// Make bench's dense 512 MiB fix --apply on disk, quiet, alternated: median wall 1.43 s
// without, 1.35 s with (CPU 1.81 and 1.91 s, peak RSS unchanged). Two more rather than one:
// a trace of the quiet dense apply still had ~1 goroutine runnable on average while ~1.3 of
// the 2 CPUs ran Go code (the commits' fsyncs of several stores hold Ps at once); 4 Ps on 2
// CPUs against 3, quiet, alternated: wall faster in 13 of 16 pairs (paired medians 0.983 and
// 0.977), CPU unchanged (1.78 s).
func raiseProcs() (restore func()) {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	procs.users++
	if procs.users == 1 {
		procs.raised = 0
		if _, set := os.LookupEnv("GOMAXPROCS"); !set {
			procs.before = runtime.GOMAXPROCS(0)
			procs.raised = procs.before + spareProcs
			runtime.GOMAXPROCS(procs.raised)
		}
	}
	return func() {
		procs.mu.Lock()
		defer procs.mu.Unlock()
		if procs.users--; procs.users != 0 || procs.raised == 0 || runtime.GOMAXPROCS(0) != procs.raised {
			return
		}
		if updatesOff(os.Getenv("GODEBUG")) {
			runtime.GOMAXPROCS(procs.before)
			return
		}
		setDefaultProcs()
	}
}

// updatesOff reports whether the GODEBUG value godebug turns off the runtime's automatic
// GOMAXPROCS updates (its last updatemaxprocs setting is 0).
func updatesOff(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(kv), "updatemaxprocs="); ok {
			off = v == "0"
		}
	}
	return off
}
