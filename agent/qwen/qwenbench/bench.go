package qwenbench

import (
	"fmt"

	"github.com/sessionfix/sessionfix/internal/benchcorpus"
)

// Corpus is the Qwen Code session corpus of make bench (listed in agent/all/allbench): the
// records of Fixture repeated by Generate (seed 1), labelled Store.
var Corpus = &benchcorpus.JSONL{
	Name:     "qwen",
	Store:    Store,
	Fixture:  Fixture,
	Generate: generator(false),
}

// DenseCorpus is the dense Qwen Code corpus of make bench (issue 29): only the fixture's
// records that carry names (Options.Dense), 512 MiB in 200 sessions.
var DenseCorpus = &benchcorpus.JSONL{
	Name:     "qwen-dense",
	Store:    Store + " dense",
	Fixture:  Fixture,
	SizesMiB: []int64{512},
	Dense:    true,
	Generate: generator(true),
}

func generator(dense bool) func(dir, fixture string, bytes, fileBytes int64) (benchcorpus.Stats, error) {
	return func(dir, fixture string, bytes, fileBytes int64) (benchcorpus.Stats, error) {
		recs, err := LoadRecords(fixture)
		if err != nil {
			return benchcorpus.Stats{}, err
		}
		st, err := Generate(dir, recs, Options{Bytes: bytes, FileBytes: fileBytes, Seed: 1, Dense: dense})
		return benchcorpus.Stats{Bytes: st.Bytes, Summary: fmt.Sprintf("%d files, %.1f MiB, %d records, %d legacy dotted names",
			st.Files, float64(st.Bytes)/(1<<20), st.Records, st.Names)}, err
	}
}
