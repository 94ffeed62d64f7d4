package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/check"
	"github.com/sessionfix/sessionfix/fleet"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/provider"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
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
	Releases []agentRelease
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
and "after fix": whether the name sessionfix fix would write passes every provider (` + defaultHelp().Repair + `
can still fail Kimi's first-letter rule).` + checkHelp() + `
Names no provider receives (telemetry, usage-record keys, bridge-call arguments, raw identity
records) are counted, not checked. Never writes anything. docs/providers.md lists the table and
its sources.

EXAMPLES:
   sessionfix check --provider all
   sessionfix check --provider openai-chat,kimi ` + defaultHelp().Dir + `
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
	if err := usage.Format(opts.Format, "table", "json", "sarif", "sqlite"); err != nil {
		return err
	}
	if err := checkSQLiteOut(opts.Format, opts.Out); err != nil {
		return err
	}
	if err := usage.Workers(opts.Workers); err != nil {
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
	agents := map[string]string{} // store path → agent id, for the fleet rows
	var res check.Result
	for _, r := range opts.Releases {
		if r.Value == "" || r.Value == "stored" {
			continue
		}
		if err := res.SetRelease(r.Agent.Core().ID, r.Value); err != nil {
			return usageErrorf("--%s: %v (%s)", all.SentAsOptionOf(r.Agent).Name, err, all.SentAsOptionOf(r.Agent).Hint)
		}
	}
	if _, err := p.run(ctx, rewrite.ProcessOptions{ApplyOptions: rewrite.ApplyOptions{Workers: opts.Workers}}, func(r *rewrite.StoreResult) error {
		if r.ScanErr == nil && r.Plan != nil {
			res.Store(r.Plan, ps)
			if r.Plan.Snap != nil {
				agents[r.Plan.Store.Ref().Path] = string(r.Plan.Snap.Agent)
			}
		}
		return nil
	}); err != nil {
		return jsonErrorAt(env, opts.Format, origin.SARIF("check", nil, nil, nil), err)
	}
	// The names --agent's own releases offer for its configured tools replace the inventory's
	// names in the default naming (they are what that agent sends).
	if ix := p.Policy.Index; ix != nil && (opts.Common.Agent == "" || len(p.Declared) == 0) {
		raws := ix.Raws()
		reg := make([]string, 0, len(raws))
		for _, r := range raws {
			reg = append(reg, mcpname.Normalize(r))
		}
		res.Declared("declared", slices.Compact(slices.Sorted(slices.Values(reg))), ps)
		res.Declared("declared-raw", raws, ps)
	}
	res.Offered(p.Declared, ps)
	rep := pipeline.CheckReportOf(&res, ps, p.Summary)
	if opts.Baseline != "" {
		known, err := loadCheckBaseline(opts.Baseline, opts.Common.Inventory)
		if err != nil {
			return err
		}
		rep.MarkBaseline(opts.Baseline, known, opts.Common.Inventory)
	}
	switch opts.Format {
	case "json":
		if err := reports.WriteJSON(env.Out, rep); err != nil {
			return err
		}
		writeProblems(env, rep.Problems)
	case "sarif":
		rules, results := rep.SARIF(opts.Common.Inventory)
		if rep.Known != nil {
			results, _ = rep.Known.Mark(results)
		}
		inv := sarifInvocation(rep.Problems, p.Summary.Failed || p.Summary.InUse > 0)
		if err := writeSARIF(env, origin.SARIF("check", rules, results, inv)); err != nil {
			return err
		}
		writeProblems(env, rep.Problems)
	case "sqlite":
		_, results := rep.SARIF(opts.Common.Inventory)
		for i := range results {
			if results[i].Finding.Agent == "" {
				results[i].Finding.Agent = agents[results[i].Finding.Store]
			}
		}
		complete := !p.Summary.Failed && p.Summary.InUse == 0
		if err := writeFleet(ctx, env, opts.Out, "check", origin, origin.Rows(results, "", nil), complete); err != nil {
			return err
		}
		writeProblems(env, rep.Problems)
	default:
		writeCheckText(env.Out, rep, &res)
		if len(p.Summary.Report.Homes) > 0 {
			fmt.Fprintln(env.Out)
			writeHomes(env.Out, &p.Summary.Report, nil, false)
		}
		if l := pipeline.RedispatchLine(rep.Redispatch); l != "" {
			fmt.Fprintln(env.Out, l)
		}
		writeProblems(env, rep.Problems)
	}
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

// loadCheckBaseline reads --baseline (a previous check --format json or sarif output:
// pipeline.ReadCheckBaseline); an unreadable or unrecognised file is an error naming it.
func loadCheckBaseline(path, inventory string) (*reports.SARIFBaseline, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	known, err := pipeline.ReadCheckBaseline(b, inventory)
	if err != nil {
		return nil, fmt.Errorf("--baseline %s: %w", path, err)
	}
	return known, nil
}

// loadSARIFBaseline reads a SARIF log sessionfix wrote (check, scan, audit): the baseline of
// --baseline (reports.ReadSARIFBaseline). A file that is no SARIF log is an error naming it.
func loadSARIFBaseline(path string) (*reports.SARIFBaseline, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	known, err := reports.ReadSARIFBaseline(b)
	if err != nil {
		return nil, fmt.Errorf("--baseline %s: not a SARIF output (--format sarif): %v", path, err)
	}
	return known, nil
}

// writeCheckText prints the provider table, then per store (session) each distinct rejected
// name with its records, rules and after-fix verdict, then the providers' error texts.
// checkListed and checkWhere bound check's text output (issue 23 item 11: it grows with what
// it has to say, not with the size of the stores): at most checkListed rejected names (per
// store), each with at most checkWhere lines or rows; --format json has every finding.
const (
	checkListed = 100
	checkWhere  = 10
)

func writeCheckText(w io.Writer, rep *pipeline.CheckReport, res *check.Result) {
	ids := make([]string, len(rep.Providers))
	for i, p := range rep.Providers {
		ids[i] = p.ID
	}
	fmt.Fprintf(w, "checked %s in %s against %s (%s)\n", plural(rep.Checked, "name"), plural(rep.Stores, "store"),
		plural(len(rep.Providers), "provider"), strings.Join(ids, ", "))
	if len(rep.Skipped) > 0 {
		var parts []string
		total := 0
		for _, k := range slices.Sorted(maps.Keys(rep.Skipped)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, rep.Skipped[k]))
			total += rep.Skipped[k]
		}
		fmt.Fprintf(w, "%s not sent to any provider, not checked (%s)\n", plural(total, "site"), strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	t := &reports.Table{Columns: []string{"provider", "rejects", "after fix", "history", "rule"}}
	for _, p := range rep.Providers {
		t.Add(p.ID, fmt.Sprint(p.Now), fmt.Sprint(p.AfterFix), p.History, p.Rule)
	}
	_ = reports.WriteText(w, t)

	type key struct{ store, name string }
	type entry struct {
		f     pipeline.CheckFinding
		where []string
	}
	var order []key
	byKey := map[key]*entry{}
	for _, f := range rep.Findings {
		if len(f.Now) == 0 && len(f.AfterFix) == 0 {
			continue
		}
		k := key{f.Store, f.Name + "\x00" + f.After}
		e := byKey[k]
		if e == nil {
			e = &entry{f: f}
			byKey[k] = e
			order = append(order, k)
		}
		var at string
		switch {
		case f.Row != "":
			at = "row " + f.Row
		case f.Line > 0:
			at = fmt.Sprintf("line %d", f.Line)
		}
		if at != "" && !slices.Contains(e.where, at) {
			e.where = append(e.where, at)
		}
	}
	last := "\x00"
	for i, k := range order {
		if i == checkListed {
			fmt.Fprintf(w, "\n… and %s not listed (--format json lists every finding)\n", plural(len(order)-i, "more rejected name"))
			break
		}
		e := byKey[k]
		if k.store != last {
			last = k.store
			fmt.Fprintln(w)
			if k.store == "" {
				fmt.Fprintln(w, "declared tools (--inventory):")
			} else {
				fmt.Fprintln(w, reports.Printable(k.store)+":")
			}
		}
		f := e.f
		label := f.Name
		if f.Kind == "declared-raw" {
			label += " (raw identity, as the server declares it)"
		}
		if f.Release != "" {
			label += fmt.Sprintf(" (%s offers %s so: %s)", f.Release, f.Path, f.Note)
		}
		if f.Sent != "" {
			label += fmt.Sprintf(" (sent as %s by %s %s%s)", f.Sent, releaseAgentName(res), res.Release, exceptHelp(res))
		}
		if len(f.Now) > 0 {
			at := ""
			switch n := len(e.where); {
			case n > checkWhere:
				at = fmt.Sprintf(" at %s, … (%d more)", strings.Join(e.where[:checkWhere], ", "), n-checkWhere)
			case n > 0:
				at = " at " + strings.Join(e.where, ", ")
			}
			fmt.Fprintf(w, "  %s\n    would be rejected by %s%s\n", reports.Printable(label), pipeline.RejectedIDs(f.Now), at)
			writeRuleLines(w, f.Now)
		} else {
			fmt.Fprintf(w, "  %s\n    accepted now\n", reports.Printable(label))
		}
		switch {
		case f.Action == string(naming.ActRewrite) && len(f.AfterFix) == 0:
			fmt.Fprintf(w, "    after fix: %s passes every provider checked\n", reports.Printable(f.After))
		case f.Action == string(naming.ActRewrite):
			fmt.Fprintf(w, "    after fix: %s is still rejected by %s\n", reports.Printable(f.After), pipeline.RejectedIDs(f.AfterFix))
			writeRuleLines(w, f.AfterFix)
		case f.Fix != "":
			fmt.Fprintf(w, "    after fix: unchanged (fix never renames a declared tool; %s)\n", f.Fix)
		case f.Kind == "declared" || f.Kind == "declared-raw":
			fmt.Fprintln(w, "    after fix: unchanged (fix never renames a declared tool; rename it at its server)")
		default:
			fmt.Fprintf(w, "    after fix: unchanged (class %s: fix does not rename it), still rejected\n", f.Class)
		}
	}
	var texts []string
	for _, p := range rep.Providers {
		if p.Now+p.AfterFix > 0 && p.ErrorText != "" {
			texts = append(texts, fmt.Sprintf("  %s: %q", p.ID, p.ErrorText))
		}
	}
	if len(texts) > 0 {
		fmt.Fprintln(w, "\nwhat the provider answers (quoted from its source; --format json gives the sources):")
		for _, s := range texts {
			fmt.Fprintln(w, s)
		}
	}
	pipeline.WriteRedispatchText(w, rep.Redispatch)
	fmt.Fprintln(w)
	if rep.Rejected == 0 {
		fmt.Fprintf(w, "no name is rejected by %s\n", strings.Join(ids, ", "))
		return
	}
	if b := rep.Baseline; b != nil {
		fmt.Fprintf(w, "%s (%s) rejected now, %d of them new since the baseline %s (%d known fingerprints: provider, rule, name, store); %s still rejected after fix\n",
			plural(rep.Rejected, "name site"), plural(rep.Distinct, "distinct name"), b.New, b.File, b.Known, plural(rep.RejectedAfterFix, "name site"))
		return
	}
	fmt.Fprintf(w, "%s (%s) rejected now; %s still rejected after fix (exit %d)\n",
		plural(rep.Rejected, "name site"), plural(rep.Distinct, "distinct name"), plural(rep.RejectedAfterFix, "name site"), exitcode.Finding)
}

// writeRuleLines prints the broken rules, one line per distinct rule text with the providers
// that give it ("openai-chat, bedrock: pattern: does not match [a-zA-Z0-9_-]+").
func writeRuleLines(w io.Writer, rs []pipeline.CheckRejection) {
	var order []string
	by := map[string][]string{}
	for _, r := range rs {
		d := ruleDetails(r)
		if by[d] == nil {
			order = append(order, d)
		}
		by[d] = append(by[d], r.Provider)
	}
	for _, d := range order {
		fmt.Fprintf(w, "      %s: %s\n", strings.Join(by[d], ", "), d)
	}
}

func ruleDetails(r pipeline.CheckRejection) string {
	parts := make([]string, len(r.Rules))
	for i, v := range r.Rules {
		parts[i] = v.Rule + ": " + v.Detail
	}
	return strings.Join(parts, "; ")
}

// agentRelease is one agent's check --<agent>-version value.
type agentRelease struct {
	Agent agent.Agent
	Value string
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
func readReleases(c *cli.Context) []agentRelease {
	var out []agentRelease
	for _, a := range releaseAgents() {
		out = append(out, agentRelease{Agent: a, Value: c.String(all.SentAsOptionOf(a).Name)})
	}
	return out
}

// releaseAgentName is the product name of the agent whose release check checked.
func releaseAgentName(res *check.Result) string {
	if a := all.Lookup(res.ReleaseAgent); a != nil {
		return a.Core().Name
	}
	return string(res.ReleaseAgent)
}

// exceptHelp is ", except to P" for the providers that still receive the stored names
// (agent.Sending.Verbatim), or "".
func exceptHelp(res *check.Result) string {
	if v := res.Verbatim(); len(v) > 0 {
		return ", except to " + strings.Join(v, ", ")
	}
	return ""
}
