package opencodebench

import (
	"context"
	"fmt"

	"github.com/sessionfix/sessionfix/internal/benchcorpus"
)

// Corpus is the opencode database of make bench (listed in agent/all/allbench): Generate's
// database, labelled "SQLite (opencode)"; the scan floor reads part.data and event.data, the
// columns fix rewrites (the tool parts and their message.part.updated events).
var Corpus = &benchcorpus.SQLite{
	Name:    "opencode",
	Store:   "SQLite (opencode)",
	Fixture: "opencode-real/opencode.sql",
	File:    "opencode.db",
	// The generator's name before it moved into the opencode room: a database an earlier run
	// kept under BENCH_DIR has the same rows and is reused.
	Version: "sqlitebench 1",
	Generate: func(ctx context.Context, path string, parts int) (benchcorpus.Stats, error) {
		st, err := Generate(ctx, path, parts)
		return benchcorpus.Stats{Bytes: st.Bytes, Summary: fmt.Sprintf("%d parts, %d events, %d legacy name sites, %.1f MiB",
			st.Parts, st.Events, st.Legacy, float64(st.Bytes)/(1<<20))}, err
	},
	FloorScan: "SELECT sum(length(data)) FROM part; SELECT sum(length(data)) FROM event;",
	Rewritten: []benchcorpus.Column{{Table: "part", Column: "data"}, {Table: "event", Column: "data"}},
}
