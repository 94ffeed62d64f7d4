// Package allbench is the list of benchmark corpora, beside the agent list (agent/all): the
// corpus of each agent whose room has a bench generator, per storage engine, in the order make
// bench measures them (cmd/sessionfix-bench). An entry (internal/benchcorpus) says the store
// label of the table, the fixture the generator builds from, the generator and, for SQLite, the
// floor query and the rewritten columns. Adding an agent's corpus is one bench package in its
// room and one line here (docs/adding-an-agent.md); the bench tool names no agent.
// Only cmd/sessionfix-bench uses it: no product package uses bench code.
package allbench

import (
	"fmt"

	"github.com/sessionfix/sessionfix/agent/opencode/opencodebench"
	"github.com/sessionfix/sessionfix/agent/qwen/qwenbench"
	"github.com/sessionfix/sessionfix/internal/benchcorpus"
)

// JSONL are the JSONL corpora (engine/jsonl), measured in this order.
var JSONL = []*benchcorpus.JSONL{
	qwenbench.Corpus,
	qwenbench.DenseCorpus,
}

// SQLite are the SQLite databases (engine/sqlite), measured in this order.
var SQLite = []*benchcorpus.SQLite{
	opencodebench.Corpus,
}

// JSONLNamed is the JSONL corpus called name; "" is the first. An unknown name's error lists
// the known ones.
func JSONLNamed(name string) (*benchcorpus.JSONL, error) {
	return named(JSONL, name, func(c *benchcorpus.JSONL) string { return c.Name })
}

// SQLiteNamed is the SQLite corpus called name; "" is the first.
func SQLiteNamed(name string) (*benchcorpus.SQLite, error) {
	return named(SQLite, name, func(c *benchcorpus.SQLite) string { return c.Name })
}

func named[C any](list []C, name string, nameOf func(C) string) (C, error) {
	var zero C
	var known []string
	for _, c := range list {
		if name == "" || nameOf(c) == name {
			return c, nil
		}
		known = append(known, nameOf(c))
	}
	return zero, fmt.Errorf("no corpus %q (known: %v)", name, known)
}
