package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
)

type scanOptions struct {
	Paths   []string
	Format  string
	Workers int
	Common  planOptions
}

func newScanCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "scan",
		Usage:     "find legacy MCP tool names in session stores (read-only)",
		ArgsUsage: "[PATH...]",
		Description: `Walks the given paths (default: Qwen Code's runtime directory, $QWEN_RUNTIME_DIR, else
$QWEN_HOME, else ~/.qwen) in parallel and reports every tool name found in session files,
usage records and checkpoints: counts per class and per store, and the old → new map a fix
would apply. A PATH may be a runtime directory, a project's chats/ directory or one file.
Settings files (PATH/settings.json, PATH/.qwen/settings.json, or a PATH named settings.json)
are read too: their rules written in legacy spellings are listed with file:line:col; settings
are never rewritten ("sessionfix audit" says what each rule matches now). Never writes anything.

EXAMPLES:
   sessionfix scan
   sessionfix scan ~/.qwen/projects/-home-me-src-app/chats
   sessionfix scan --format json ~/.qwen > scan.json`,
		Flags: append(planFlags(),
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output format: table or json"},
			&cli.IntFlag{Name: "workers", Usage: "parallel readers (default: CPUs, at most 8)"},
		),
		Action: func(c *cli.Context) error {
			opts := scanOptions{Paths: c.Args().Slice(), Format: c.String("format"), Workers: c.Int("workers"), Common: readPlanFlags(c)}
			return runScan(c.Context, env, opts)
		},
	}
}

func runScan(ctx context.Context, env *Env, opts scanOptions) error {
	if opts.Format != "table" && opts.Format != "json" {
		return usageErrorf("--format must be table or json, not %q", opts.Format)
	}
	start := time.Now()
	ps, err := scanAndPlan(ctx, env, opts.Paths, opts.Workers, false, opts.Common)
	if err != nil {
		return err
	}
	rep := ps.report(time.Since(start))
	if opts.Format == "json" {
		if err := reports.WriteJSON(env.Out, rep); err != nil {
			return err
		}
	} else if err := writeScanText(env, ps, rep); err != nil {
		return err
	}
	if ps.failed() {
		return withCode(exitPartial)
	}
	return nil
}

func writeScanText(env *Env, ps *planned, rep *scanReport) error {
	w := env.Out
	fmt.Fprintf(w, "scanned %d stores (%s, %d records, %d name sites) in %s\n",
		rep.Totals.Stores, humanBytes(rep.Bytes), rep.Records, rep.Totals.Sites, rep.Elapsed)
	if rep.Ignored > 0 {
		fmt.Fprintf(w, "%d other files are not stores and were not read\n", rep.Ignored)
	}
	fmt.Fprintln(w)
	if err := reports.WriteText(w, classTable(rep)); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := reports.WriteText(w, storeTable(rep)); err != nil {
		return err
	}
	if len(rep.Renames) > 0 || len(rep.Kept) > 0 {
		fmt.Fprintln(w)
		if err := reports.WriteText(w, renameTable(rep)); err != nil {
			return err
		}
	}
	if len(rep.SettingsRules) > 0 {
		fmt.Fprintf(w, "\nsettings rules in legacy spellings (reported, never rewritten; see sessionfix audit):\n")
		if err := reports.WriteText(w, settingsTable(rep.SettingsRules)); err != nil {
			return err
		}
	}
	writeProblems(w, rep.Problems)
	fmt.Fprintln(w)
	fmt.Fprintln(w, ps.summaryLine(false))
	return nil
}

// plannedTotalsLine is shared wording between scan and fix.
func (ps *planned) summaryLine(applied bool) string {
	t := ps.plan.Totals()
	if t.Rewrite == 0 {
		s := fmt.Sprintf("nothing to change: no name needs rewriting in %d stores", t.Stores)
		if t.KeptTruncated > 0 {
			s += fmt.Sprintf("; %s kept", plural(t.KeptTruncated, "legacy truncated name"))
		}
		return s
	}
	verb := "would rewrite"
	if applied {
		verb = "rewrote"
	}
	return fmt.Sprintf("%s %s in %s; %s kept", verb, plural(t.Rewrite, "name"), plural(t.RewriteStores, "file"),
		plural(t.KeptTruncated, "legacy truncated name"))
}

var _ = rewrite.ActRewrite
