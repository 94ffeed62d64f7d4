package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/sessionfix/sessionfix/agent/all"
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

// agentNames lists every agent sessionfix knows by its display name, in agent/all's order,
// joined by ", ".
func agentNames() string {
	var out []string
	for _, a := range all.Agents {
		out = append(out, a.Core().Name)
	}
	return strings.Join(out, ", ")
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
	switch {
	case err == nil:
		return exitcode.OK
	case errors.As(err, &ee):
		return ee.code
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
	args, err := resolveCommand(app, args)
	if err != nil {
		fmt.Fprintf(env.Err, "sessionfix: %v\n", err)
		return exitcode.Usage, err
	}
	if err := checkFlagOrder(app, args); err != nil {
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
		Description: `sessionfix scans AI coding agents' session stores (` + agentNames() + `) for MCP tool
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
		return &exitErr{code: exitcode.Usage, err: humanFlagError(cmd, flags, err)}
	}
}

var (
	flagInvalidValue = regexp.MustCompile(`^invalid value "((?:[^"\\]|\\.)*)" for flag -(\S+): (.*)$`)
	flagInvalidBool  = regexp.MustCompile(`^invalid boolean value "((?:[^"\\]|\\.)*)" for -(\S+): (.*)$`)
	flagUndefined    = regexp.MustCompile(`^flag provided but not defined: -(\S+)$`)
	flagNeedsValue   = regexp.MustCompile(`^flag needs an argument: -(\S+)$`)
)

func humanFlagError(cmd string, flags []cli.Flag, err error) error {
	help := "sessionfix --help"
	if cmd != "" {
		help = "sessionfix " + cmd + " --help"
	}
	msg := err.Error()
	if m := flagInvalidValue.FindStringSubmatch(msg); m != nil {
		got, _ := strconv.Unquote(`"` + m[1] + `"`)
		want := "a valid value"
		switch f := findFlag(flags, m[2]); f.(type) {
		case *cli.DurationFlag:
			want = "a duration such as 5s, 1m30s or 500ms"
		case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
			want = "a whole number such as 4"
		case *cli.Float64Flag:
			want = "a number such as 0.5"
		case nil:
		default:
			if !strings.HasSuffix(m[3], "parse error") {
				want = "a valid value (" + m[3] + ")"
			}
		}
		return fmt.Errorf("%s: expected %s, got %q", dashed(m[2]), want, got)
	}
	if m := flagInvalidBool.FindStringSubmatch(msg); m != nil {
		got, _ := strconv.Unquote(`"` + m[1] + `"`)
		return fmt.Errorf("%s: expected true or false (or the flag alone), got %q", dashed(m[2]), got)
	}
	if m := flagUndefined.FindStringSubmatch(msg); m != nil {
		if cmd == "" && m[1] == "v" {
			// -v was --version once; it is --verbose wherever a command has it.
			return fmt.Errorf("unknown flag -v: the version is --version (-v is --verbose, of scan and fix)")
		}
		if f, ok := findFlag(flags, "format").(*cli.StringFlag); ok && len(m[1]) > 1 && slices.Contains(formatValues(f.Usage), m[1]) {
			// `scan --json` (a cron line written from memory): the format is a value of --format.
			return fmt.Errorf("unknown flag %s: the output format is a value of --format (--format %s; %s lists the flags)", dashed(m[1]), m[1], help)
		}
		return fmt.Errorf("unknown flag %s (%s lists the flags)", dashed(m[1]), help)
	}
	if m := flagNeedsValue.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s needs a value (%s)", dashed(m[1]), help)
	}
	return err
}

// formatValues are the values a --format usage lists: the words after "format:" up to the
// first parenthesis ("output format: table, json, or sarif (…)": table, json, sarif; "or" is
// not one).
func formatValues(usage string) []string {
	_, list, ok := strings.Cut(usage, "format:")
	if !ok {
		return nil
	}
	list, _, _ = strings.Cut(list, "(")
	var out []string
	for _, w := range strings.FieldsFunc(list, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if w != "or" {
			out = append(out, w)
		}
	}
	return out
}

// dashed spells a flag name as the help does: --name, or -n for a one-letter alias.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// resolveCommand checks the command word of args (the first argument after the global flags)
// before urfave/cli sees it: "help" and "help CMD" become "--help" and "CMD --help" (the help
// command itself is hidden), and a word that names no command is a usage error
// (`unknown command "frob"`) instead of urfave/cli's "No help topic" with exit 1.
func resolveCommand(app *cli.App, args []string) ([]string, error) {
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" {
		if args[i] == "--" {
			i++
			break
		}
		i++
	}
	if i >= len(args) {
		return args, nil
	}
	word := args[i]
	if word == "help" {
		rest := args[i+1:]
		out := append([]string{}, args[:i]...)
		switch {
		case len(rest) == 0:
			return append(out, "--help"), nil
		case len(rest) > 1:
			return nil, fmt.Errorf("help takes one command, not %d (sessionfix help COMMAND)", len(rest))
		case app.Command(rest[0]) == nil:
			return nil, unknownCommand(app, rest[0])
		}
		return append(out, rest[0], "--help"), nil
	}
	if app.Command(word) == nil {
		return nil, unknownCommand(app, word)
	}
	return args, nil
}

func unknownCommand(app *cli.App, word string) error {
	var names []string
	app.OnUsageError = usageErrorFor("", app.Flags)
	for _, c := range app.Commands {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	return fmt.Errorf("unknown command %q: the commands are %s (see sessionfix --help)", word, strings.Join(names, ", "))
}

// checkFlagOrder rejects a flag written after a positional argument: urfave/cli stops parsing
// flags at the first argument, so "fix DIR --apply" would silently be a dry run over a path
// named "--apply". "--" ends flags as usual. A flag the command does not have, before any
// argument, ends the check: urfave/cli then names it unknown (its value, if it has one, is not
// an argument: "scan --acme-version 2.1.332 --format json DIR" is an unknown flag, not
// "--format comes after an argument").
//
// It also rejects a value flag given an empty value on the command line (`--state-dir ""`,
// `--agent=`: a script's unset variable), which urfave/cli would take as the flag not given —
// the run would go on with the default state directory, agent, release or project instead of
// the one meant: "--state-dir needs a directory; it was given an empty one", exit 2 (every
// command, every value flag; emptyValueNoun). An empty environment variable
// (SESSIONFIX_STATE_DIR=) is not the command line: it still reads as unset.
func checkFlagOrder(app *cli.App, args []string) error {
	if len(args) < 3 {
		return nil
	}
	cmd := app.Command(args[1])
	if cmd == nil {
		return nil
	}
	takesValue := map[string]bool{}
	known := map[string]bool{"h": true, "help": true}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			known[n] = true
			takesValue[n] = !isBool
		}
	}
	sawArg := false
	for i := 2; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return nil
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if sawArg {
				usage := cmd.ArgsUsage
				if usage == "" {
					usage = "ARGS"
				}
				return fmt.Errorf("flag %s comes after an argument: put flags first (sessionfix %s [flags] %s)", a, args[1], usage)
			}
			name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !known[name] {
				return nil // urfave/cli: "unknown flag"
			}
			if !hasValue && takesValue[name] && i+1 < len(args) {
				i++ // its value
				value, hasValue = args[i], true
			}
			if hasValue && value == "" && takesValue[name] {
				f := findFlag(cmd.Flags, name)
				if noun := emptyValueNoun(f); noun != "" {
					// Spelled as the help does: the first name (-o "" is --out).
					return fmt.Errorf("--%s needs %s; it was given an empty one", f.Names()[0], noun)
				}
			}
		default:
			sawArg = true
		}
	}
	return nil
}

// emptyValueNoun is what an empty value of flag f lacks, for checkFlagOrder's usage error: "a
// file name" for a flag taking a file (TakesFile), "a directory", "a path", "an agent name", "a
// finding class" or "a value"; "" for
// the flags whose own check already refuses an empty value with exit 2 and says which values it
// takes (--format, --provider, --mode, the durations and --workers).
func emptyValueNoun(f cli.Flag) string {
	if f == nil {
		return ""
	}
	switch name := f.Names()[0]; name {
	case "format", "provider", "mode", "busy-timeout", "discover-timeout", "workers":
		return ""
	case "out", "tools-out":
		return "a path (- for standard output)"
	case "state-dir", "project", "agents":
		return "a directory"
	case "history":
		return "a path"
	case "agent":
		return "an agent name"
	case "fail-on":
		return "a finding class"
	}
	takesFile := false
	switch f := f.(type) {
	case *cli.StringFlag:
		takesFile = f.TakesFile
	case *cli.StringSliceFlag:
		takesFile = f.TakesFile
	case *cli.GenericFlag:
		takesFile = f.TakesFile
	case *cli.PathFlag:
		takesFile = true
	}
	if takesFile {
		return "a file name"
	}
	return "a value"
}
