// Command sessionfix scans, fixes and audits the MCP tool names stored in AI coding agents'
// session stores (JSONL files and SQLite databases; the agents are the rooms listed in
// store/all). See README.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

func main() {
	// Millions of name sites in one store are held while it is planned: let the collector
	// work harder before the heap doubles (GOMEMLIMIT, when set, wins).
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(256 << 20)
	}
	ctx, stop := notifySignals(context.Background())
	code := run(ctx, os.Args, systemEnv())
	stop()
	os.Exit(code)
}

// notifySignals returns a context cancelled, with a *signalError cause, by the first SIGINT or
// SIGTERM: the run stops at its next safe point (a store is never left half written), records
// what it did and exits 130 or 143. A second signal exits at once with the same convention
// (a crash-safe point too: every rewrite is a rename, the journal names it for undo), for a
// run blocked where no context reaches (opening a FIFO nobody reads, say).
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
		select {
		case s := <-sigs:
			sig, _ := s.(syscall.Signal)
			os.Exit(128 + int(sig))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}
