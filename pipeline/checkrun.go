package pipeline

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/check"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/pipeline/report"
	"github.com/sessionfix/sessionfix/provider"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

// Release is one agent's check --<agent>-version value (agent.SentAser's option): the release
// that resumes that agent's sessions ("" or "stored": the stored bytes are checked).
type Release struct {
	Agent agent.Agent
	Value string
}

// NewCheckResult is the empty check.Result of a check run with releases set (agent/all's
// order); a release its agent does not know is a *UsageError naming the option
// ("--acme-version: …").
func NewCheckResult(releases []Release) (*check.Result, error) {
	var res check.Result
	for _, r := range releases {
		if r.Value == "" || r.Value == "stored" {
			continue
		}
		if err := res.SetRelease(r.Agent.Core().ID, r.Value); err != nil {
			o := all.SentAsOptionOf(r.Agent)
			return nil, usagef("--%s: %v (%s)", o.Name, err, o.Hint)
		}
	}
	return &res, nil
}

// CheckStores runs check over p's stores with run (Pipeline.Run, or the command's with a
// progress bar; workers as --workers): every store read is checked against ps into res. It
// returns each store's agent id by path, for the fleet rows.
func CheckStores(ctx context.Context, run RunFunc, res *check.Result, ps []*provider.Provider, workers int) (map[string]string, error) {
	agents := map[string]string{} // store path → agent id
	_, err := run(ctx, rewrite.ProcessOptions{ApplyOptions: rewrite.ApplyOptions{Workers: workers}}, func(r *rewrite.StoreResult) error {
		if r.ScanErr == nil && r.Plan != nil {
			res.Store(r.Plan, ps)
			if r.Plan.Snap != nil {
				agents[r.Plan.Store.Ref().Path] = string(r.Plan.Snap.Agent)
			}
		}
		return nil
	})
	return agents, err
}

// CheckReportFor ends a check run over p: the declared names checked (the inventory's, unless
// --agent's own releases offer names for its configured tools, which replace them: what that
// agent sends), then the report, marked against --baseline (baseline: its path, "" without;
// inventory: --inventory) when given. An unreadable or unrecognised baseline is an error
// naming it.
func CheckReportFor(p *Pipeline, res *check.Result, ps []*provider.Provider, agentID, inventory, baseline string) (*report.CheckReport, error) {
	if ix := p.Policy.Index; ix != nil && (agentID == "" || len(p.Declared) == 0) {
		raws := ix.Raws()
		reg := make([]string, 0, len(raws))
		for _, r := range raws {
			reg = append(reg, mcpname.Normalize(r))
		}
		res.Declared("declared", slices.Compact(slices.Sorted(slices.Values(reg))), ps)
		res.Declared("declared-raw", raws, ps)
	}
	res.Offered(p.Declared, ps)
	rep := CheckReportOf(res, ps, p.Summary)
	if baseline != "" {
		known, err := loadCheckBaseline(baseline, inventory)
		if err != nil {
			return nil, err
		}
		rep.MarkBaseline(baseline, known, inventory)
	}
	return rep, nil
}

// loadCheckBaseline reads --baseline (a previous check --format json or sarif output:
// ReadCheckBaseline); an unreadable or unrecognised file is an error naming it.
func loadCheckBaseline(path, inventory string) (*reports.SARIFBaseline, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	known, err := report.ReadCheckBaseline(b, inventory)
	if err != nil {
		return nil, fmt.Errorf("--baseline %s: %w", path, err)
	}
	return known, nil
}

// LoadSARIFBaseline reads a SARIF log sessionfix wrote (check, scan, audit): the baseline of
// --baseline (reports.ReadSARIFBaseline). A file that is no SARIF log is an error naming it.
func LoadSARIFBaseline(path string) (*reports.SARIFBaseline, error) {
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

// CheckReportOf builds the report of a check run: res (check.Result of every store and the
// declared tools), the providers checked, and the run summary a (stores, problems,
// re-dispatches).
func CheckReportOf(res *check.Result, ps []*provider.Provider, a *Summary) *report.CheckReport {
	rep := &report.CheckReport{Stores: a.Report.Totals.Stores, Checked: res.Checked, Skipped: res.Skipped, Findings: []report.CheckFinding{}, Problems: a.Report.Problems,
		Redispatch: a.Report.Redispatch, Release: res.Release, ReleaseAgent: res.ReleaseAgent}
	if rep.Skipped == nil {
		rep.Skipped = map[string]int{}
	}
	if rep.Problems == nil {
		rep.Problems = []report.ProblemRow{}
	}
	for _, p := range ps {
		rep.Providers = append(rep.Providers, report.CheckProvider{ID: p.ID, Name: p.Name, Rule: p.Rule(), Unit: string(p.Unit), UnitWhy: p.UnitWhy,
			History: string(p.History), Source: p.Source, ErrorText: p.ErrorText, Verified: p.Verified,
			Now: res.Count(p.ID, false), AfterFix: res.Count(p.ID, true)})
	}
	conv := func(rs []check.Rejection) []report.CheckRejection {
		out := []report.CheckRejection{}
		for _, r := range rs {
			cr := report.CheckRejection{Provider: r.Provider.ID}
			for _, v := range r.Rules {
				cr.Rules = append(cr.Rules, report.CheckRule{Rule: v.Rule, Detail: v.Detail})
			}
			out = append(out, cr)
		}
		return out
	}
	distinct := map[string]bool{}
	for _, f := range res.Findings {
		if len(f.Now) > 0 {
			rep.Rejected++
			if !distinct[f.Name] {
				distinct[f.Name] = true
				rep.Distinct++
			}
		}
		if len(f.Then) > 0 {
			rep.RejectedAfterFix++
		}
		name := f.Name
		if f.Units != nil {
			name = (&store.Site{Name: f.Name, Units: f.Units}).DisplayName()
		}
		rep.Findings = append(rep.Findings, report.CheckFinding{Store: f.Store, Line: f.Loc.Line, Row: f.Loc.Row, Kind: f.Kind, Path: f.JSONPath,
			Name: name, Sent: f.Sent, Class: string(f.Class), Action: string(f.Action), After: f.After, Now: conv(f.Now), AfterFix: conv(f.Then),
			Release: f.Release, Note: f.Note, Fix: f.Fix})
	}
	return rep
}
