package jsonl_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/agent/qwen/qwenbench"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/store"
)

// scanBothWays scans path with the literal prefilter and without it and requires the same
// snapshot (sites with their offsets, raw tokens and paths; problems; records; fingerprint).
func scanBothWays(t *testing.T, path string, p *jsonl.Profile) *store.Snapshot {
	t.Helper()
	scan := func(off bool) *store.Snapshot {
		jsonl.SetPrefilterOff(off)
		defer jsonl.SetPrefilterOff(false)
		snap, err := jsonl.Open(path, p).Scan(context.Background(), store.ScanOptions{Hash: true})
		require.NoError(t, err)
		return snap
	}
	full, pre := scan(true), scan(false)
	require.Equal(t, full, pre, "%s: prefiltered scan differs from the full scan", path)
	return pre
}

// TestPrefilterSameSitesOnFixtures: every JSON Lines fixture, read with each Lines profile
// that has a prefilter, gives the same snapshot with the prefilter as without.
func TestPrefilterSameSitesOnFixtures(t *testing.T) {
	var files []string
	require.NoError(t, filepath.WalkDir("../../fixtures", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return err
	}))
	require.NotEmpty(t, files)
	sites := 0
	for _, f := range files {
		for _, p := range []*jsonl.Profile{qwen.Session, qwen.Usage} {
			sites += len(scanBothWays(t, f, p).Sites)
		}
	}
	t.Logf("%d fixture files × 2 profiles: %d sites, the same with and without the prefilter and the scanner's shortcuts", len(files), sites)
	assert.Positive(t, sites)
}

// TestPrefilterSameSitesOnCorpus: a generated corpus (fixture records, long text and tool
// outputs) and a session of hand-made records that hide names behind \u escapes, with
// invalid lines and CRLF endings, give the same snapshots both ways.
func TestPrefilterSameSitesOnCorpus(t *testing.T) {
	recs, err := qwenbench.LoadRecords("../../fixtures/qwen-real/dot-qwen")
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = qwenbench.Generate(dir, recs, qwenbench.Options{Bytes: 3 << 20, FileBytes: 1 << 20, Seed: 3})
	require.NoError(t, err)
	sites := 0
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			sites += len(scanBothWays(t, p, qwen.Session).Sites)
		}
		return err
	}))
	t.Logf("generated corpus: %d sites, the same with and without the prefilter and the scanner's shortcuts", sites)
	assert.Positive(t, sites)

	lines := []string{
		`{"type":"user","message":{"role":"user","parts":[{"text":"hi"}]}}`,
		`{"type":"assistant","message":{"role":"model","parts":[{"\u0066unctionCall":{"id":"c1","name":"mcp__a__b.c","args":{}}}]}}`,
		`{"type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"mcp__a__b\u002ec","response":{}}}]}}`,
		`{"type":"system","systemPayload":{"ui\u0045vent":{"function_name":"mcp__t__u.v","mcp_server_name":"t"}}}`,
		`{"broken":`,
		"{\"type\":\"assistant\",\"message\":{\"parts\":[{\"functionCall\":{\"id\":\"c2\",\"name\":\"mcp__x.y__z\"}}]}}\r",
	}
	in := []byte(strings.Join(lines, "\n") + "\n")
	in = append(in, bytes.Repeat([]byte(lines[0]+"\n"), 3000)...)
	p := writeFile(t, t.TempDir(), "0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl", in)
	snap := scanBothWays(t, p, qwen.Session)
	var names []string
	for _, s := range snap.Sites {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"mcp__a__b.c", "mcp__a__b.c", "mcp__t__u.v", "mcp__x.y__z"}, names)
	assert.Len(t, snap.Problems, 1, "the broken line")
}

// TestPrefilterSameSitesOnBenchCorpus: with SESSIONFIX_BENCH_CORPUS set (a directory
// `sessionfix-bench -generate DIR -size-mib N` wrote), every session file of that corpus gives
// the same snapshot with the prefilter and the scanner's shortcuts as without them (opt-in: a
// 256 MiB corpus takes a minute of careful scanning).
func TestPrefilterSameSitesOnBenchCorpus(t *testing.T) {
	dir := os.Getenv("SESSIONFIX_BENCH_CORPUS")
	if dir == "" {
		t.Skip("SESSIONFIX_BENCH_CORPUS is not set: no generated corpus to compare on")
	}
	files, sites, records := 0, 0, int64(0)
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			snap := scanBothWays(t, p, qwen.Session)
			files, sites, records = files+1, sites+len(snap.Sites), records+snap.Records
		}
		return err
	}))
	t.Logf("%s: %d files, %d records, %d sites, the same with and without the prefilter and the scanner's shortcuts", dir, files, records, sites)
	assert.Positive(t, sites)
}

// TestGrowSites: the Sites slice is sized from the density of the bytes scanned so far, only
// when it would not hold the estimate.
func TestGrowSites(t *testing.T) {
	snap := &store.Snapshot{Sites: make([]store.Site, 10)}
	jsonl.GrowSites(snap, 1<<20, 10<<20, false)
	assert.Equal(t, 10, len(snap.Sites))
	assert.GreaterOrEqual(t, cap(snap.Sites), 125, "10 sites in 1 MiB of 10 MiB: 100, a quarter more")
	assert.Less(t, cap(snap.Sites), 150)
	c := cap(snap.Sites)
	snap.Sites = snap.Sites[:20]
	jsonl.GrowSites(snap, 2<<20, 10<<20, false)
	assert.Equal(t, c, cap(snap.Sites), "20 sites in 2 MiB: the estimate (100) fits")
	snap.Sites = snap.Sites[:60]
	jsonl.GrowSites(snap, 3<<20, 10<<20, false)
	assert.GreaterOrEqual(t, cap(snap.Sites), 250, "60 sites in 3 MiB: 200, a quarter more")
	empty := &store.Snapshot{}
	jsonl.GrowSites(empty, 1<<20, 10<<20, false)
	assert.Equal(t, 0, cap(empty.Sites), "no site yet: no guess")
	whole := &store.Snapshot{Sites: make([]store.Site, 3)}
	jsonl.GrowSites(whole, 100, 100, false)
	assert.Equal(t, 3, cap(whole.Sites), "the whole file was scanned")
}
