// Command sessionfix scans, fixes and audits the MCP tool names stored in AI coding agents'
// session stores (JSONL files and SQLite databases; the agents are the rooms listed in
// agent/all). See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"
)

func main() {
	tuneGC(os.LookupEnv)
	ctx, stop := notifySignals(context.Background())
	code := run(ctx, os.Args, systemEnv())
	stop()
	os.Exit(code)
}

// stopGrace is how long a run has, after the first SIGINT or SIGTERM, to stop at a safe point
// before it exits anyway (a variable for tests).
var stopGrace = 900 * time.Millisecond

// notifySignals returns a context cancelled, with a *signalError cause, by the first SIGINT or
// SIGTERM: the run stops at its next safe point (a store is never left half written), records
// what it did and exits 130 or 143. A run that has not ended stopGrace after the signal — blocked
// where no context reaches: an --inventory FIFO nobody writes, a server that does not answer —
// exits then with the same code, and so does a second signal at once: a crash-safe point too
// (every rewrite is a rename, the journal names it for undo, the next run removes its temp
// files). A cron job's SIGTERM always ends the run within a second (issue 30 finding 5).
func notifySignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	// A reader that goes away (sessionfix fix --apply | head) must not kill the run at an
	// arbitrary instant: with SIGPIPE ignored a write to the closed pipe fails with EPIPE, which
	// the output writers report (exit 1, "could not be written to standard output").
	signal.Ignore(syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		var first syscall.Signal
		select {
		case s := <-sigs:
			first, _ = s.(syscall.Signal)
			// Said before the cancel: the run may end (and exit) right after it.
			fmt.Fprintf(os.Stderr, "\nsessionfix: %s: stopping at the next safe point (again to stop at once)\n", signalName(first))
			cancel(&signalError{sig: first})
		case <-done:
			return
		}
		grace := time.NewTimer(stopGrace)
		defer grace.Stop()
		select {
		case s := <-sigs:
			sig, _ := s.(syscall.Signal)
			os.Exit(128 + int(sig))
		case <-grace.C:
			fmt.Fprintf(os.Stderr, "sessionfix: %s: the run did not stop within %s: exiting now (what it wrote is whole; the next run cleans up after it)\n", signalName(first), stopGrace)
			os.Exit(128 + int(first))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// gcPercent and gcMemoryLimit are the collector's settings unless GOGC or GOMEMLIMIT say
// otherwise (tuneGC).
const (
	gcPercent     = 200
	gcMemoryLimit = 40 << 20
)

// tuneGC sets the collector for a run: GOGC 200 and a soft memory limit of 40 MiB, unless the
// environment (lookup: os.LookupEnv) says otherwise: GOGC set leaves GOGC alone, GOMEMLIMIT set
// leaves both alone (who sets a memory limit asks for memory, not speed: GOGC stays at the
// runtime's 100, or what GOGC says). A scan or fix holds little (a store is read in batches:
// ~13 MB live for a SQLite database of any size, 10-18 MB for a dense JSONL corpus) and
// allocates a lot: at GOGC 100 it collected every few MB (100k-part database, quiet 2 cores:
// scan 0.19 s wall, 0.27 s CPU at GOGC 100, 0.15 s and 0.22 s at 200). The limit counts the
// runtime's memory, not the binary's ~18 MiB of mapped code: peak RSS under 64 MiB (issues 12, 29;
// 256 MiB let the dense fix --apply reach 78-92 MiB, 44 MiB 63-65, 40 MiB 4 MiB less);
// a heap that does grow (a session planned whole) is collected harder, the runtime capping the
// collector at half the CPU past the limit. It returns the values it set (-1: left to the
// environment).
func tuneGC(lookup func(string) (string, bool)) (percent int, limit int64) {
	percent, limit = -1, -1
	_, gogc := lookup("GOGC")
	_, memlimit := lookup("GOMEMLIMIT")
	if !gogc && !memlimit {
		debug.SetGCPercent(gcPercent)
		percent = gcPercent
	}
	if !memlimit {
		debug.SetMemoryLimit(gcMemoryLimit)
		limit = gcMemoryLimit
	}
	return percent, limit
}
