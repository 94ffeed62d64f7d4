package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/runlog"
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
	// Verbose is -v: every restored file listed (else the first undoListed).
	Verbose bool
}

// undoListed is how many restored files undo's text output lists one by one without -v; the
// others are counted in one line (files refused or failed are always listed, on standard
// error).
const undoListed = 20

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
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: fmt.Sprintf("list every file restored (the text output lists the first %d, then counts the rest)", undoListed)},
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

// undoFile is one store of an undo in --format json.
type undoFile struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	// Status: restored (Reason set when something failed after the restore), already (restored
	// by an earlier undo), changed (refused: it changed
	// since the run; --force restores it), in-use (refused: an agent holds it), failed.
	Status string `json:"status"`
	Names  int    `json:"names"`
	Reason string `json:"reason,omitempty"`
	// MovedFrom is set for a store the run moved (fix --move-legacy): where it was, Path
	// where it is moved back to.
	MovedFrom string `json:"moved_from,omitempty"`
	// Kept is where a forced restore kept what the store held before it (--force over a store
	// that changed since the run: its later changes are there, not in the store).
	Kept string `json:"kept,omitempty"`
	// Notes say how the store was restored when the user should know (a database put back row
	// by row, not byte for byte, and why).
	Notes []string `json:"notes,omitempty"`
}

// undoReport is undo --format json: always one closed document; Error is set when the undo
// could not run or stopped (the files restored so far are still listed).
type undoReport struct {
	RunID          string     `json:"run_id,omitempty"`
	RunDir         string     `json:"run_dir,omitempty"`
	AlreadyUndone  bool       `json:"already_undone"`
	Files          []undoFile `json:"files"`
	Restored       int        `json:"restored"`
	NotRestored    int        `json:"not_restored"`
	Summary        string     `json:"summary,omitempty"`
	Error          string     `json:"error,omitempty"`
	NothingChanged bool       `json:"nothing_changed,omitempty"` // the --force confirmation was declined
}

func runUndo(ctx context.Context, env *Env, opts undoOptions) (err error) {
	if err := usage.Format(opts.Format, "table", "json"); err != nil {
		return err
	}
	if opts.Format == "json" {
		rep := &undoReport{Files: []undoFile{}}
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
func undo(ctx context.Context, env *Env, opts undoOptions, rep *undoReport) error {
	if rep == nil {
		rep = &undoReport{} // filled and dropped
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
	listed, unlisted := 0, 0 // restored files listed, and past undoListed
	end, err := pipeline.Undo(ctx, pipeline.UndoRequest{StateDir: opts.StateDir, RunID: opts.RunID, Last: opts.Last, Force: opts.Force,
		Ask: opts.Force && !opts.Yes, BusyTimeout: opts.BusyTimeout, Now: env.Now, Profile: opts.Profile}, pipeline.UndoHooks{
		Start: func(dir string, m *runlog.Manifest, todo, todoDBs int) {
			fmt.Fprintf(env.Out, "undoing run %s (%s) from %s: %s to restore\n", m.RunID, m.Created.Format("2006-01-02 15:04:05Z"), dir, pipeline.StoresPhrase(todo, todoDBs))
			for _, n := range m.ToolNotes {
				fmt.Fprintf(env.Out, "  note: %s\n", reports.Printable(n))
			}
		},
		Confirm: func(m *runlog.Manifest) (bool, error) {
			list := env.Out
			if list == io.Discard {
				list = env.Err // --format json: the list the question is about still reaches the person
			}
			for _, f := range m.Files {
				if !f.Restored {
					fmt.Fprintf(list, "  %s (%s changed)\n", reports.Printable(f.Ref.Path), plural(f.Edits, "name"))
				}
			}
			flushOut(env)
			fmt.Fprintf(env.Err, "Restore these files even if they changed since the run (later changes are lost)? [y/N] ")
			return confirm(ctx, env.In)
		},
		File: func(o runlog.UndoOutcome, status string, late bool) {
			path := reports.Printable(o.Ref.Path)
			f := undoFile{Path: o.Ref.Path, Kind: string(o.Ref.Kind), Names: o.Names, Status: status, Kept: o.Kept, Notes: o.Notes}
			if o.Err != nil && f.Status != pipeline.UndoAlready {
				f.Reason = o.Err.Error()
				flushOut(env)
			}
			if o.Move != nil {
				f.MovedFrom = o.Move.To
			}
			kept := ""
			if o.Kept != "" {
				// --force over a store that changed since the run: its later changes are not in
				// the store any more; say where they are (issue 30 finding 8).
				kept = "; it had changed since the run: what it held before this undo is kept at " + reports.Printable(o.Kept)
			}
			switch {
			case f.Status == pipeline.UndoRestored && !late && o.Move != nil:
				listed++ // a store moved back is always listed: it is not where the user last saw it
				fmt.Fprintf(env.Out, "  moved back %s (from %s)%s\n", path, reports.Printable(o.Move.To), kept)
			case f.Status == pipeline.UndoRestored && !late && kept == "" && len(o.Notes) == 0 && !opts.Verbose && listed >= undoListed:
				unlisted++ // counted in the closing line (issue 23 item 11: 5,000 files printed 5,002 lines)
			case f.Status == pipeline.UndoRestored && !late:
				listed++ // past undoListed too when its later changes were kept aside or it has a note: the user must know
				fmt.Fprintf(env.Out, "  restored %s (%s)%s\n", path, plural(o.Names, "name"), kept)
				for _, n := range o.Notes {
					fmt.Fprintf(env.Out, "    note: %s\n", reports.Printable(n))
				}
			case late:
				// Restored, then something failed (a directory fsync) or the agent appended
				// meanwhile (carried over): reported, and the exit status says so.
				fmt.Fprintf(env.Err, "  restored %s (%s)%s, but: %s\n", path, plural(o.Names, "name"), kept, reports.Printable(o.Err.Error()))
			case f.Status == pipeline.UndoChanged || f.Status == pipeline.UndoInUse:
				fmt.Fprintf(env.Err, "  refused  %s\n", reports.Printable(o.Err.Error()))
			case f.Status == pipeline.UndoFailed:
				fmt.Fprintf(env.Err, "  failed   %s\n", reports.Printable(o.Err.Error()))
			}
			rep.Files = append(rep.Files, f)
		},
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
	switch {
	case end.Declined:
		return declined(env)
	case end.NothingToUndo:
		fmt.Fprintln(env.Out, reports.Printable(end.Summary))
	default:
		if unlisted > 0 {
			fmt.Fprintf(env.Out, "  … and %s restored, not listed (-v lists every file, --format json has them)\n", plural(unlisted, "more file"))
		}
		fmt.Fprintln(env.Out, end.Summary)
	}
	if end.Code != 0 {
		return withCode(end.Code)
	}
	return nil
}
