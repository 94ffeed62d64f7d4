package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sessionfix/sessionfix/pipeline/report"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/textreport"
)

type undoOptions struct {
	RunID    string
	Last     bool
	Force    bool
	Yes      bool
	StateDir string
	Format   string
	// BusyTimeout bounds the wait for a SQLite store's write lock.
	BusyTimeout time.Duration
	// Profile is --profile FILE: the SQLite profile of a run made with fix --profile that did
	// not record it (a run recorded it since issue 23 item 6; pipeline.UndoProfile).
	Profile string
	// Verbose is -v: every restored file listed (else the first textreport.UndoListed).
	Verbose bool
}

func newUndoCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "undo",
		Usage:     "restore every store of a fix run from its backups",
		ArgsUsage: "RUN_ID | --last",
		Description: `Restores each store a "fix --apply" run rewrote, byte for byte (content, mode and mtime),
from the backups in the run directory. A session the agent appended to after the run (its first
bytes are still what the run wrote) is undone in place: the old names go back at the recorded
sites and the appended lines stay. A store that changed otherwise since the run (its content
checksum is no longer the one the run wrote) is refused and named, unless --force is given
(which drops those changes); the others are still restored. Temp files that a killed run or undo left are removed
first (named on stderr). Undo only puts back bytes sessionfix
saved itself and refuses anything else, so it needs no --yes; --force (which overwrites
changes made after the run) needs --yes when standard input is not a terminal.

A run directory is not trusted: a manifest or journal line whose checksum does not match, a store
path outside the run's roots (or with "..", a symlink, not a regular file), a backup outside the
run's own backups/ directory, a setuid/setgid mode the backup and the store lack, an entry
without a checksum of its original undo can check the backup with, or a manifest of a later
version than this sessionfix reads refuses the whole run (exit 1, nothing restored, --force or
not). A hot journal a crashed SQLite writer left
is rolled back first.

EXAMPLES:
   sessionfix runs
   sessionfix undo --last
   sessionfix undo --force --yes --last
   sessionfix undo --last --format json   # {"run_id":…,"files":[{"path":…,"status":"restored",…}],…}`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "last", Usage: "undo the newest run that still has changes to undo"},
			&cli.BoolFlag{Name: "force", Usage: "restore stores that changed since the run too (their later changes are lost)"},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "with --force: do not ask for confirmation"},
			&cli.StringFlag{Name: "state-dir", Usage: "where runs are kept (default: ${XDG_STATE_HOME:-~/.local/state}/sessionfix)", EnvVars: []string{"SESSIONFIX_STATE_DIR"}},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output format: table or json (one closed JSON document, also on errors)"},
			busyTimeoutFlag(),
			fileFlag("profile", "the SQLite store profile (JSON) of a run made with fix --profile FILE whose run does not record it (older runs); a run records its profile, and undo uses it"),
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: fmt.Sprintf("list every file restored (the text output lists the first %d, then counts the rest)", textreport.UndoListed)},
		},
		Action: func(c *cli.Context) error {
			opts := undoOptions{Last: c.Bool("last"), Force: c.Bool("force"), Yes: c.Bool("yes"), StateDir: c.String("state-dir"),
				Format: c.String("format"), BusyTimeout: c.Duration("busy-timeout"), Profile: c.String("profile"), Verbose: c.Bool("verbose")}
			switch c.NArg() {
			case 0:
			case 1:
				opts.RunID = c.Args().First()
			default:
				return usageErrorf("undo takes one RUN_ID")
			}
			return runUndo(c.Context, env, opts)
		},
	}
}

func runUndo(ctx context.Context, env *Env, opts undoOptions) (err error) {
	if err := usage.Format(opts.Format, "table", "json"); err != nil {
		return err
	}
	if opts.Format == "json" {
		rep := &report.UndoReport{Files: []report.UndoFile{}}
		text := *env
		text.Out = io.Discard // the text lines; the report is written instead
		defer func() {
			if err != nil && rep.Error == "" {
				rep.Error = err.Error()
			}
			if werr := reports.WriteJSON(env.Out, rep); werr != nil && err == nil {
				err = werr
			}
		}()
		return undo(ctx, &text, opts, rep)
	}
	return undo(ctx, env, opts, nil)
}

// undo runs an undo, printing text to env.Out (files refused, failed or restored with a
// problem to env.Err: issue 8 item 7) and, when rep is not nil, filling rep.
func undo(ctx context.Context, env *Env, opts undoOptions, rep *report.UndoReport) error {
	if rep == nil {
		rep = &report.UndoReport{} // filled and dropped
	}
	switch {
	case opts.RunID == "" && !opts.Last:
		return usageErrorf("give a RUN_ID or --last (sessionfix runs lists them)")
	case opts.RunID != "" && opts.Last:
		return usageErrorf("give a RUN_ID or --last, not both")
	}
	if opts.Force && !opts.Yes && !env.InTerminal {
		return usageErrorf("--force needs --yes when standard input is not a terminal (nothing was changed)")
	}
	opts.StateDir = stateDirOf(env, opts.StateDir)
	cleanLeftovers(env, opts.StateDir)
	u := &textreport.Undo{Out: env.Out, Err: env.Err, Verbose: opts.Verbose, Report: rep}
	end, err := pipeline.Undo(ctx, pipeline.UndoRequest{StateDir: opts.StateDir, RunID: opts.RunID, Last: opts.Last, Force: opts.Force,
		Ask: opts.Force && !opts.Yes, BusyTimeout: opts.BusyTimeout, Now: env.Now, Profile: opts.Profile}, pipeline.UndoHooks{
		Start: u.Start,
		Confirm: func(m *runlog.Manifest) (bool, error) {
			u.List(m)
			flushOut(env)
			fmt.Fprintf(env.Err, "Restore these files even if they changed since the run (later changes are lost)? [y/N] ")
			return confirm(ctx, env.In)
		},
		File: u.File,
	})
	rep.RunID, rep.RunDir, rep.AlreadyUndone = end.RunID, end.Dir, end.AlreadyUndone
	rep.Restored, rep.NotRestored = end.Tally.Restored, end.Tally.NotRestored()
	if err != nil {
		if end.Code != 0 {
			return &exitErr{code: end.Code, err: err} // the run is in use: 4
		}
		return err
	}
	rep.Summary, rep.NothingChanged = end.Summary, end.Declined
	if end.Declined {
		return declined(env)
	}
	u.End(end)
	if end.Code != 0 {
		return withCode(end.Code)
	}
	return nil
}
