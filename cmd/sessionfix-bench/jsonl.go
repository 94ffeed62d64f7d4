package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sessionfix/sessionfix/internal/benchcorpus"
)

// sessionBytes is the average session size: a 512 MiB corpus has about 200 sessions (issue 12).
const sessionBytes = 512 << 20 / 200

// JSONL targets (issue 12).
const (
	jsonlScanTarget  = 2.0
	jsonlCPUTarget   = 2.5
	jsonlApplyTarget = 2.5
	jsonlRSSTarget   = 64 << 20
)

// generateOnly writes corpus c of sizeMiB into dir from its fixture under the fixtures dir.
func generateOnly(c *benchcorpus.JSONL, dir, fixtures string, sizeMiB int64) error {
	st, err := c.Generate(dir, filepath.Join(fixtures, c.Fixture), sizeMiB<<20, sessionBytes)
	if err != nil {
		return err
	}
	fmt.Printf("corpus %s: %s\n", dir, st.Summary)
	return nil
}

// jsonlRows generates corpus c (a store/all/allbench entry) of sizeMiB and measures scan
// against cat | wc -l and fix --apply against cp -r && sync.
func jsonlRows(cfg config, c *benchcorpus.JSONL, sizeMiB int64) ([]Row, error) {
	base := filepath.Join(cfg.Dir, fmt.Sprintf("jsonl-%d", sizeMiB))
	defer os.RemoveAll(base)
	corpus := filepath.Join(base, "corpus")
	fmt.Fprintf(os.Stderr, "%s %d MiB: generating in %s …\n", c.Store, sizeMiB, corpus)
	t0 := time.Now()
	st, err := c.Generate(corpus, filepath.Join(cfg.Fixtures, c.Fixture), sizeMiB<<20, sessionBytes)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "  %s (%s)\n", st.Summary, time.Since(t0).Round(time.Millisecond))
	size := mib(sizeMiB << 20)
	runs := cfg.Runs
	var note string
	switch {
	case sizeMiB >= 4096 && runs > 1:
		runs = 1 // the 15-minute budget of make bench
	case sizeMiB >= 1024 && runs > 2:
		runs = 2
	}
	note = pairsNote(runs, cfg.Runs)
	var rows []Row

	// scan: warm the cache with one floor run, then floor and scan in turn.
	catwc := fmt.Sprintf("cat $(find %q -type f -name '*.jsonl') | wc -l", corpus)
	if _, err := timeCmd(shell(catwc)...); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "%s %d MiB: scan vs cat | wc -l\n", c.Store, sizeMiB)
	out := filepath.Join(base, "scan.out")
	sc, err := pair(runs, nil, func(int) []string { return shell(catwc) },
		func(int) []string { return shell(fmt.Sprintf("exec %q scan %q > %q", cfg.Bin, corpus, out)) })
	if err != nil {
		return rows, err
	}
	rows = append(rows, Row{Store: c.Store, Size: size, Work: "scan", Time: sc.sf, Floor: "cat|wc -l", FloorTime: sc.floor,
		Ratio: sc.ratio, Target: jsonlScanTarget, RSS: sc.maxRSS, RSSTarget: jsonlRSSTarget, Exit: sc.exit,
		Note: join(fmt.Sprintf("CPU %.2f× floor CPU (≤ %.1f×)", sc.cpuRatio, jsonlCPUTarget), note)})
	if sc.cpuRatio > jsonlCPUTarget {
		rows[len(rows)-1].Note = join("CPU over target", rows[len(rows)-1].Note)
	}

	// fix --apply: each run gets a fresh copy, made and synced untimed.
	fmt.Fprintf(os.Stderr, "%s %d MiB: fix --apply vs cp -r && sync\n", c.Store, sizeMiB)
	dst := filepath.Join(base, "dst")
	state := filepath.Join(base, "state")
	prep := func(i int, floor bool) error {
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
		if err := os.RemoveAll(state); err != nil {
			return err
		}
		if !floor {
			if _, err := timeCmd(shell(fmt.Sprintf("cp -r %q %q", corpus, dst))...); err != nil {
				return err
			}
		}
		_, err := timeCmd("sync")
		return err
	}
	ap, err := pair(runs, prep, func(int) []string { return shell(fmt.Sprintf("cp -r %q %q && sync", corpus, dst)) },
		func(int) []string {
			return shell(fmt.Sprintf("exec %q fix --apply --yes --state-dir %q %q > %q", cfg.Bin, state, dst, filepath.Join(base, "fix.out")))
		})
	_ = os.RemoveAll(dst)
	if err != nil {
		return rows, err
	}
	rows = append(rows, Row{Store: c.Store, Size: size, Work: "fix --apply", Time: ap.sf, Floor: "cp -r && sync", FloorTime: ap.floor,
		Ratio: ap.ratio, Target: jsonlApplyTarget, RSS: ap.maxRSS, RSSTarget: jsonlRSSTarget, Exit: ap.exit, Note: note})
	return rows, nil
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
