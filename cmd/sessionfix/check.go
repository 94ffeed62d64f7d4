package main

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/pipeline/report"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/check"
	"github.com/sessionfix/sessionfix/fleet"
	"github.com/sessionfix/sessionfix/helptext"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/provider"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/textreport"
)

type checkOptions struct {
	Paths     []string
	Providers string
	Format    string
	Workers   int
	Common    pipeline.Options
	// Baseline is --baseline: a previous check output (--format json or sarif); only findings
	// not in it make the run exit 5.
	Baseline string
	// Out is --out (the fleet database of --format sqlite); Host and User are --host and
	// --user ("": the host name, each home's owner).
	Out, Host, User string
	// Releases are the agents' check --<agent>-version values (agent.Agent.SentAsOption), in
	// agent/all's order: the release that resumes that agent's sessions ("" or "stored": the
	// stored bytes are checked).
	Releases []pipeline.Release
}

func newCheckCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "say which model providers reject the stored and declared tool names (read-only)",
		ArgsUsage: "[PATH...]",
		Description: `Reads the same stores as scan (same PATH defaults and flags) and checks every tool name
stored in a session's history, and every declared tool of --inventory, against the rules of
the providers given by --provider: IDs of the built-in table (` + strings.Join(provider.IDs(), ", ") + `),
"all", or a profile file of a gateway of one's own (--provider ./my-gateway.json; docs/providers.md).
For each rejected name: the store and line (or row) of every record holding it ("would be
rejected by bedrock at line 12"), the rule it breaks and the error text the provider answers,
and "after fix": whether the name sessionfix fix would write passes every provider (` + helptext.Default().Repair + `
can still fail Kimi's first-letter rule).` + helptext.CheckSentences() + `
Names no provider receives (telemetry, usage-record keys, bridge-call arguments, raw identity
records) are counted, not checked. Never writes anything. docs/providers.md lists the table and
its sources.

EXAMPLES:
   sessionfix check --provider all
   sessionfix check --provider openai-chat,kimi ` + helptext.Default().Dir + `
   sessionfix check --provider ./my-gateway.json --inventory tools.json --format json
   sessionfix check --provider all --format sarif > check.sarif
   sessionfix check --provider all --baseline check.sarif`,
		Flags: append(append(planFlags(),
			&cli.StringFlag{Name: "provider", Usage: "providers to check against: comma-separated IDs, all, or a profile file (required)"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output format: table, json, sarif (SARIF 2.1.0 for code scanning: one result per name site, provider and rule), or sqlite (with --out: the fleet database, one row per such result; docs/fleet.md)"},
			fleetOutFlag(),
			workersFlag(),
			fileFlag("baseline", "a previous check output (--format json or sarif): exit 5 only for findings not in it (new since the baseline)"),
		), append(fleetFlags(), releaseFlags()...)...),
		Action: func(c *cli.Context) error {
			return runCheck(c.Context, env, checkOptions{Paths: c.Args().Slice(), Providers: c.String("provider"),
				Format: c.String("format"), Workers: c.Int("workers"), Common: readPlanFlags(c), Baseline: c.String("baseline"), Releases: readReleases(c),
				Out: c.String("out"), Host: c.String("host"), User: c.String("user")})
		},
	}
}

func runCheck(ctx context.Context, env *Env, opts checkOptions) error {
	if err := cmp.Or(usage.Format(opts.Format, "table", "json", "sarif", "sqlite"), checkSQLiteOut(opts.Format, opts.Out), usage.Workers(opts.Workers)); err != nil {
		return err
	}
	ps, err := provider.Resolve(opts.Providers)
	if err != nil {
		return usageErrorf("--provider: %v", err)
	}
	if err := opts.Common.Validate(); err != nil {
		return err
	}
	origin, err := fleet.NewOrigin(opts.Host, opts.User, opts.Paths, env.Home)
	if err != nil {
		return err
	}
	p, err := newPipeline(ctx, env, opts.Paths, opts.Common)
	if err != nil {
		return jsonErrorAt(env, opts.Format, origin.SARIF("check", nil, nil, nil), err)
	}
	if len(opts.Paths) == 0 { // the default roots: $HOME's
		if origin, err = fleet.NewOrigin(opts.Host, opts.User, p.Roots, env.Home); err != nil {
			return err
		}
	}
	res, err := pipeline.NewCheckResult(opts.Releases)
	if err != nil {
		return err
	}
	agents, err := pipeline.CheckStores(ctx, p.run, res, ps, opts.Workers)
	if err != nil {
		return jsonErrorAt(env, opts.Format, origin.SARIF("check", nil, nil, nil), err)
	}
	rep, err := pipeline.CheckReportFor(p.Pipeline, res, ps, opts.Common.Agent, opts.Common.Inventory, opts.Baseline)
	if err != nil {
		return err
	}
	if err := writeCheck(ctx, env, opts, p, origin, rep, res, agents); err != nil {
		return err
	}
	textreport.Problems(env.Out, env.Err, rep.Problems)
	switch {
	case p.Summary.InUse > 0:
		return withCode(exitcode.InUse)
	case p.Summary.Failed:
		return withCode(exitcode.Partial)
	case rep.Baseline != nil:
		if rep.Baseline.New > 0 {
			fmt.Fprintf(env.Err, "check: %s rejected that %s not in the baseline %s\n", plural(rep.Baseline.New, "name site"), map[bool]string{true: "is", false: "are"}[rep.Baseline.New == 1], opts.Baseline)
			return withCode(exitcode.Finding)
		}
	case rep.Rejected > 0:
		fmt.Fprintf(env.Err, "check: %s (%s) rejected by at least one provider\n", plural(rep.Rejected, "name site"), plural(rep.Distinct, "distinct name"))
		return withCode(exitcode.Finding)
	}
	return nil
}

// writeCheck writes check's report in --format to standard output (the fleet database with
// sqlite: agents are the stores' agents by path).
func writeCheck(ctx context.Context, env *Env, opts checkOptions, p *pipelineRun, origin *fleet.Origin, rep *report.CheckReport, res *check.Result, agents map[string]string) error {
	switch opts.Format {
	case "json":
		return reports.WriteJSON(env.Out, rep)
	case "sarif":
		rules, results := rep.SARIF(opts.Common.Inventory)
		if rep.Known != nil {
			results, _ = rep.Known.Mark(results)
		}
		inv := textreport.SARIFInvocation(rep.Problems, p.Summary.Failed || p.Summary.InUse > 0)
		return writeSARIF(env, origin.SARIF("check", rules, results, inv))
	case "sqlite":
		_, results := rep.SARIF(opts.Common.Inventory)
		for i := range results {
			if results[i].Finding.Agent == "" {
				results[i].Finding.Agent = agents[results[i].Finding.Store]
			}
		}
		complete := !p.Summary.Failed && p.Summary.InUse == 0
		return writeFleet(ctx, env, opts.Out, "check", origin, origin.Rows(results, "", nil), complete)
	}
	textreport.Check(env.Out, rep, res)
	if len(p.Summary.Report.Homes) > 0 {
		fmt.Fprintln(env.Out)
		textreport.Homes(env.Out, &p.Summary.Report, nil, false)
	}
	if l := report.RedispatchLine(rep.Redispatch); l != "" {
		fmt.Fprintln(env.Out, l)
	}
	return nil
}

// releaseAgents are the agents with a check --<agent>-version flag, in agent/all's order.
func releaseAgents() []agent.Agent {
	var out []agent.Agent
	for _, a := range all.Agents {
		if all.SentAsOptionOf(a) != nil {
			out = append(out, a)
		}
	}
	return out
}

// releaseFlags are check's --<agent>-version flags (agent.Agent.SentAsOption).
func releaseFlags() []cli.Flag {
	var out []cli.Flag
	for _, a := range releaseAgents() {
		out = append(out, optionFlag(*all.SentAsOptionOf(a)))
	}
	return out
}

// readReleases are the values of check's --<agent>-version flags.
func readReleases(c *cli.Context) []pipeline.Release {
	var out []pipeline.Release
	for _, a := range releaseAgents() {
		out = append(out, pipeline.Release{Agent: a, Value: c.String(all.SentAsOptionOf(a).Name)})
	}
	return out
}
