package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/helptext"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/progress"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
)

// stateDirOf resolves the state directory (pipeline.StateDir with env's environment).
func stateDirOf(env *Env, dir string) string { return pipeline.StateDir(env.Getenv, env.Home, dir) }

// pipelineEnv is what a pipeline reads of env.
func pipelineEnv(env *Env) pipeline.Env {
	return pipeline.Env{Getenv: env.Getenv, Environ: env.Environ, Home: env.Home, ClientVersion: version}
}

// planFlags are the naming and store flags of scan, fix and check: the general ones with the
// agents' own options (agent.Agent.Options, agent/all's order) among them.
func planFlags() []cli.Flag {
	flags := agentFlags("")
	flags = append(append([]cli.Flag{
		&cli.BoolFlag{Name: "keep-truncated", Usage: "keep middle-truncated names that contain a dot instead of normalizing them"},
		&cli.BoolFlag{Name: "rewrite-lossy", Usage: "rewrite lossy legacy names (e.g. mcp__lit__get_data for raw get+data) to their tool's registered name (needs --inventory)"},
		fileFlag("inventory", helptext.InventoryUsage()),
		&cli.StringFlag{Name: "agent", Usage: "read the stores as this agent's: " + reports.OrList(selectableAgents()) + " (default: detect each file by name and content; also picks the default root); a file whose content says another agent is named in a warning",
			Action: checkAgentOptions},
	}, agentFlags("discover")...), append([]cli.Flag{
		&cli.BoolFlag{Name: "discover", Usage: helptext.DiscoverUsage()},
		discoverUntrustedFlag(),
		profileFlag(),
		busyTimeoutFlag(),
		allUsersFlag(),
	}, flags...)...)
	return flags
}

// allUsersFlag is --all-users (scan, fix, check, audit; root only, no PATH): every home of the
// user database holding an agent store (issue 23 item 5).
func allUsersFlag() cli.Flag {
	return &cli.BoolFlag{Name: "all-users", Usage: "as root, without PATH: the agents' default roots in every home of /etc/passwd that holds one, each home on its own line; homes skipped are said (refused when not root)"}
}

// discoverUntrustedFlag is --discover-untrusted (scan, fix, check, audit): without it --discover
// starts no server whose config another user owns or can write (issue 30 finding 1).
func discoverUntrustedFlag() cli.Flag {
	return &cli.BoolFlag{Name: "discover-untrusted", Usage: "with --discover: also start the servers of configs another user owns or others can write (their commands then run as you, as root when you are root)"}
}

// selectableAgents are the ids --agent accepts (all.Selectable).
func selectableAgents() []string {
	var out []string
	for _, id := range all.Selectable() {
		out = append(out, string(id))
	}
	return out
}

// agentFlags are the agents' options listed before the general flag before ("" = after all
// of them), as urfave/cli flags; each call makes new flag values (a repeatable one keeps its
// values in the flag). An option two rooms declare (the same name: one file format both agents
// read) is one flag, made from the first declaration in list order, its usage followed by the
// others' ("; also " …); every declaring room reads its values.
func agentFlags(before string) []cli.Flag {
	var out []cli.Flag
	for _, o := range all.SharedOptions() {
		if o.Before != before {
			continue
		}
		out = append(out, optionFlag(o))
	}
	return out
}

// fileFlag is a flag naming one input file (--inventory, --profile, --baseline): given an
// empty value (a script's unset variable) it is a usage error, exit 2, not the flag left out —
// the run would otherwise go on without the file meant (no inventory, no baseline).
func fileFlag(name, use string) *cli.StringFlag {
	return &cli.StringFlag{Name: name, Usage: use, TakesFile: true, Action: func(_ *cli.Context, v string) error {
		return usage.FileName(name, v)
	}}
}

// optionFlag is a room's option (agent.Option) as a new urfave/cli flag.
func optionFlag(o agent.Option) cli.Flag {
	switch {
	case o.Bool:
		return &cli.BoolFlag{Name: o.Name, Usage: o.Usage}
	case o.Repeatable:
		return &cli.GenericFlag{Name: o.Name, Value: &repeatable{}, Usage: o.Usage, TakesFile: o.File}
	case o.File:
		// An empty file name (an unset variable) would read as the option not given: the run
		// would plan with the default file instead of the one meant.
		return &cli.StringFlag{Name: o.Name, Value: o.Value, Usage: o.Usage, TakesFile: true, Action: func(_ *cli.Context, v string) error {
			return usage.FileName(o.Name, v)
		}}
	default:
		return &cli.StringFlag{Name: o.Name, Value: o.Value, Usage: o.Usage}
	}
}

func readPlanFlags(c *cli.Context) pipeline.Options {
	return pipeline.Options{KeepTruncated: c.Bool("keep-truncated"), RewriteLossy: c.Bool("rewrite-lossy"), Inventory: c.String("inventory"),
		Agent: c.String("agent"), Discover: c.Bool("discover"), DiscoverUntrusted: c.Bool("discover-untrusted"), AgentOptions: readAgentOptions(c), Prepared: &pipeline.PrepareCache{},
		Profile: c.String("profile"), BusyTimeout: c.Duration("busy-timeout"), AllUsers: c.Bool("all-users")}
}

// checkAgentOptions is --agent's flag action (scan, fix, check): another agent's own option
// given with it is a usage error (pipeline.CheckAgentOptions), before anything is read.
func checkAgentOptions(c *cli.Context, id string) error {
	var given []string
	for _, a := range all.Agents {
		opts := all.OptionsOf(a)
		if all.SentAsOptionOf(a) != nil {
			opts = append(slices.Clone(opts), *all.SentAsOptionOf(a))
		}
		for _, o := range opts {
			if c.IsSet(o.Name) {
				given = append(given, o.Name)
			}
		}
	}
	return pipeline.CheckAgentOptions(id, given)
}

// readAgentOptions are the values of the agents' options given (agent.Values).
func readAgentOptions(c *cli.Context) agent.Values {
	out := agent.Values{}
	readOptions(c, out, all.SharedOptions())
	return out
}

// readOptions adds the values of opts given to out.
func readOptions(c *cli.Context, out agent.Values, opts []agent.Option) {
	for _, o := range opts {
		switch {
		case o.Bool:
			if c.Bool(o.Name) {
				out[o.Name] = []string{"true"}
			}
		case o.Repeatable:
			if vs := repeated(c, o.Name); len(vs) > 0 {
				out[o.Name] = vs
			}
		default:
			if v := c.String(o.Name); v != "" {
				out[o.Name] = []string{v}
			}
		}
	}
}

// pipelineRun is a pipeline.Pipeline with the command's progress bar.
type pipelineRun struct {
	*pipeline.Pipeline
	env *Env
}

// newPipeline is pipeline.New with env.
func newPipeline(ctx context.Context, env *Env, paths []string, po pipeline.Options) (*pipelineRun, error) {
	p, err := pipeline.New(ctx, pipelineEnv(env), paths, po)
	if err != nil {
		return nil, err
	}
	if l := p.LookedLine(); l != "" && !env.lookedSaid {
		// Without PATH and --agent every agent's default root is looked for (issue 23 item 4):
		// what was found and what was not is said first.
		env.lookedSaid = true
		fmt.Fprintf(env.Err, "sessionfix: %s\n", reports.Printable(l))
	}
	return &pipelineRun{Pipeline: p, env: env}, nil
}

// run is pipeline.Run with a progress bar on a terminal (progress.New).
func (p *pipelineRun) run(ctx context.Context, opt rewrite.ProcessOptions, each func(*rewrite.StoreResult) error) (*rewrite.Result, error) {
	bar := progress.New(p.env.Err, p.env.ErrTerminal, p.env.Now, opt.Apply, len(p.Found.Targets), p.Found.TotalSize())
	if bar != nil {
		opt.Progress = bar.AddBytes
		inner := each
		each = func(r *rewrite.StoreResult) error {
			bar.StoreDone()
			if inner != nil {
				return inner(r)
			}
			return nil
		}
	}
	res, err := p.Pipeline.Run(ctx, opt, each)
	if bar != nil {
		bar.Finish()
	}
	return res, err
}

// failOnFlag is --fail-on of scan and fix.
func failOnFlag() cli.Flag {
	return &cli.StringFlag{Name: "fail-on", Usage: "kept: exit 5 when a name a provider rejects is kept (for scheduled jobs)"}
}

// endCode is the exit of a scan or fix run (Summary.ExitCode: 4 wins over 3, which wins
// over a --fail-on kept finding, 5); the finding is said on standard error. applied: fix
// --apply (a store it failed to write is 3).
func endCode(a *pipeline.Summary, env *Env, cmd string, applied, failOnKept bool) error {
	return exitWith(a, env, cmd, a.ExitCode(applied, failOnKept))
}

// exitWith ends a scan or fix run with code (a's exit status), saying a --fail-on kept finding.
func exitWith(a *pipeline.Summary, env *Env, cmd string, code int) error {
	switch code {
	case 0:
		return nil
	case exitcode.Finding:
		fmt.Fprintf(env.Err, "%s: --fail-on kept: %s a provider rejects kept\n", cmd, plural(a.Report.Totals.KeptRejected, "name"))
	}
	return withCode(code)
}

// workersFlag is --workers of scan and fix; the help shows the one real default.
func workersFlag() cli.Flag {
	return &cli.IntFlag{Name: "workers", Usage: "parallel readers", DefaultText: "the number of CPUs, at most 8"}
}
