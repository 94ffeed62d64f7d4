package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sessionfix/sessionfix/helptext"
	"github.com/sessionfix/sessionfix/internal/cliargs"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/fileio"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/store"
)

// signalError is the cancel cause of a run stopped by a signal (main.go): the process exits
// 128 + the signal number, the shell's convention.
type signalError struct{ sig syscall.Signal }

func (e *signalError) Error() string { return "interrupted by " + signalName(e.sig) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// interruptedCode is the exit code of a run whose context was cancelled: 128 + the signal
// number of its cause, exitcode.Interrupted (Ctrl-C) when the cause is not a signal.
func interruptedCode(ctx context.Context) int {
	var se *signalError
	if errors.As(context.Cause(ctx), &se) {
		return 128 + int(se.sig)
	}
	return exitcode.Interrupted
}

// version is set by the build (-ldflags "-X main.version=…").
var version = "dev"

// Env is everything a command may touch outside its options: injectable for tests.
type Env struct {
	In          io.Reader
	Out, Err    io.Writer
	InTerminal  bool // standard input is a terminal (prompts are allowed)
	ErrTerminal bool // standard error is a terminal (progress bars are allowed)
	Getenv      func(string) string
	// Environ lists the whole environment ("NAME=value"); settings expand $VAR with it and
	// --discover passes it to the MCP servers it starts. nil means an empty one.
	Environ func() []string
	Home    string
	Now     func() time.Time
	// beforeCheck is a test hook run with a store's path right before its final in-use check
	// (fileio.WithBeforeCheck on the command's context).
	beforeCheck func(path string)
	// lookedSaid: the agents a run without PATH found and looked for were said (once per
	// command: fix builds a second pipeline after its prompt).
	lookedSaid bool
}

func systemEnv() *Env {
	home, _ := os.UserHomeDir()
	return &Env{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		InTerminal:  term.IsTerminal(int(os.Stdin.Fd())),
		ErrTerminal: term.IsTerminal(int(os.Stderr.Fd())),
		Getenv:      os.Getenv,
		Environ:     os.Environ,
		Home:        home,
		Now:         time.Now,
	}
}

// flushOut writes out buffered results (before a prompt, so the user sees what is asked).
func flushOut(env *Env) {
	if f, ok := env.Out.(interface{ Flush() error }); ok {
		_ = f.Flush()
	}
}

// exitErr carries an exit code and an optional message.
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitErr) Unwrap() error { return e.err }

// usageErrorf is a usage error (exit 2).
func usageErrorf(format string, args ...any) error {
	return &exitErr{code: exitcode.Usage, err: fmt.Errorf(format, args...)}
}

// withCode returns an error that exits with code and prints nothing more (the command already
// reported the details).
func withCode(code int) error { return &exitErr{code: code} }

// exitCode maps an error to the process exit status.
func exitCode(err error) int {
	var ee *exitErr
	var st *exitcode.Status // a library's exit status (exitcode.With)
	switch {
	case err == nil:
		return exitcode.OK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &st):
		return st.Code
	case errors.As(err, new(*pipeline.UsageError)):
		return exitcode.Usage
	case errors.Is(err, store.ErrInUse):
		return exitcode.InUse
	default:
		return exitcode.Error
	}
}

// run builds the application with env's streams, runs it and returns the exit code.
func run(ctx context.Context, args []string, env *Env) int {
	// A reader that goes away (sessionfix scan | head) closes the pipe: the first write that
	// meets it (EPIPE; SIGPIPE itself is ignored, main.go) stops the run at its next safe
	// point as SIGPIPE would have stopped it, and the run ends as grep's does: exit 141
	// (128 + SIGPIPE), nothing said — unless it writes stores (fix --apply, undo), which say
	// in one line that they stopped and what was kept for undo.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	pipe := &pipeWriter{w: env.Out, closed: func() { cancel(&signalError{sig: syscall.SIGPIPE}) }}
	// Results can be long (a plan lists every name): buffer them, and flush before any
	// prompt and at the end.
	out := bufio.NewWriterSize(pipe, 64<<10)
	e := *env
	e.Out = out
	code, err := runApp(ctx, args, &e)
	// The results were not (all) written: a full disk behind `> report`, a closed descriptor.
	// bufio keeps the first write error, also of the flushes before a prompt. A cron job must
	// not read exit 0 with the report lost; a failure already said (names flushes itself) is
	// not said twice.
	ferr := out.Flush()
	switch {
	case pipe.broken.Load():
		if writesStores(args) && code != 128+int(syscall.SIGPIPE) {
			fmt.Fprintf(env.Err, "sessionfix: standard output was closed (its reader went away): the results were not all written; sessionfix runs lists what was rewritten, for undo\n")
		}
		return 128 + int(syscall.SIGPIPE)
	case ferr != nil:
		if err == nil || !strings.Contains(err.Error(), ferr.Error()) {
			fmt.Fprintf(env.Err, "sessionfix: results not written to standard output: %v\n", ferr)
		}
		if code == exitcode.OK {
			code = exitcode.Error
		}
	}
	return code
}

// pipeWriter is standard output as run writes it: the first write that fails with EPIPE (the
// reader closed the pipe) sets broken and calls closed.
type pipeWriter struct {
	w      io.Writer
	closed func()
	broken atomic.Bool
}

func (p *pipeWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if err != nil && errors.Is(err, syscall.EPIPE) && p.broken.CompareAndSwap(false, true) {
		p.closed()
	}
	return n, err
}

// writesStores says whether the command line args writes session stores or rule files:
// undo, and fix with --apply.
func writesStores(args []string) bool {
	if len(args) < 2 {
		return false
	}
	switch args[1] {
	case "undo":
		return true
	case "fix":
		return slices.ContainsFunc(args[2:], func(a string) bool { return a == "--apply" || strings.HasPrefix(a, "--apply=") })
	}
	return false
}

// runApp runs the command line on env (whose Out is buffered by run) and returns its exit code
// and the error it ended with (already printed).
func runApp(ctx context.Context, args []string, env *Env) (int, error) {
	app := newApp(env)
	args, err := cliargs.ResolveCommand(app, args)
	if err != nil {
		fmt.Fprintf(env.Err, "sessionfix: %v\n", err)
		return exitcode.Usage, err
	}
	if err := cliargs.CheckFlagOrder(app, args); err != nil {
		fmt.Fprintf(env.Err, "sessionfix: %v\n", err)
		return exitcode.Usage, err
	}
	if env.beforeCheck != nil {
		ctx = fileio.WithBeforeCheck(ctx, env.beforeCheck)
	}
	err = app.RunContext(ctx, args)
	var se *signalError
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &se) && se.sig == syscall.SIGPIPE {
		// Standard output was closed: run ends it (quietly unless stores were written).
		if writesStores(args) {
			fmt.Fprintf(env.Err, "sessionfix: standard output was closed (its reader went away): stopped at a safe point; sessionfix runs lists what was rewritten, for undo\n")
		}
		return interruptedCode(ctx), err
	}
	if ctx.Err() != nil {
		// Stopped by a signal (or the caller): whatever the command made of it, the exit code
		// says so, and "context canceled" reads as what happened.
		msg := "interrupted"
		if err != nil && err.Error() != "" {
			msg = strings.ReplaceAll(err.Error(), context.Canceled.Error(), "interrupted")
		}
		if !strings.Contains(msg, "interrupted") {
			msg = "interrupted: " + msg
		}
		if errors.As(context.Cause(ctx), &se) && !strings.Contains(msg, se.Error()) {
			// The command's error may name the signal already (its cause).
			msg = strings.Replace(msg, "interrupted", se.Error(), 1)
		}
		fmt.Fprintf(env.Err, "sessionfix: %s\n", msg)
		return interruptedCode(ctx), err
	}
	if err != nil && err.Error() != "" {
		fmt.Fprintf(env.Err, "sessionfix: %v\n", err)
	}
	return exitCode(err), err
}

func newApp(env *Env) *cli.App {
	app := &cli.App{
		Name:  "sessionfix",
		Usage: "find, fix and audit legacy MCP tool names in AI coding agents' session stores",
		Description: `sessionfix scans AI coding agents' session stores (` + helptext.AgentNames() + `) for MCP tool
names in legacy spellings (dotted, over-long, non-ASCII, middle-truncated) that strict model
providers now reject, rewrites them the way each agent's current release registers them
(dry-run by default, backups and undo), and audits which permission rules match which tools.
Without a PATH every command covers every agent whose default place exists, and says what it
found and what it looked for; --agent ID limits it to one. Each command's page: docs/commands/; every exit code in detail:
docs/exit-codes.md.

` + exitcode.Help(exitcode.App),
		Version:         version,
		Reader:          env.In,
		Writer:          env.Out,
		ErrWriter:       env.Err,
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {},
		OnUsageError:    nil, // set below: it needs the app's flags
		Commands: []*cli.Command{
			newScanCommand(env),
			newFixCommand(env),
			newUndoCommand(env),
			newRunsCommand(env),
			newNamesCommand(env),
			newAuditCommand(env),
			newCheckCommand(env),
		},
	}
	app.OnUsageError = usageErrorFor("", app.Flags)
	for _, c := range app.Commands {
		withQuiet(env, c)
		c.OnUsageError = usageErrorFor(c.Name, c.Flags)
		// No implicit "help"/"h" subcommand: `fix h` is the PATH h (it printed fix's help and
		// exited 0, fixing nothing). `sessionfix help fix` and `fix --help` are the help.
		c.HideHelpCommand = true
		if x, ok := exitcode.Commands[c.Name]; ok {
			c.Description += "\n\n" + exitcode.Help(x)
		}
	}
	return app
}

// usageErrorFor turns urfave/cli's flag errors (Go's flag package wording: `invalid value "x"
// for flag -busy-timeout: parse error`) into sentences that say what was expected, with the
// flag spelled as the help spells it: `--busy-timeout: expected a duration such as 5s, got "x"`.
// cmd is the command name ("" for the top level), flags its flags. Exit 2.
func usageErrorFor(cmd string, flags []cli.Flag) cli.OnUsageErrorFunc {
	return func(_ *cli.Context, err error, _ bool) error {
		return &exitErr{code: exitcode.Usage, err: cliargs.FlagError(cmd, flags, err)}
	}
}
