package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/runlog"
)

type runsOptions struct {
	StateDir string
	Format   string
}

func newRunsCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "runs",
		Usage: "list fix runs (for undo)",
		Description: `Lists the runs kept in the state directory, oldest first: id, time, state (applied,
partial, undone, …), files and names rewritten.

EXAMPLES:
   sessionfix runs
   sessionfix runs --format json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "state-dir", Usage: "where runs are kept (default: ${XDG_STATE_HOME:-~/.local/state}/sessionfix)", EnvVars: []string{"SESSIONFIX_STATE_DIR"}},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output format: table or json"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("runs takes no arguments")
			}
			return runRuns(c.Context, env, runsOptions{StateDir: c.String("state-dir"), Format: c.String("format")})
		},
	}
}

func runRuns(_ context.Context, env *Env, opts runsOptions) error {
	if err := usage.Format(opts.Format, "table", "json"); err != nil {
		return err
	}
	opts.StateDir = stateDirOf(env, opts.StateDir)
	runs, err := runlog.ListRuns(opts.StateDir)
	if err != nil {
		return err
	}
	if opts.Format == "json" {
		if runs == nil {
			runs = []runlog.RunInfo{}
		}
		return reports.WriteJSON(env.Out, runs)
	}
	if len(runs) == 0 {
		fmt.Fprintf(env.Out, "no runs in %s\n", opts.StateDir)
		return nil
	}
	t := &reports.Table{Columns: []string{"run id", "created", "state", "files", "names", "skipped", "restored"}}
	for _, r := range runs {
		if r.ReadErr != "" {
			t.Add(r.ID, "-", "unreadable: "+r.ReadErr, "-", "-", "-", "-")
			continue
		}
		t.Add(r.ID, r.Created.Format("2006-01-02 15:04:05Z"), r.State, fmt.Sprint(r.Files), fmt.Sprint(r.Names), fmt.Sprint(r.Skipped), fmt.Sprint(r.Restored))
	}
	return reports.WriteText(env.Out, t)
}

// cleanLeftovers removes the temp files killed runs left (runlog.CleanLeftovers) and says so
// on stderr, one line per file.
func cleanLeftovers(env *Env, stateDir string) {
	left, err := runlog.CleanLeftovers(stateDir)
	if err != nil {
		fmt.Fprintf(env.Err, "warning: looking for temp files of interrupted runs: %s\n", reports.Printable(err.Error()))
		return
	}
	for _, l := range left {
		if l.Err != nil {
			fmt.Fprintf(env.Err, "warning: cannot remove temp file %s left by interrupted run %s: %s\n", reports.Printable(l.Path), l.RunID, reports.Printable(l.Err.Error()))
			continue
		}
		fmt.Fprintf(env.Err, "removed temp file %s left by interrupted run %s\n", reports.Printable(l.Path), l.RunID)
	}
}
