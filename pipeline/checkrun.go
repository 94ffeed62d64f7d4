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
	"github.com/sessionfix/sessionfix/provider"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
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
func CheckReportFor(p *Pipeline, res *check.Result, ps []*provider.Provider, agentID, inventory, baseline string) (*CheckReport, error) {
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
	known, err := ReadCheckBaseline(b, inventory)
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
