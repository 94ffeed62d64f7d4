package pipeline

import (
	"context"
	"slices"
	"time"

	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/runlog"
)

// RunFunc runs a pass over a pipeline's stores: (*Pipeline).Run, or a wrapper of it (the
// command's progress bar).
type RunFunc func(ctx context.Context, opt rewrite.ProcessOptions, each func(*rewrite.StoreResult) error) (*rewrite.Result, error)

// FixApplyOptions is the rewrite.ApplyOptions of a fix run over p: backups and the manifest
// under stateDir, the manifest's command "fix --apply" (with " --plan FILE", shell-quoted,
// when planFile is not ""), the roots p walked plus the targets of the symlinks it followed,
// now (the clock; nil: time.Now) and workers (0: the number of CPUs); the --profile the stores
// were read with is recorded for undo (issue 23 item 6).
func (p *Pipeline) FixApplyOptions(stateDir, planFile string, now func() time.Time, workers int) rewrite.ApplyOptions {
	command := "fix --apply"
	if planFile != "" {
		command += " --plan " + reports.ShellQuote(planFile)
	}
	aopt := rewrite.ApplyOptions{StateDir: stateDir, Command: command, Roots: append(slices.Clip(p.Roots), p.Found.LinkTargets()...), Now: now, Workers: workers}
	if p.Profile != nil {
		aopt.Profile = p.Profile
	}
	return aopt
}

// ApplyPlan is fix --apply's write pass over p: the state directory of aopt is checked
// usable first (runlog.CheckStateDir; its error is returned with a nil result, nothing
// read), each store of planned that p does not reach becomes an error of the run
// (ReportUnreached), then started is called (nil: none) and run rewrites every store with
// each called per store: as planned (a store that changed since is refused), or, planned
// nil, as planned now. The result names the run (ID, directory, files rewritten) also when
// run fails part way.
func (p *Pipeline) ApplyPlan(ctx context.Context, aopt rewrite.ApplyOptions, planned map[string]*rewrite.PlannedStore, started func(), run RunFunc, each func(*rewrite.StoreResult) error) (*rewrite.Result, error) {
	if err := runlog.CheckStateDir(aopt.StateDir); err != nil {
		return nil, err
	}
	if planned != nil {
		p.ReportUnreached(planned)
	}
	if started != nil {
		started()
	}
	if run == nil {
		run = p.Run
	}
	return run(ctx, rewrite.ProcessOptions{Apply: true, ApplyOptions: aopt, Planned: planned}, each)
}
