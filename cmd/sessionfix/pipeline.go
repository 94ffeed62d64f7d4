package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
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
		fileFlag("inventory", inventoryUsage()),
		&cli.StringFlag{Name: "agent", Usage: "read the stores as this agent's: " + orList(selectableAgents()) + " (default: detect each file by name and content; also picks the default root); a file whose content says another agent is named in a warning",
			Action: checkAgentOptions},
	}, agentFlags("discover")...), append([]cli.Flag{
		&cli.BoolFlag{Name: "discover", Usage: discoverUsage()},
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

// orList is "a, b or c".
func orList(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// agentFlags are the agents' options listed before the general flag before ("" = after all
// of them), as urfave/cli flags; each call makes new flag values (a repeatable one keeps its
// values in the flag). An option two rooms declare (the same name: one file format both agents
// read) is one flag, made from the first declaration in list order, its usage followed by the
// others' ("; also " …); every declaring room reads its values.
func agentFlags(before string) []cli.Flag {
	var out []cli.Flag
	for _, o := range sharedOptions() {
		if o.Before != before {
			continue
		}
		out = append(out, optionFlag(o))
	}
	return out
}

// sharedOptions are the agents' options in list order, one per name (agentFlags).
func sharedOptions() []agent.Option {
	var out []agent.Option
	at := map[string]int{}
	for _, a := range all.Agents {
		for _, o := range all.OptionsOf(a) {
			if i, ok := at[o.Name]; ok {
				out[i].Usage += "; also " + o.Usage
				continue
			}
			at[o.Name] = len(out)
			out = append(out, o)
		}
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
	readOptions(c, out, sharedOptions())
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

// run is pipeline.Run with a progress bar on a terminal (newProgress).
func (p *pipelineRun) run(ctx context.Context, opt rewrite.ProcessOptions, each func(*rewrite.StoreResult) error) (*rewrite.Result, error) {
	bar := newProgress(p.env, opt.Apply, len(p.Found.Targets), p.Found.TotalSize())
	if bar != nil {
		opt.Progress = bar.addBytes
		inner := each
		each = func(r *rewrite.StoreResult) error {
			bar.storeDone()
			if inner != nil {
				return inner(r)
			}
			return nil
		}
	}
	res, err := p.Pipeline.Run(ctx, opt, each)
	if bar != nil {
		bar.finish()
	}
	return res, err
}

// checkFailOn validates --fail-on of scan and fix: "kept" is the only finding.
func checkFailOn(val string) (bool, error) {
	kept := false
	if val != "" {
		for _, f := range strings.Split(val, ",") {
			switch strings.TrimSpace(f) {
			case "kept":
				kept = true
			case "":
			default:
				return false, usageErrorf("--fail-on takes kept, not %q", f)
			}
		}
	}
	return kept, nil
}

// failOnFlag is --fail-on of scan and fix.
func failOnFlag() cli.Flag {
	return &cli.StringFlag{Name: "fail-on", Usage: "kept: exit 5 when a name a provider rejects is kept (for scheduled jobs)"}
}

// endCode is the exit of a scan or fix run (Summary.ExitCode: 4 wins over 3, which wins
// over a --fail-on kept finding, 5); the finding is said on standard error. applied: fix
// --apply (a store it failed to write is 3).
func endCode(a *aggregate, env *Env, cmd string, applied, failOnKept bool) error {
	return exitWith(a, env, cmd, a.ExitCode(applied, failOnKept))
}

// exitWith ends a scan or fix run with code (a's exit status), saying a --fail-on kept finding.
func exitWith(a *aggregate, env *Env, cmd string, code int) error {
	switch code {
	case 0:
		return nil
	case exitcode.Finding:
		fmt.Fprintf(env.Err, "%s: --fail-on kept: %s a provider rejects kept\n", cmd, plural(a.Report.Totals.KeptRejected, "name"))
	}
	return withCode(code)
}

// writeAgentInfo prints what the agents' stores were planned with (their configs and
// inventories; nothing when no agent said anything), in all.InfoOrder.
func writeAgentInfo(w io.Writer, rep *scanReport) {
	if rep.Agents.Len() > 0 {
		fmt.Fprintln(w)
	}
	for _, id := range all.InfoOrder() {
		rows := rep.Agents.Of(id)
		for _, r := range rows {
			fmt.Fprintln(w, reports.Printable(r.Text(len(rows) > 1)))
		}
	}
}

// writeHomes prints, for a run with --all-users, one line per home it covered (issue 23 item
// 5): the home and its user, the stores found under the agents' roots there, their names to
// rewrite (applied: rewritten; a store the apply skipped or failed to write is not counted)
// and kept, and the roots.
func writeHomes(w io.Writer, rep *scanReport, skipped []pipeline.SkippedRow, applied bool) {
	if len(rep.Homes) == 0 {
		return
	}
	fmt.Fprintf(w, "%s (--all-users):\n", plural(len(rep.Homes), "home"))
	verb := "to rewrite"
	if applied {
		verb = "rewritten"
	}
	notDone := map[string]bool{}
	for _, sk := range skipped {
		notDone[sk.Path] = true
	}
	for _, h := range rep.Homes {
		n := h.Rewrite
		for _, r := range rep.Stores {
			if notDone[r.Path] && pipeline.UnderHome(r.Path, h) {
				n -= r.Rewrite
			}
		}
		line := fmt.Sprintf("  %s (%s, uid %d): %s, %d names %s, %d kept", h.Dir, h.User, h.UID, plural(h.Stores, "store"), n, verb, h.Kept)
		if h.Problems > 0 {
			line += ", " + plural(h.Problems, "problem")
		}
		fmt.Fprintln(w, reports.Printable(line+"; "+strings.Join(h.Roots, ", ")))
	}
	fmt.Fprintln(w)
}

// writeProblems prints the problems and warnings of a run on standard error (issue 8 item 7:
// the report on standard output stays machine-clean, also with --format json, which carries
// them as members too), then its notes: rows of severity info (sessionfix's own state
// directory met in a walk, say) are not problems and are not counted as such, each is a
// "note: " line (issue 23 item 11: "1 problem" was printed after every run over ~). Standard
// output is flushed first, so on a terminal they appear after the tables printed so far.
func writeProblems(env *Env, probs []problemRow) {
	if len(probs) == 0 {
		return
	}
	flushOut(env)
	w := env.Err
	var notes []problemRow
	var real []problemRow
	for _, p := range probs {
		if p.Severity == string(store.SevInfo) {
			notes = append(notes, p)
		} else {
			real = append(real, p)
		}
	}
	if len(real) > 0 {
		fmt.Fprintf(w, "%s:\n", plural(len(real), "problem"))
		for _, p := range real {
			fmt.Fprintf(w, "  %s\n", reports.Printable(p.String()))
		}
	}
	for _, p := range notes {
		fmt.Fprintf(w, "note: %s\n", reports.Printable(strings.Replace(p.String(), ": info: ", ": ", 1)))
	}
}

// workersFlag is --workers of scan and fix; the help shows the one real default.
func workersFlag() cli.Flag {
	return &cli.IntFlag{Name: "workers", Usage: "parallel readers", DefaultText: "the number of CPUs, at most 8"}
}

// summaryStores is how many stores scan and fix list one by one: above it, text output is a
// summary (per agent and store kind, the largest stores, old → new counts) and -v or
// --format json gives every store (issue 8: 5,000 sessions printed 115,002 plan lines).
const summaryStores = 20

// summaryRows caps each name table of the summary (old → new, kept); the JSON has them all.
const summaryRows = 50

// writeSummary prints the bounded summary of a large run: stores per agent and kind, the
// summaryStores largest stores, and old → new counts and kept names (each table at most
// summaryRows rows; "-v" or --format json lists everything). how names the flag that lists
// every store ("-v").
func writeSummary(w io.Writer, rep *scanReport, how string) error {
	fmt.Fprintln(w, "stores by agent and kind:")
	if err := reports.WriteText(w, pipeline.KindTable(rep)); err != nil {
		return err
	}
	if len(rep.Stores) > summaryStores {
		fmt.Fprintf(w, "\nthe %d largest of %s (%s or --format json lists every store):\n", summaryStores, plural(len(rep.Stores), "store"), how)
	} else {
		fmt.Fprintln(w, "\nstores:")
	}
	if err := reports.WriteText(w, pipeline.StoreTable(pipeline.LargestStores(rep.Stores, summaryStores))); err != nil {
		return err
	}
	if len(rep.Renames) > 0 {
		fmt.Fprintln(w, "\nold → new (names, over all stores):")
		if err := reports.WriteText(w, pipeline.RenameTable(rep.Renames, nil, summaryRows)); err != nil {
			return err
		}
		if n := len(rep.Renames) - summaryRows; n > 0 {
			fmt.Fprintf(w, "… and %s more (--format json lists them)\n", plural(n, "distinct name"))
		}
	}
	if len(rep.Kept) > 0 {
		fmt.Fprintln(w, "\nkept names, and why:")
		if err := reports.WriteText(w, pipeline.KeptTable(rep.Kept, summaryRows)); err != nil {
			return err
		}
		if n := len(rep.Kept) - summaryRows; n > 0 {
			fmt.Fprintf(w, "… and %s more (--format json lists them)\n", plural(n, "distinct name"))
		}
	}
	return nil
}
