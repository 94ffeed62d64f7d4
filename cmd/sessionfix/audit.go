package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/sessionfix/sessionfix/auditrun"
	"github.com/sessionfix/sessionfix/helptext"
	"github.com/sessionfix/sessionfix/textreport"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/engine/sqlite/fleetdb"
	"github.com/sessionfix/sessionfix/fleet"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/inventory"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
)

func newAuditCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "audit",
		Usage:       "show which permission rules match which MCP tools now, and before the rename (CSV, HTML, JSON)",
		ArgsUsage:   "[PATH...]",
		Description: helptext.AuditDescription(),
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "settings", Usage: auditUsage("settings"), TakesFile: true},
			&cli.StringFlag{Name: "project", Usage: auditUsage("project"), TakesFile: true},
			&cli.StringSliceFlag{Name: "agents", Usage: auditUsage("agents"), TakesFile: true},
			fileFlag("inventory", "JSON inventory of MCP tools (raw server keys and tool names, trust)"),
			&cli.BoolFlag{Name: "discover", Usage: "start the MCP servers configured in the settings (RUNS THEIR COMMANDS) and list their tools"},
			&cli.DurationFlag{Name: "discover-timeout", Value: inventory.DefaultTimeout, Usage: "time limit for each server with --discover"},
			discoverUntrustedFlag(),
			&cli.StringSliceFlag{Name: "history", Usage: auditUsage("history"), TakesFile: true},
			&cli.StringFlag{Name: "format", Value: "csv", Usage: "output format: csv, html, json, sarif (SARIF 2.1.0: one result per lost, gained or refused pair) or sqlite (with --out FILE: the fleet database, one row per such result; docs/fleet.md)"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: "-", Usage: "where to write the report: a file (replaced atomically), - for standard output, or a device or FIFO such as /dev/null or /dev/stdout (written through); a symbolic link is followed, never replaced; with --format sqlite the fleet database (created when missing, this host's and user's audit rows replaced)"},
			&cli.StringFlag{Name: "tools-out", Usage: "also write the tools table as CSV to this file (- for standard output; devices, FIFOs and links as --out)", TakesFile: true},
			&cli.BoolFlag{Name: "all-pairs", Usage: "list every (rule, tool) pair, also those that match neither now nor before"},
			&cli.StringSliceFlag{Name: "fail-on", Usage: "exit 5 when a pair is lost, refused or gained (comma-separated subset; unreadable input, exit 3, wins)"},
			&cli.StringFlag{Name: "mode", Value: string(permission.ModeDefault), Usage: "approval mode of the outcomes: default, yolo, auto-edit or plan"},
			&cli.StringFlag{Name: "subagent", Usage: "compute the tool decisions for calls made by this subagent (its front matter name)"},
			fileFlag("baseline", "a previous audit output (--format json or sarif): exit 5 only for lost, gained or refused pairs not in it (of the --fail-on classes when given)"),
			&cli.StringFlag{Name: "state-dir", Usage: "the state directory of the fix runs whose renames tell the raw tools of the names they rewrote (default: fix's, ${XDG_STATE_HOME:-~/.local/state}/sessionfix)", EnvVars: []string{"SESSIONFIX_STATE_DIR"}, TakesFile: true},
			&cli.BoolFlag{Name: "all-users", Usage: "as root, without PATH: audit every home of /etc/passwd that holds the agent's home, each in its own section; homes skipped are said (refused when not root)"},
		}, append(fleetFlags(), auditAgentFlags()...)...),
		Action: func(c *cli.Context) error {
			opts := auditrun.Options{Paths: c.Args().Slice(),
				Settings: c.StringSlice("settings"), Project: c.String("project"), Agents: c.StringSlice("agents"),
				Inventory: c.String("inventory"), Discover: c.Bool("discover"), DiscoverTimeout: c.Duration("discover-timeout"), DiscoverUntrusted: c.Bool("discover-untrusted"),
				History: c.StringSlice("history"), Format: c.String("format"), Out: c.String("out"), ToolsOut: c.String("tools-out"),
				AllPairs: c.Bool("all-pairs"), FailOn: c.StringSlice("fail-on"), Mode: c.String("mode"), Subagent: c.String("subagent"),
				Baseline: c.String("baseline"), StateDir: c.String("state-dir"), Host: c.String("host"), User: c.String("user"),
			}
			for _, f := range []string{"out", "tools-out"} {
				// An empty value is an unset variable in a script (--out "$OUT"): the report
				// would silently go to stdout, or the tools table nowhere.
				if c.IsSet(f) && c.String(f) == "" {
					return usageErrorf("--%s needs a path (- for standard output); it was given an empty one", f)
				}
			}
			wd, err := os.Getwd()
			if err != nil {
				return fmt.Errorf("audit: current directory: %w", err)
			}
			opts.Cwd = wd
			if !c.IsSet("agent") && len(opts.Paths) == 0 {
				found := auditrun.Found(c.IsSet, agent.Env{Getenv: env.Getenv, Home: env.Home})
				if len(found) > 1 {
					return auditrun.RunAgents(c.Context, auditEnv(env), found, opts, c.IsSet("mode"), readAuditOptions(c))
				}
				if len(found) == 1 {
					return auditrun.Run(c.Context, auditEnv(env), found[0], opts, c.IsSet("mode"), readAuditOptions(c))
				}
			}
			a, err := auditrun.Agent(c.String("agent"), c.IsSet)
			if err != nil {
				return err
			}
			if c.Bool("all-users") {
				if opts.Paths, err = allUsersHomes(env, a, opts.Paths); err != nil {
					return err
				}
			}
			return auditrun.Run(c.Context, auditEnv(env), a, opts, c.IsSet("mode"), readAuditOptions(c))
		},
	}
}

// allUsersHomes are the PATHs of audit --all-users (issue 23 item 5): the home directory of
// every user of the user database that holds agent a's default root, each audited on its own
// (agent.Audit.Homes: a directory holding an agent home); the entries skipped are said on
// standard error. Refused (usage error) when not root or with PATHs; an error when no home
// holds one.
func allUsersHomes(env *Env, a agent.Agent, paths []string) ([]string, error) {
	if len(paths) > 0 {
		return nil, usageErrorf("--all-users audits every user's home: give no PATH with it (nothing was done)")
	}
	if why := pipeline.AllUsersRefusal(); why != "" {
		return nil, usageErrorf("%s", why)
	}
	homes, skipped, err := pipeline.Homes(pipeline.PasswdFile, a.Core().ID)
	if err != nil {
		return nil, err
	}
	textreport.Problems(env.Out, env.Err, pipeline.SkippedNotes(skipped))
	if len(homes) == 0 {
		return nil, fmt.Errorf("--all-users: no home of %s holds %s's home (%d entries looked at)", pipeline.PasswdFile, a.Core().Name, len(skipped))
	}
	var out []string
	for _, h := range homes {
		fmt.Fprintf(env.Err, "home %s (%s, uid %d): %s\n", reports.Printable(h.Dir), h.User, h.UID, reports.Printable(strings.Join(h.Roots, ", ")))
		out = append(out, h.Dir)
	}
	return out, nil
}

// auditUsage is the usage of audit's shared input flag name as the default agent words it
// (agent.Audit.Usage).
func auditUsage(name string) string { return all.AuditOf(all.Default).Usage[name] }

// auditAgentFlags are --agent and the audit flags the rooms declare (agent.Audit.Options), in
// list order (new values each call: a repeatable value must not carry over from one command
// line to the next).
func auditAgentFlags() []cli.Flag {
	out := []cli.Flag{&cli.StringFlag{Name: "agent", Usage: "whose rules to audit: " + auditrun.Agents(func(a agent.Agent) string { return string(a.Core().ID) + " (" + all.AuditOf(a).Reads + ")" }) +
		" (default: with a PATH " + string(all.Default.Core().ID) + "; without, every agent whose home exists, each on its own)"}}
	for _, o := range all.SharedAuditOptions() {
		out = append(out, optionFlag(o))
	}
	return out
}

// readAuditOptions are the values of the rooms' audit options given (agent.Audit.Options).
func readAuditOptions(c *cli.Context) agent.Values {
	out := agent.Values{}
	readOptions(c, out, all.SharedAuditOptions())
	return out
}

// auditEnv is what an audit (auditrun) reads and writes of env.
func auditEnv(env *Env) *auditrun.Env {
	return &auditrun.Env{Getenv: env.Getenv, Environ: env.Environ, Home: env.Home, Now: env.Now, Err: env.Err, Version: version,
		WriteOutput: func(ctx context.Context, path string, data []byte) error { return writeOutput(ctx, env, path, data) },
		WriteFleet: func(ctx context.Context, out, command string, o *fleet.Origin, rows []fleetdb.Row, complete bool) error {
			return writeFleet(ctx, env, out, command, o, rows, complete)
		}}
}

// writeOutput writes a report to stdout ("-") or to the path the user named, by
// fileio.WriteOutputContext's rules (a regular file replaced atomically, a device, FIFO or /dev/stdout
// written through, a symbolic link followed, never replaced). A FIFO with no reader yet is
// waited for, and stderr says so (else the run looks hung).
func writeOutput(ctx context.Context, env *Env, path string, data []byte) error {
	waiting := fileio.OnWait(func(name string) {
		fmt.Fprintf(env.Err, "sessionfix: audit: waiting for a reader of the FIFO %s (Ctrl-C stops)\n", name)
	})
	if err := fileio.WriteOutputContext(ctx, env.Out, path, data, waiting); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}
