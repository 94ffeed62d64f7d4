package main

import (
	"context"
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
	if (opts.RunID == "") == !opts.Last {
		return usageErrorf("give a RUN_ID or --last (not both)")
	}
	opts.StateDir = stateDirOf(env, opts.StateDir)
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
	fmt.Fprintf(env.Out, "undoing run %s (%s) from %s:\n", m.RunID, m.Created.Format("2006-01-02 15:04:05Z"), dir)
	for _, f := range m.Files {
		if !f.Restored {
			fmt.Fprintf(env.Out, "  restore %s (%s changed)\n", reports.Printable(f.Ref.Path), plural(f.Edits, "name"))
		}
	}
	if opts.Force && !opts.Yes {
		if !env.InTerminal {
			return usageErrorf("--force needs --yes when standard input is not a terminal (nothing was changed)")
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
	restored, refused, inUse := 0, 0, 0
	for _, o := range outs {
		switch {
		case o.Already:
		case o.Err != nil:
			refused++
			if exitCode(o.Err) == exitInUse {
				inUse++
			}
			fmt.Fprintf(env.Out, "  refused %s\n", reports.Printable(o.Err.Error()))
		default:
			restored++
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Out, "restored %s of run %s", plural(restored, "file"), m.RunID)
	if refused > 0 {
		fmt.Fprintf(env.Out, "; %s refused (undo again with --force to restore them anyway)\n", plural(refused, "file"))
		if inUse > 0 {
			return withCode(exitInUse)
		}
		return withCode(exitPartial)
	}
	fmt.Fprintln(env.Out)
	return nil
}
