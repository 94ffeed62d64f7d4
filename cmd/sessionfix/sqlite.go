package main

import (
	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/engine/sqlite"
)

// busyTimeoutFlag is --busy-timeout of scan, fix and undo.
func busyTimeoutFlag() cli.Flag {
	return &cli.DurationFlag{Name: "busy-timeout", Value: sqlite.DefaultBusyTimeout,
		Usage: "how long to wait for a SQLite store's lock held by a running agent before refusing the store as in use (exit 4)"}
}

// profileFlag is --profile of scan and fix.
func profileFlag() cli.Flag {
	return fileFlag("profile", "JSON profile of a SQLite store (tables, key and JSON columns, name paths; docs/sqlite-stores.md), tried before the built-in ones")
}
