// Command sessionfix scans, fixes and audits the MCP tool names stored in AI coding agents'
// session stores (Qwen Code JSONL sessions, usage records, checkpoints; other agents' stores as
// their backends land). See README.md.
package main

import (
	"context"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, systemEnv())
	stop()
	os.Exit(code)
}
