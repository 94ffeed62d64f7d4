package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/all"
)

type undoOptions struct {
	RunID    string
	Last     bool
	Force    bool
	Yes      bool
	StateDir string
	// BusyTimeout bounds the wait for a SQLite store's write lock.
	BusyTimeout time.Duration
}

func newUndoCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "undo",
		Usage:     "restore every store of a fix run from its backups",
		ArgsUsage: "RUN_ID | --last",
		Description: `Restores each store a "fix --apply" run rewrote, byte for byte (content, mode and mtime),
from the backups in the run directory. A store that changed since the run (its sha256 is no
longer the one the run wrote, e.g. the agent appended to the session) is refused and named,
unless --force is given; the others are still restored. Undo only puts back bytes sessionfix
saved itself and refuses anything else, so it needs no --yes; --force (which overwrites
changes made after the run) needs --yes when standard input is not a terminal.

EXAMPLES:
   sessionfix runs
   sessionfix undo --last
   sessionfix undo 20261130T190512Z-a1b2
   sessionfix undo --force --yes --last`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "last", Usage: "undo the newest run that still has changes to undo"},
			&cli.BoolFlag{Name: "force", Usage: "restore stores that changed since the run too (their later changes are lost)"},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "with --force: do not ask for confirmation"},
			&cli.StringFlag{Name: "state-dir", Usage: "where runs are kept (default: ${XDG_STATE_HOME:-~/.local/state}/sessionfix)", EnvVars: []string{"SESSIONFIX_STATE_DIR"}},
			busyTimeoutFlag(),
		},
		Action: func(c *cli.Context) error {
			opts := undoOptions{Last: c.Bool("last"), Force: c.Bool("force"), Yes: c.Bool("yes"), StateDir: c.String("state-dir"),
				BusyTimeout: c.Duration("busy-timeout")}
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

func runUndo(ctx context.Context, env *Env, opts undoOptions) error {
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
	dir, err := rewrite.FindRun(opts.StateDir, opts.RunID, opts.Last)
	if err != nil {
		return err
	}
	m, err := rewrite.ReadRun(dir)
	if err != nil {
		return err
	}
	if m.State == rewrite.StateUndone {
		fmt.Fprintf(env.Out, "run %s was already undone at %s; nothing to do\n", m.RunID, m.UndoneAt.Format("2006-01-02 15:04:05Z"))
		return nil
	}
	todo := 0
	for _, f := range m.Files {
		if !f.Restored {
			todo++
		}
	}
	fmt.Fprintf(env.Out, "undoing run %s (%s) from %s: %s to restore\n", m.RunID, m.Created.Format("2006-01-02 15:04:05Z"), dir, plural(todo, "file"))
	for _, n := range m.ToolNotes {
		fmt.Fprintf(env.Out, "  note: %s\n", reports.Printable(n))
	}
	if opts.Force && !opts.Yes {
		for _, f := range m.Files {
			if !f.Restored {
				fmt.Fprintf(env.Out, "  %s (%s changed)\n", reports.Printable(f.Ref.Path), plural(f.Edits, "name"))
			}
		}
		flushOut(env)
		fmt.Fprintf(env.Err, "Restore these files even if they changed since the run (later changes are lost)? [y/N] ")
		if !confirm(env.In) {
			fmt.Fprintln(env.Err, "nothing was changed")
			return nil
		}
	}
	sopt, err := storeOptions("", opts.BusyTimeout)
	if err != nil {
		return err
	}
	open := func(ref store.Ref) (store.Store, error) { return all.OpenWith(ref, sopt) }
	outs, _, err := rewrite.Undo(ctx, dir, open, opts.Force, env.Now)
	restored, changed, inUse, failed, late := 0, 0, 0, 0, 0
	for _, o := range outs {
		path := reports.Printable(o.Ref.Path)
		var ce *store.CommittedError
		switch {
		case o.Already:
		case o.Err == nil:
			restored++
			fmt.Fprintf(env.Out, "  restored %s (%s)\n", path, plural(o.Names, "name"))
		case errors.As(o.Err, &ce):
			// Restored, then something failed (a directory fsync) or the agent appended
			// meanwhile (carried over): reported, and the exit status says so.
			restored++
			late++
			if errors.Is(o.Err, store.ErrInUse) {
				inUse++
			}
			fmt.Fprintf(env.Out, "  restored %s (%s), but: %s\n", path, plural(o.Names, "name"), reports.Printable(o.Err.Error()))
		case errors.Is(o.Err, store.ErrChangedSinceRun):
			changed++
			fmt.Fprintf(env.Out, "  refused  %s\n", reports.Printable(o.Err.Error()))
		case errors.Is(o.Err, store.ErrInUse):
			inUse++
			fmt.Fprintf(env.Out, "  refused  %s\n", reports.Printable(o.Err.Error()))
		default:
			failed++
			fmt.Fprintf(env.Out, "  failed   %s\n", reports.Printable(o.Err.Error()))
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Out, "restored %s of run %s", plural(restored, "file"), m.RunID)
	if left := changed + inUse + failed; left > 0 {
		fmt.Fprintf(env.Out, "; %s not restored", plural(left, "file"))
		switch {
		case changed > 0 && !opts.Force:
			fmt.Fprint(env.Out, " (undo the same run with --force --yes to restore changed files anyway, losing their later changes)")
		case inUse > 0:
			fmt.Fprint(env.Out, " (stop the agent using them and undo the same run again)")
		}
		fmt.Fprintln(env.Out)
		if inUse > 0 {
			return withCode(exitInUse)
		}
		return withCode(exitPartial)
	}
	fmt.Fprintln(env.Out)
	switch {
	case inUse > 0:
		return withCode(exitInUse)
	case late > 0:
		return withCode(exitPartial)
	}
	return nil
}
