// Command sessionfix scans, fixes and audits the MCP tool names stored in AI coding agents'
// session stores (Qwen Code JSONL sessions, usage records, checkpoints; other agents' stores as
// their backends land). See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, systemEnv())
	stop()
	os.Exit(code)
}
