// Command sessionfix-bench builds a large corpus of session files from the fixture records and
// measures sessionfix against plain tools on the same files (make bench):
//
//	scan          vs  cat FILES | wc -l   (target: within 2×)
//	fix --apply   vs  cp -r               (target: within 4×)
//	peak RSS of both sessionfix runs       (target: under 64 MiB)
//
// Times are wall-clock with a warm page cache (each baseline runs first and warms it).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/sessionfix/sessionfix/internal/benchcorpus"
)

func main() {
	bin := flag.String("bin", "bin/sessionfix", "sessionfix binary to measure")
	sizeMiB := flag.Int64("size-mib", 1024, "corpus size in MiB")
	dir := flag.String("dir", "", "work directory (default: a new temp dir, removed afterwards)")
	fixtures := flag.String("fixtures", "fixtures/qwen-real/dot-qwen", "Qwen Code runtime dir whose session records seed the corpus")
	keep := flag.Bool("keep", false, "keep the work directory")
	flag.Parse()
	if err := run(*bin, *sizeMiB, *dir, *fixtures, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "sessionfix-bench:", err)
		os.Exit(1)
	}
}

type measure struct {
	wall   time.Duration
	maxRSS int64 // bytes
	exit   int
}

func timeCmd(name string, args ...string) (measure, error) {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	start := time.Now()
	err := cmd.Run()
	m := measure{wall: time.Since(start)}
	if cmd.ProcessState != nil {
		m.exit = cmd.ProcessState.ExitCode()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			m.maxRSS = int64(ru.Maxrss) * 1024
		}
	}
	if err != nil && m.exit <= 0 {
		return m, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

func run(bin string, sizeMiB int64, dir, fixtures string, keep bool) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "sessionfix-bench-"); err != nil {
			return err
		}
		if !keep {
			defer os.RemoveAll(dir)
		}
	}
	recs, err := benchcorpus.LoadRecords(fixtures)
	if err != nil {
		return err
	}
	corpus := filepath.Join(dir, "corpus")
	fmt.Printf("generating %d MiB corpus in %s …\n", sizeMiB, corpus)
	t0 := time.Now()
	st, err := benchcorpus.Generate(corpus, recs, benchcorpus.Options{Bytes: sizeMiB << 20, Seed: 1})
	if err != nil {
		return err
	}
	fmt.Printf("corpus: %d files, %.1f MiB, %d records, %d legacy dotted names (%s)\n\n",
		st.Files, float64(st.Bytes)/(1<<20), st.Records, st.Names, time.Since(t0).Round(time.Millisecond))
	mib := float64(st.Bytes) / (1 << 20)
	catwc := fmt.Sprintf("find %q -type f -name '*.jsonl' -print0 | xargs -0 cat | wc -l > /dev/null", corpus)

	// Warm the cache, then measure.
	if _, err := timeCmd("sh", "-c", catwc); err != nil {
		return err
	}
	base, err := timeCmd("sh", "-c", catwc)
	if err != nil {
		return err
	}
	sc, err := timeCmd(bin, "scan", corpus)
	if err != nil {
		return err
	}
	copyDir := filepath.Join(dir, "copy")
	cp, err := timeCmd("cp", "-r", corpus, copyDir)
	if err != nil {
		return err
	}
	// cp -r leaves the data in the page cache; fix --apply fsyncs every file it writes. The
	// same copy followed by sync is the like-for-like baseline.
	_ = os.RemoveAll(copyDir)
	_, _ = timeCmd("sync")
	cpSync, err := timeCmd("sh", "-c", fmt.Sprintf("cp -r %q %q && sync", corpus, copyDir))
	if err != nil {
		return err
	}
	fixDir := filepath.Join(dir, "fix")
	if _, err := timeCmd("cp", "-r", corpus, fixDir); err != nil {
		return err
	}
	_ = os.RemoveAll(copyDir)
	_, _ = timeCmd("sync")
	fx, err := timeCmd(bin, "fix", "--apply", "--yes", "--state-dir", filepath.Join(dir, "state"), fixDir)
	if err != nil {
		return err
	}

	row := func(what string, m measure, ref measure, target float64) {
		ratio := m.wall.Seconds() / ref.wall.Seconds()
		verdict := "ok"
		if target > 0 && ratio > target {
			verdict = "OVER TARGET"
		}
		if m.exit != 0 {
			verdict += fmt.Sprintf(" (exit %d)", m.exit)
		}
		fmt.Printf("%-26s %8.2fs %9.1f MB/s %8.1f MiB RSS   %.2f× baseline (target ≤ %.0f×) %s\n",
			what, m.wall.Seconds(), mib*1.048576/m.wall.Seconds(), float64(m.maxRSS)/(1<<20), ratio, target, verdict)
	}
	fmt.Printf("%-26s %8.2fs %9.1f MB/s\n", "cat FILES | wc -l", base.wall.Seconds(), mib*1.048576/base.wall.Seconds())
	row("sessionfix scan", sc, base, 2)
	fmt.Printf("%-26s %8.2fs %9.1f MB/s\n", "cp -r", cp.wall.Seconds(), mib*1.048576/cp.wall.Seconds())
	fmt.Printf("%-26s %8.2fs %9.1f MB/s\n", "cp -r && sync", cpSync.wall.Seconds(), mib*1.048576/cpSync.wall.Seconds())
	row("sessionfix fix --apply", fx, cp, 4)
	fmt.Printf("%-26s %.2f× cp -r && sync (fix fsyncs every file it writes; cp -r does not)\n", "", fx.wall.Seconds()/cpSync.wall.Seconds())
	peak := max(sc.maxRSS, fx.maxRSS)
	verdict := "ok"
	if peak > 64<<20 {
		verdict = "OVER TARGET"
	}
	fmt.Printf("peak RSS %.1f MiB (target < 64 MiB) %s\n", float64(peak)/(1<<20), verdict)
	return nil
}
