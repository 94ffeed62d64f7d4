package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Row is one line of the table.
type Row struct {
	Store     string        // engine and agent, from the corpus generator
	Size      string        // "256 MiB", "100k parts"
	Work      string        // "scan", "fix --apply"
	Time      time.Duration // sessionfix wall time (median of the pairs)
	Floor     string        // "cat|wc -l", "cp -r && sync", "sqlite3 SELECT", "sqlite3 UPDATE"
	FloorTime time.Duration // floor wall time (median)
	Ratio     float64       // median of the per-pair ratios sessionfix/floor
	Target    float64       // largest ratio that meets the target
	RSS       int64         // peak RSS of the sessionfix runs, bytes
	RSSTarget int64         // RSS must stay below this, bytes
	Exit      int           // a sessionfix exit status other than 0 (the row is then not met)
	// CPURatio is the median of the per-pair ratios of CPU time (user + system) sessionfix/floor;
	// with CPUTarget > 0 it is checked (the verdict's "CPU") and shown with its target before Note.
	CPURatio  float64
	CPUTarget float64
	Note      string // shown after the verdict, e.g. "1 pair"
}

// Met reports the verdict: "met", or "not met (ratio, RSS, exit N)".
func (r Row) Met() string {
	var why []string
	if r.Target > 0 && r.Ratio > r.Target {
		why = append(why, "ratio")
	}
	if r.CPUTarget > 0 && r.CPURatio > r.CPUTarget {
		why = append(why, "CPU")
	}
	if r.RSSTarget > 0 && r.RSS >= r.RSSTarget {
		why = append(why, "RSS")
	}
	if r.Exit != 0 {
		why = append(why, fmt.Sprintf("exit %d", r.Exit))
	}
	if len(why) == 0 {
		return "met"
	}
	return "not met (" + strings.Join(why, ", ") + ")"
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// printTable writes the rows as one markdown table.
func printTable(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| store | size | work | sessionfix | floor | floor time | ratio | target | peak RSS | RSS target | met |")
	fmt.Fprintln(w, "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, r := range rows {
		met := r.Met()
		if r.CPUTarget > 0 {
			met += fmt.Sprintf("; CPU %.2f× floor CPU (target ≤ %.1f×)", r.CPURatio, r.CPUTarget)
		}
		if r.Note != "" {
			met += "; " + r.Note
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %.2f× | ≤ %.1f× | %s | < %s | %s |\n",
			r.Store, r.Size, r.Work, secs(r.Time), strings.ReplaceAll(r.Floor, "|", `\|`), secs(r.FloorTime),
			r.Ratio, r.Target, mib(r.RSS), mib(r.RSSTarget), met)
	}
}
