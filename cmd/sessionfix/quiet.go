package main

import (
	"github.com/sessionfix/sessionfix/internal/cliargs"
	"github.com/sessionfix/sessionfix/internal/quiet"
	"github.com/sessionfix/sessionfix/internal/usage"

	"github.com/urfave/cli/v2"
)

// quietUsage is -q/--quiet's usage on every command (fix adds what it leaves out besides).
const quietUsage = "print nothing when the run succeeds (exit 0), so cron mails nothing when all is clean; " +
	"otherwise print what the run printed, problems first in order (files named by --out and the like are still written)"

// quietFlag is the -q/--quiet flag every command has (issue 23 item 11).
func quietFlag(usage string) cli.Flag {
	return &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: usage}
}

// withQuiet gives command c -q/--quiet (unless it declares its own) and runs its action
// through quietAction.
func withQuiet(env *Env, c *cli.Command) {
	if cliargs.FindFlag(c.Flags, "quiet") == nil {
		c.Flags = append(c.Flags, quietFlag(quietUsage))
	}
	c.Action = quietAction(env, c.Action)
}

// quietAction runs act; with --quiet, what it writes to env.Out and env.Err is recorded in the
// order written and dropped when it returns no error (exit 0), or written out when it fails
// (any other exit status: a finding, a problem, a refusal), before the error itself. A prompt
// ends the quiet: when the run reads standard input at a terminal (a [y/N] question), what
// was recorded is written out first and the rest of the run goes straight through. --quiet
// with --verbose is a usage error.
func quietAction(env *Env, act cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if !c.Bool("quiet") {
			return act(c)
		}
		if err := usage.QuietVerbose(true, cliargs.FindFlag(c.Command.Flags, "verbose") != nil && c.Bool("verbose")); err != nil {
			return err
		}
		q := quiet.New(env.Out, env.Err)
		in, out, errw := env.In, env.Out, env.Err
		env.Out, env.Err = q.Out(), q.Err()
		if env.InTerminal && in != nil {
			env.In = q.Input(in)
		}
		err := act(c)
		env.In, env.Out, env.Err = in, out, errw
		if err != nil {
			q.Release()
		}
		return err
	}
}
