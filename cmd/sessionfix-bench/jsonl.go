package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/internal/benchcorpus"
)

// sessionBytes is the average session size: a 512 MiB corpus has about 200 sessions (issue 12).
const sessionBytes = 512 << 20 / 200

// JSONL targets: issue 12's for the realistic corpora (scan CPU at most 2.5× the floor's), issue
// 29's for a dense one (benchcorpus.JSONL.Dense: scan at most 2× cat | wc -l in wall time AND
// CPU); the rest are the same for both.
const (
	jsonlScanTarget     = 2.0
	jsonlCPUTarget      = 2.5
	jsonlDenseCPUTarget = 2.0
	jsonlApplyTarget    = 2.5
	jsonlRSSTarget      = 64 << 20
)

// cpuTarget is the scan row's CPU target for corpus c.
func cpuTarget(c *benchcorpus.JSONL) float64 {
	if c.Dense {
		return jsonlDenseCPUTarget
	}
	return jsonlCPUTarget
}

// generateOnly writes corpus c of sizeMiB into dir from its fixture under the fixtures dir.
func generateOnly(c *benchcorpus.JSONL, dir, fixtures string, sizeMiB int64) error {
	st, err := c.Generate(dir, filepath.Join(fixtures, c.Fixture), sizeMiB<<20, sessionBytes)
	if err != nil {
		return err
	}
	fmt.Printf("corpus %s: %s\n", dir, st.Summary)
	return nil
}

// jsonlRows generates corpus c (a agent/all/allbench entry) of sizeMiB and measures scan
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
		CPURatio: sc.cpuRatio, CPUTarget: cpuTarget(c), Note: note})

	// fix --apply against cp -r && sync, both from the same state: before each timed turn,
	// floor or sessionfix, the last turn's output is removed, a fresh copy of the corpus (cur)
	// is made untimed and everything is synced. sessionfix rewrites cur in place; the floor
	// copies it to floor-out. Each then reads a cached, synced tree and writes the corpus's size
	// in new files. Until stop 19 only sessionfix's turn made the copy: the floor's turn wrote
	// into the memory the removal had just freed, sessionfix's into memory the untimed copy had
	// left, and on a VM that hands free memory back to its host (virtio-balloon free page
	// reporting) each such page is a fresh host fault when written. Measured on the 2-core bench
	// VM, 4 GiB: the same cp -r && sync took 4.3–5.0 s in the floor's place and 23.7–24.0 s
	// (19.5 s of it system time, perf: copy_folio_from_iter_atomic) in sessionfix's; at 1 GiB
	// 1.1–1.55 s in either. (Making the copy BEFORE the removal gives both turns the freed
	// memory, but then the timed run starts while the kernel is still settling 2× the corpus of
	// freed files: sessionfix's fsyncs waited, 1 GiB 2.6–4.3 s against 2.1–2.2 s, while the
	// floor's single sync did not notice — the reason this order is the one kept.) Peak disk:
	// the corpus, its copy and one turn's output (up to twice the corpus: sessionfix's
	// rewritten files and its backups).
	fmt.Fprintf(os.Stderr, "%s %d MiB: fix --apply vs cp -r && sync\n", c.Store, sizeMiB)
	floorOut := filepath.Join(base, "floor-out")
	state := filepath.Join(base, "state")
	var cur string // the copy the next timed turn works on
	turn := 0
	var runBytes, runNames int64 // the run directory of sessionfix's last turn, and its names
	measureRun := func(int) error {
		b, n, err := runDirPerName(state, filepath.Join(base, "fix.out"))
		runBytes, runNames = b, n
		return err
	}
	prep := func(int, bool) error {
		for _, p := range []string{cur, floorOut, state} {
			if p == "" {
				continue
			}
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		}
		turn++
		cur = filepath.Join(base, fmt.Sprintf("copy-%d", turn))
		if _, err := timeCmd(shell(fmt.Sprintf("cp -r %q %q", corpus, cur))...); err != nil {
			return err
		}
		_, err := timeCmd("sync")
		return err
	}
	ap, err := pairs(pairSpec{n: runs, prep: prep, floor: func(int) []string { return shell(fmt.Sprintf("cp -r %q %q && sync", cur, floorOut)) },
		sf: func(int) []string {
			return shell(fmt.Sprintf("exec %q fix --apply --yes --state-dir %q %q > %q", cfg.Bin, state, cur, filepath.Join(base, "fix.out")))
		}, afterSF: measureRun})
	for _, p := range []string{cur, floorOut, state} {
		if p != "" {
			_ = os.RemoveAll(p)
		}
	}
	if err != nil {
		return rows, err
	}
	if runNames > 0 {
		note = join(fmt.Sprintf("run dir %.1f B/name (%d names)", float64(runBytes)/float64(runNames), runNames), note)
	}
	rows = append(rows, Row{Store: c.Store, Size: size, Work: "fix --apply", Time: ap.sf, Floor: "cp -r && sync", FloorTime: ap.floor,
		Ratio: ap.ratio, Target: jsonlApplyTarget, RSS: ap.maxRSS, RSSTarget: jsonlRSSTarget, Exit: ap.exit, Note: note})
	return rows, nil
}

// runDirPerName returns the bytes of the run directories under state (journal, manifest,
// recorded sites: every file but the backups themselves) and the names the run rewrote, read
// from fix's output ("rewrote N names in …").
func runDirPerName(state, fixOut string) (bytes, names int64, err error) {
	err = filepath.WalkDir(filepath.Join(state, "runs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if filepath.Base(filepath.Dir(p)) == "backups" && !strings.HasSuffix(p, ".sites") {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		bytes += fi.Size()
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("measure the run directory: %w", err)
	}
	out, err := os.ReadFile(fixOut)
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(l, "rewrote "); ok {
			fmt.Sscanf(rest, "%d", &names)
		}
	}
	return bytes, names, nil
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
