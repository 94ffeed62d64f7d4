package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

type fixOptions struct {
	Paths    []string
	Apply    bool
	Yes      bool
	StateDir string
	Format   string
	Workers  int
	Verbose  bool
	Common   planOptions
}

func newFixCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "fix",
		Usage:     "rewrite legacy MCP tool names (dry-run unless --apply)",
		ArgsUsage: "[PATH...]",
		Description: `Plans the rewrite of every legacy tool name found (same discovery as scan) and prints
the plan: per store, where, which site, old → new and the class. Nothing is written unless
--apply is given; a non-interactive run also needs --yes.

The rewrite is what Qwen Code 0.24.4 sends for a restored history: normalizeMcp of each stored
name. Provider-safe names, including middle-truncated legacy names, stay byte for byte. A call
and its response always end with the same name. Only the bytes of each rewritten name change:
key order, spacing, escapes, line endings, a BOM and a missing final newline are kept.

With --apply each changed file is written to a temp file beside it, fsynced, checked not to have
changed meanwhile (size, mtime, content hash: a file an agent is appending to is skipped and
reported "in use"), renamed over the original with its mode and mtime kept (Qwen Code sorts
sessions by mtime), and its original is copied first into the run's backup directory
(--state-dir, default ${XDG_STATE_HOME:-~/.local/state}/sessionfix/runs/<run-id>/) with
manifest.json. "sessionfix undo" restores a run byte for byte.

EXAMPLES:
   sessionfix fix                                   # dry-run over ~/.qwen
   sessionfix fix --apply --yes ~/.qwen             # rewrite, with backups
   sessionfix fix --keep-truncated --apply --yes ~/.qwen/projects/-home-me-src-app/chats
   sessionfix fix --format json > plan.json`,
		Flags: append(planFlags(),
			&cli.BoolFlag{Name: "apply", Usage: "write the changes (default: dry-run, print the plan)"},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask for confirmation (required with --apply when standard input is not a terminal)"},
			&cli.StringFlag{Name: "state-dir", Usage: "where runs and backups are kept (default: ${XDG_STATE_HOME:-~/.local/state}/sessionfix)", EnvVars: []string{"SESSIONFIX_STATE_DIR"}},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output format: table or json"},
			&cli.IntFlag{Name: "workers", Usage: "parallel readers (default: CPUs, at most 8)"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "also list the names that need nothing (builtin, clean, normalized)"},
		),
		Action: func(c *cli.Context) error {
			opts := fixOptions{
				Paths: c.Args().Slice(), Apply: c.Bool("apply"), Yes: c.Bool("yes"), StateDir: c.String("state-dir"),
				Format: c.String("format"), Workers: c.Int("workers"), Verbose: c.Bool("verbose"), Common: readPlanFlags(c),
			}
			return runFix(c.Context, env, opts)
		},
	}
}

// fixReport is fix --format json.
type fixReport struct {
	Mode     string         `json:"mode"` // "dry-run" or "apply"
	RunID    string         `json:"run_id,omitempty"`
	RunDir   string         `json:"run_dir,omitempty"`
	Summary  string         `json:"summary"`
	Totals   rewrite.Totals `json:"totals"`
	Stores   []fixStore     `json:"stores"`
	Skipped  []skippedRow   `json:"skipped,omitempty"`
	Problems []problemRow   `json:"problems"`
}

type fixStore struct {
	Path      string        `json:"path"`
	Kind      string        `json:"kind"`
	Decisions []decisionRow `json:"decisions"`
}

type decisionRow struct {
	Where  string `json:"where"`
	Site   string `json:"site"`
	Path   string `json:"path"`
	Old    string `json:"old"`
	New    string `json:"new,omitempty"`
	Class  string `json:"class"`
	Action string `json:"action"`
	Source string `json:"source,omitempty"`
	Note   string `json:"note,omitempty"`
}

type skippedRow struct {
	Path   string `json:"path"`
	InUse  bool   `json:"in_use"`
	Reason string `json:"reason"`
}

func runFix(ctx context.Context, env *Env, opts fixOptions) error {
	if opts.Format != "table" && opts.Format != "json" {
		return usageErrorf("--format must be table or json, not %q", opts.Format)
	}
	if opts.Apply && !opts.Yes && !env.InTerminal {
		return usageErrorf("--apply needs --yes when standard input is not a terminal (nothing was changed)")
	}
	if opts.StateDir == "" {
		opts.StateDir = rewrite.DefaultStateDir(env.Getenv, env.Home)
	}
	ps, err := scanAndPlan(ctx, env, opts.Paths, opts.Workers, opts.Apply, opts.Common)
	if err != nil {
		return err
	}
	totals := ps.plan.Totals()
	rep := &fixReport{Mode: "dry-run", Totals: totals, Problems: append(ps.problems(), ps.settings.notes()...)}
	for _, sp := range ps.plan.Stores {
		fs := fixStore{Path: sp.Snap.Ref.Path, Kind: string(sp.Snap.Ref.Kind)}
		for _, d := range sp.Decisions {
			if d.Action == rewrite.ActNone && !opts.Verbose {
				continue
			}
			fs.Decisions = append(fs.Decisions, decisionRow{Where: d.Site.Loc.String(), Site: siteLabel(d.Site), Path: d.Site.Path,
				Old: d.Site.Name, New: d.New, Class: string(d.Class), Action: string(d.Action), Source: d.Source, Note: d.Note})
		}
		if len(fs.Decisions) > 0 {
			rep.Stores = append(rep.Stores, fs)
		}
	}

	if !opts.Apply || totals.Rewrite == 0 {
		if opts.Apply {
			rep.Mode = "apply"
		}
		rep.Summary = ps.summaryLine(false)
		if err := writeFix(env, rep, opts); err != nil {
			return err
		}
		if ps.failed() {
			return withCode(exitPartial)
		}
		return nil
	}

	// --apply: say exactly what will be touched, then confirm.
	rep.Mode = "apply"
	if opts.Format == "table" {
		if err := writeFixPlan(env.Out, rep); err != nil {
			return err
		}
		writeProblems(env.Out, rep.Problems)
	}
	if !opts.Yes {
		fmt.Fprintf(env.Err, "Rewrite %s in %s? Originals are backed up under %s. [y/N] ",
			plural(totals.Rewrite, "name"), plural(totals.RewriteStores, "file"), opts.StateDir)
		if !confirm(env.In) {
			fmt.Fprintln(env.Err, "nothing was changed")
			return nil
		}
	}
	aopt := rewrite.ApplyOptions{StateDir: opts.StateDir, Command: "fix --apply", Roots: ps.roots, Now: env.Now}
	if env.beforeCheck != nil {
		aopt.BeforeCheck = env.beforeCheck
	}
	res, err := rewrite.Apply(ctx, ps.plan, aopt)
	if err != nil {
		return err
	}
	rep.RunID, rep.RunDir = res.RunID, res.Dir
	stores, names := res.Rewritten()
	inUse, failed := 0, 0
	for _, o := range res.Outcomes {
		if o.Err == nil {
			continue
		}
		rep.Skipped = append(rep.Skipped, skippedRow{Path: o.Ref.Path, InUse: o.InUse(), Reason: o.Err.Error()})
		if o.InUse() {
			inUse++
		} else {
			failed++
		}
	}
	rep.Summary = fmt.Sprintf("rewrote %s in %s; %s kept", plural(names, "name"), plural(stores, "file"), plural(totals.KeptTruncated, "legacy truncated name"))
	if len(rep.Skipped) > 0 {
		rep.Summary += fmt.Sprintf("; %s skipped", plural(len(rep.Skipped), "file"))
	}
	if opts.Format == "json" {
		if err := reports.WriteJSON(env.Out, rep); err != nil {
			return err
		}
	} else {
		for _, s := range rep.Skipped {
			label := "failed"
			if s.InUse {
				label = "in use, skipped"
			}
			fmt.Fprintf(env.Out, "%s: %s: %s\n", s.Path, label, s.Reason)
		}
		fmt.Fprintln(env.Out, rep.Summary)
		fmt.Fprintf(env.Out, "run %s; backups and manifest in %s; undo with: sessionfix undo --state-dir %s %s\n",
			res.RunID, res.Dir, shellQuote(opts.StateDir), res.RunID)
		if res.Manifest != nil {
			for _, n := range res.Manifest.ToolNotes {
				fmt.Fprintf(env.Out, "note: %s\n", n)
			}
		}
	}
	switch {
	case inUse > 0:
		return withCode(exitInUse)
	case failed > 0 || ps.failed():
		return withCode(exitPartial)
	}
	return nil
}

func siteLabel(s store.Site) string {
	if s.Field != "" && string(s.Kind) != s.Field {
		return string(s.Kind) + "/" + s.Field
	}
	return string(s.Kind)
}

func writeFix(env *Env, rep *fixReport, opts fixOptions) error {
	if opts.Format == "json" {
		return reports.WriteJSON(env.Out, rep)
	}
	if err := writeFixPlan(env.Out, rep); err != nil {
		return err
	}
	writeProblems(env.Out, rep.Problems)
	fmt.Fprintln(env.Out, rep.Summary)
	if rep.Totals.Rewrite > 0 && !opts.Apply {
		fmt.Fprintln(env.Out, "dry-run: nothing was changed; run with --apply --yes to rewrite")
	}
	return nil
}

// writeFixPlan prints the plan grouped by store.
func writeFixPlan(w io.Writer, rep *fixReport) error {
	for _, fs := range rep.Stores {
		fmt.Fprintf(w, "%s (%s)\n", reports.Printable(fs.Path), fs.Kind)
		t := &reports.Table{Columns: []string{"where", "site", "old", "new", "class"}}
		notes := map[string]bool{}
		var noteOrder []string
		for _, d := range fs.Decisions {
			newName := d.New
			switch d.Action {
			case string(rewrite.ActKeep):
				newName = "(kept)"
			case string(rewrite.ActNone):
				newName = "(unchanged)"
			}
			t.Add(d.Where, d.Site, d.Old, newName, d.Class)
			if d.Note != "" {
				k := d.Old + ": " + d.Note
				if !notes[k] {
					notes[k] = true
					noteOrder = append(noteOrder, k)
				}
			}
		}
		var b strings.Builder
		if err := reports.WriteText(&b, t); err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
		for _, n := range noteOrder {
			fmt.Fprintf(w, "  note: %s\n", reports.Printable(n))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// confirm reads a yes/no answer; anything but y/yes is no.
func confirm(r io.Reader) bool {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
